"""The canary's network probe (preflight/probe.py), run for real: the very script the canary's
probe container runs, here on the host against servers made in the test — a TLS server whose
certificate an "intercepting proxy" issued, a closed port, a name that does not resolve."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from buzz_operator.condition import EndpointConfig
from buzz_operator.preflight import probe

from tests.support.ports import free_port

ISSUER = "/C=US/O=Zscaler Inc./CN=Zscaler Intermediate Root CA"


def run(request: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", probe.SCRIPT, json.dumps(request)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return probe.parse(done.stdout)


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[int]:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", ISSUER], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            try:
                with context.wrap_socket(conn, server_side=True):
                    pass
            except (ssl.SSLError, OSError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    listener.close()


def test_tcp_states_and_the_issuer_of_an_unverified_certificate(tls_server: int) -> None:
    found = run(probe.request({"tls-server": ("127.0.0.1", tls_server), "closed": ("127.0.0.1", free_port()),
                               "nowhere": ("no-such-host.invalid", 443)}, ("127.0.0.1", tls_server), rounds=3))
    assert found["tcp"] == {"tls-server": "open", "closed": "refused", "nowhere": "dns"}
    assert found["tls"] == {"issuer": "C=US; O=Zscaler Inc.; CN=Zscaler Intermediate Root CA"}
    from buzz_operator.preflight import checks

    assert checks.tls_verdict(found["tls"]).verdict is checks.Verdict.FAILED


def test_no_tls_to_see_is_an_error_not_an_issuer() -> None:
    found = run(probe.request({}, ("no-such-host.invalid", 443), rounds=1))
    assert found == {"tcp": {}, "tls": {"error": "dns"}}
    refused = run(probe.request({}, ("127.0.0.1", free_port()), rounds=1))["tls"]
    assert "ConnectionRefusedError" in refused["error"]


def test_the_command_feeds_the_script_through_stdin_as_kube_exec_sends_it() -> None:
    from buzz_operator.kube.exec import wrap

    request = probe.request({"closed": ("127.0.0.1", free_port())}, rounds=1)
    argv, data = wrap(probe.command(request), b"", probe.SCRIPT.encode())
    done = subprocess.run(argv, input=data, capture_output=True, timeout=60)
    assert probe.parse(done.stdout.decode()) == {"tcp": {"closed": "refused"}}


@pytest.mark.parametrize("stdout", ["", "Traceback ...", "{not json", '{"tls": {}}'])
def test_an_unreadable_answer_is_a_probe_error(stdout: str) -> None:
    with pytest.raises(probe.ProbeError):
        probe.parse(stdout)


def test_targets_are_the_urls_agents_dial_named_without_their_hosts() -> None:
    assert probe.url_target("ws://localhost:3600") == ("localhost", 3600)
    assert probe.url_target("wss://relay.example.com") == ("relay.example.com", 443)
    assert probe.url_target("http://10.96.0.7/v1") == ("10.96.0.7", 80)
    assert probe.url_target("stub://x") is None and probe.url_target("http://[::1") is None
    config = EndpointConfig.load({
        "scripted/oracle": {"provider": "openai", "api_key_env": "K",
                            "env": {"OPENAI_COMPAT_BASE_URL": "http://10.96.0.9:8091/v1", "OPENAI_COMPAT_API": "chat"}},
        "standin/oracle": {"provider": "standin", "api_key_env": "S", "env": {}},
        "unused": {"provider": "openai", "api_key_env": "K", "env": {"X_URL": "https://api.example.com"}},
        "proxied": {"provider": "openai", "api_key_env": "K",
                    "env": {"OPENAI_BASE_URL": "https://api.example.com/v1", "https_proxy": "http://proxy.corp:3128"}},
    })
    targets = probe.endpoint_targets(config, ["scripted/oracle", "standin/oracle", "scripted/oracle"])
    assert targets == {"endpoint scripted/oracle (OPENAI_COMPAT_BASE_URL)": ("10.96.0.9", 8091)}
    # behind a proxy the agents dial the proxy, not the endpoint
    assert probe.endpoint_targets(config, ["proxied"]) == {"endpoint proxied (https_proxy)": ("proxy.corp", 3128)}
