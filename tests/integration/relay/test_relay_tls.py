"""A wss:// relay whose certificate a private CA signed (spec.relay.caBundle, docs/relay-urls.md):
the development relay serves TLS with a certificate made for this test by a CA made for this test.

- the operator's side — readiness, tenant provisioning and a live tenant client — trusts the CA
  given as `RelayTarget.ca_pem`, and without it is refused naming spec.relay.caBundle;
- a process talking like an agent (the stand-in stack's `buzz` CLI, run as an agent's shell runs
  it) trusts what SSL_CERT_FILE names: the stack's CA file with the CA appended by the very shell
  the operator runs in the trial pod reaches the relay, the stack's public roots alone do not;
- wss:// to a relay that serves no TLS is refused naming spec.relay.url.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from buzz_operator.dev.relay import RelayConfig, serve
from buzz_operator.dev.stack.build import build_stack
from buzz_operator.pod.relay_ca import RELAY_CA_NAME, combine_script
from buzz_operator.relay import tenant
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant_models import ProvisioningError, RelayTarget

from tests.support.ports import free_port
from tests.support.private_ca import PrivateCA, make_private_ca

pytestmark = pytest.mark.timeout(120)


@dataclass(frozen=True)
class TlsRelay:
    url: str  # wss://localhost:<port>, the canonical RELAY_URL
    owner: Keypair
    dsn: str
    ca: PrivateCA

    def target(self, *, ca_pem: str | None) -> RelayTarget:
        return RelayTarget(url=self.url, owner_secret_hex=self.owner.secret_hex, pg_dsn=self.dsn, ca_pem=ca_pem)


@pytest.fixture
async def tls_relay(db_dsn: str, tmp_path: Path) -> AsyncIterator[TlsRelay]:
    ca = make_private_ca(tmp_path / "pki")
    owner, relay_key = Keypair.generate(), Keypair.generate()
    port = free_port()
    config = RelayConfig(
        relay_url=f"wss://localhost:{port}", owner_pubkey=owner.pubkey_hex, relay_secret_hex=relay_key.secret_hex,
        database_url=db_dsn, bind_host="127.0.0.1", bind_port=port,
        tls_cert_file=str(ca.server_cert), tls_key_file=str(ca.server_key),
    )
    async with serve(config):
        yield TlsRelay(f"wss://localhost:{port}", owner, db_dsn, ca)


async def test_the_operator_trusts_the_private_ca(tls_relay: TlsRelay, make_request) -> None:  # type: ignore[no-untyped-def]
    target = tls_relay.target(ca_pem=tls_relay.ca.ca_pem)
    await tenant.healthcheck(target)  # /_readiness over HTTPS, certificate checked for localhost
    handle, tenant_secrets = await tenant.provision(target, make_request())
    orchestrator = tenant_secrets.seats[handle.orchestrator.seat_id]
    async with tenant.client_as(target, orchestrator.secret_hex, orchestrator.auth_tag) as client:
        event = client.sign(9, "over TLS", [["h", handle.channel_id]])
        assert await client.publish(event) == (True, "")
        stored = await client.query([{"kinds": [9], "#h": [handle.channel_id]}])
    assert [e["content"] for e in stored] == ["over TLS"]


async def test_without_the_ca_the_relay_is_refused_naming_ca_bundle(tls_relay: TlsRelay) -> None:
    with pytest.raises(ProvisioningError) as refused:
        await tenant.healthcheck(tls_relay.target(ca_pem=None))
    message = str(refused.value)
    assert message.startswith("spec.relay.caBundle: the relay's TLS certificate for localhost:"), message
    assert "does not verify against the public roots" in message and "a private CA goes in" in message
    # a CA that did not sign it is no better
    other = make_private_ca(tls_relay.ca.ca_cert.parent.parent / "other", name="someone else's CA")
    with pytest.raises(ProvisioningError, match=r"spec\.relay\.caBundle: .*public roots and spec\.relay\.caBundle"):
        await tenant.healthcheck(tls_relay.target(ca_pem=other.ca_pem))


async def test_wss_to_a_relay_without_tls_names_the_url(relay) -> None:  # type: ignore[no-untyped-def]
    target = RelayTarget(url=f"wss://localhost:{relay.port}", owner_secret_hex=relay.owner.secret_hex,
                         pg_dsn=relay.dsn)
    with pytest.raises(ProvisioningError, match=r"^spec\.relay\.url: the TLS handshake with localhost:\d+ failed"):
        await tenant.healthcheck(target)


async def _buzz(stack: Path, relay_url: str, ca_file: Path, secret_hex: str, auth_tag: str,
                *args: str) -> tuple[int, str, str]:
    """The stand-in `buzz` CLI as an agent runs it: its relay, key and trust from the environment."""
    env = {"BUZZ_RELAY_URL": relay_url, "BUZZ_PRIVATE_KEY": secret_hex, "BUZZ_AUTH_TAG": auth_tag,
           "SSL_CERT_FILE": str(ca_file), "PATH": "/usr/bin:/bin"}
    proc = await asyncio.create_subprocess_exec(str(stack / "bin" / "buzz"), *args, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_an_agent_trusts_the_ca_appended_to_its_ca_file(tls_relay: TlsRelay, make_request,  # type: ignore[no-untyped-def]
                                                              tmp_path: Path) -> None:
    stack = tmp_path / "opt-buzz"
    build_stack(stack)  # /opt/buzz as the stack image ships it: ca-certificates.crt holds the public roots
    public_roots = (stack / "ca-certificates.crt").read_text().count("BEGIN CERTIFICATE")
    (stack / RELAY_CA_NAME).write_text(tls_relay.ca.ca_pem)  # what the launch step uploads
    installed = await asyncio.create_subprocess_exec("sh", "-c", combine_script(str(stack)),
                                                      stdout=asyncio.subprocess.PIPE)
    out, _ = await installed.communicate()
    assert installed.returncode == 0 and out.decode().split()[-1] == str(public_roots + 1)

    target = tls_relay.target(ca_pem=tls_relay.ca.ca_pem)
    handle, tenant_secrets = await tenant.provision(target, make_request())
    seat = tenant_secrets.seats[handle.orchestrator.seat_id]
    channel = handle.channel_id
    code, out, err = await _buzz(stack, tls_relay.url, stack / "ca-certificates.crt", seat.secret_hex,
                                 seat.auth_tag, "messages", "send", "--channel", channel, "--content", "hello")
    assert code == 0, err
    assert json.loads(out)["accepted"] is True

    # the same agent with the stack's public roots alone cannot verify the relay: a network error (exit 2)
    code, _, err = await _buzz(stack, tls_relay.url, stack / "ca-certificates.public.crt", seat.secret_hex,
                               seat.auth_tag, "messages", "get", "--channel", channel)
    assert code == 2 and "CERTIFICATE_VERIFY_FAILED" in err, err

    code, out, err = await _buzz(stack, tls_relay.url, stack / "ca-certificates.crt", seat.secret_hex,
                                 seat.auth_tag, "messages", "get", "--channel", channel)
    assert code == 0, err
    assert [m["content"] for m in json.loads(out)] == ["hello"]
    assert (stack / "ca-certificates.public.crt").read_text().count("BEGIN CERTIFICATE") == public_roots
