"""spec.relay.caBundle, pure: which documents can be the relay's CA bundle, what the operator's
TLS context trusts, which field a TLS failure names, and the shell that appends the CA to the
agents' CA file (run here against a directory, exactly as the pod runs it against /opt/buzz).
tests/integration/relay/test_relay_tls.py does the same over real TLS to the dev relay."""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path

import pytest
from buzz_operator.pod.relay_ca import INSTALL_RELAY_CA, combine_script
from buzz_operator.relay.tenant_models import RelayTarget
from buzz_operator.relay.tls import MAX_BUNDLE_BYTES, ca_bundle_problem, client_context, describe_tls_failure

# A self-signed CA certificate made for these tests (its key was thrown away): public data only.
TEST_CA = """-----BEGIN CERTIFICATE-----
MIIBoTCCAUegAwIBAgIUXjXcrRPdoHTU6TuLA7Ccsf8d8zswCgYIKoZIzj0EAwIw
JTEjMCEGA1UEAwwaYnV6ei1vcGVyYXRvciB1bml0LXRlc3QgQ0EwIBcNMjYxMjAx
MTIzNTA3WhgPMjEyNjExMDcxMjM1MDdaMCUxIzAhBgNVBAMMGmJ1enotb3BlcmF0
b3IgdW5pdC10ZXN0IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEr25zwxvF
xQIYJCxQGqyuraA4ss5XiM+lNUjU+WdSsYVLee4iapTaBkw9Qo3+CI50WMcxseHY
QZxZFN2TBTgH9aNTMFEwHQYDVR0OBBYEFBHfjGGHJoNF0DlcK+qlivGJGRDSMB8G
A1UdIwQYMBaAFBHfjGGHJoNF0DlcK+qlivGJGRDSMA8GA1UdEwEB/wQFMAMBAf8w
CgYIKoZIzj0EAwIDSAAwRQIgSiN41FvyCIrDDNBon1TcgPqoCTPxNPqSIXBiD6bP
RksCIQD2/GvmUO3jHBDdBS+miIyJxlhyAYUQuTiFI58aC3/0WA==
-----END CERTIFICATE-----
"""
KEY_BLOCK = "-----BEGIN " + "PRIVATE KEY-----\nbm90IGEga2V5\n-----END " + "PRIVATE KEY-----\n"


def test_a_ca_certificate_is_a_bundle() -> None:
    assert ca_bundle_problem(TEST_CA) is None
    assert ca_bundle_problem(TEST_CA + TEST_CA.replace("\n", "\r\n")) is None  # CRLF and repeats load too


@pytest.mark.parametrize(
    ("pem", "says"),
    [
        ("", "no PEM certificate"),
        ("not a certificate\n", "no PEM certificate"),
        ("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "OpenSSL can load"),
        (TEST_CA + KEY_BLOCK, "private key"),
        (KEY_BLOCK.replace("PRIVATE", "EC PRIVATE"), "private key"),
        (TEST_CA * (MAX_BUNDLE_BYTES // len(TEST_CA) + 1), "larger than"),
    ],
)
def test_what_cannot_be_a_bundle_is_named_without_quoting_it(pem: str, says: str) -> None:
    problem = ca_bundle_problem(pem)
    assert problem is not None and says in problem
    assert "bm90IGEga2V5" not in problem  # never the document itself


def test_the_operator_trusts_the_public_roots_and_the_bundle() -> None:
    public = client_context(None).cert_store_stats()["x509_ca"]
    with_ca = client_context(TEST_CA)
    assert with_ca.cert_store_stats()["x509_ca"] == public + 1
    assert with_ca.verify_mode is ssl.CERT_REQUIRED and with_ca.check_hostname
    assert client_context(TEST_CA) is with_ca  # one context per bundle, not one per connection


def test_the_target_speaks_tls_only_to_a_wss_relay() -> None:
    plain = RelayTarget("ws://localhost:3600", "0" * 64, "postgresql://x@h/d", connect_url="ws://10.96.0.9:3600")
    assert plain.tls is None
    # loopback over TLS: the operator dials the ClusterIP, and checks the certificate for the URL's host
    loopback = RelayTarget("wss://localhost:3600", "0" * 64, "postgresql://x@h/d",
                           connect_url="wss://10.96.0.9:3600", ca_pem=TEST_CA)
    assert loopback.tls is client_context(TEST_CA) and loopback.server_name == "localhost"
    direct = RelayTarget("wss://127.0.0.1:8443/relay", "0" * 64, "postgresql://x@h/d")
    assert direct.tls is client_context(None)
    assert direct.server_name == "127.0.0.1"  # as spelled: a certificate for 127.0.0.1 is not one for localhost
    assert "BEGIN" not in repr(loopback)


def test_tls_failures_name_the_field_to_fix() -> None:
    unverified = ssl.SSLCertVerificationError(1, "certificate verify failed")
    unverified.verify_message = "unable to get local issuer certificate"
    message = describe_tls_failure(unverified, "relay.example.com", has_ca_bundle=False)
    assert message.startswith("spec.relay.caBundle: ") and "unable to get local issuer" in message
    assert "a private CA goes in spec.relay.caBundle" in message
    assert "spec.relay.caBundle" in describe_tls_failure(unverified, "relay.example.com", has_ca_bundle=True)
    plain_server = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")
    assert describe_tls_failure(plain_server, "localhost:3600", has_ca_bundle=False).startswith("spec.relay.url: ")


def _certificates(path: Path) -> int:
    return path.read_text().count("-----BEGIN CERTIFICATE-----")


def _loaded(path: Path) -> int:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cafile=str(path))
    return int(context.cert_store_stats()["x509"])


def _install(root: Path) -> str:
    done = subprocess.run(["sh", "-c", combine_script(str(root))], capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def test_the_agents_ca_file_gains_the_ca_and_keeps_the_public_roots(tmp_path: Path) -> None:
    public = Path("/etc/ssl/certs/ca-certificates.crt").read_text()
    bundle = tmp_path / "ca-certificates.crt"
    bundle.write_text(public.rstrip("\n"))  # a last line without newline must not glue END to BEGIN
    (tmp_path / "relay-ca.crt").write_text(TEST_CA)
    roots = public.count("-----BEGIN CERTIFICATE-----")

    assert _install(tmp_path) == f"installed {roots + 1}"
    assert bundle.read_text().startswith(public.rstrip("\n")) and bundle.read_text().endswith(TEST_CA)
    assert _loaded(bundle) == _loaded(tmp_path / "ca-certificates.public.crt") + 1  # as OpenSSL reads SSL_CERT_FILE

    # a resumed launch installs again: still the public roots plus the CA once
    assert _install(tmp_path) == f"installed {roots + 1}"
    assert _certificates(bundle) == roots + 1 and _certificates(tmp_path / "ca-certificates.public.crt") == roots


def test_the_pod_script_targets_the_file_agents_trust() -> None:
    from buzz_operator.condition.paths import REMOTE_CA_BUNDLE

    assert f"mv -f {REMOTE_CA_BUNDLE}.tmp {REMOTE_CA_BUNDLE}" in INSTALL_RELAY_CA
