"""A private CA and a server certificate it signs, made with the openssl CLI for one test:
what a relay behind TLS with a company CA looks like (spec.relay.caBundle, docs/relay-urls.md)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PrivateCA:
    ca_cert: Path  # PEM, what spec.relay.caBundle names
    server_cert: Path  # PEM chain for the relay (BUZZ_TLS_CERT_FILE)
    server_key: Path  # its key (BUZZ_TLS_KEY_FILE)

    @property
    def ca_pem(self) -> str:
        return self.ca_cert.read_text()


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, text=True)


def make_private_ca(directory: Path, *, dns: tuple[str, ...] = ("localhost",),
                    ips: tuple[str, ...] = ("127.0.0.1",), name: str = "buzz-operator test CA") -> PrivateCA:
    """A CA (EC P-256, CA:TRUE) and a server certificate for `dns` and `ips`, signed by it."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = directory / "ca.key", directory / "ca.crt"
    key, csr, cert = directory / "server.key", directory / "server.csr", directory / "server.crt"
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", str(ca_key), "-out", str(ca_cert), "-days", "2", "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", str(key), "-out", str(csr), "-subj", "/CN=buzz relay")
    names = ",".join([*(f"DNS:{d}" for d in dns), *(f"IP:{i}" for i in ips)])
    extensions = directory / "server.ext"
    extensions.write_text(f"subjectAltName={names}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key), "-CAcreateserial",
             "-out", str(cert), "-days", "2", "-extfile", str(extensions))
    return PrivateCA(ca_cert, cert, key)
