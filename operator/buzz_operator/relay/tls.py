"""TLS to a wss:// relay whose certificate a private CA signed (spec.relay.caBundle).

The operator and the agents trust the same thing: the public roots plus the bundle's
certificates. The operator builds an `ssl.SSLContext` from them here; the agents get the same
certificates appended to the stack's CA file in their pod (pod/relay_ca.py).
"""

from __future__ import annotations

import ssl
from functools import lru_cache

# A CA bundle is a few certificates; a document this big is something else (ConfigMaps and
# Secrets hold up to 1 MiB), and it is copied into every trial pod.
MAX_BUNDLE_BYTES = 256 * 1024
_PRIVATE_KEY = "PRIVATE KEY-----"


def ca_bundle_problem(pem: str) -> str | None:
    """Why `pem` cannot be the relay's CA bundle, or None. Never quotes it: a mistaken document
    (a private key, a token) would otherwise land in the sweep's status."""
    if len(pem.encode()) > MAX_BUNDLE_BYTES:
        return f"is larger than {MAX_BUNDLE_BYTES // 1024} KiB; a CA bundle is a few PEM certificates"
    if _PRIVATE_KEY in pem:
        # it would be copied into every trial pod, where the agents can read it
        return "holds a private key; name a document with the CA certificates only"
    if "-----BEGIN CERTIFICATE-----" not in pem:
        return "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cadata=pem)
    except (ssl.SSLError, ValueError) as exc:
        return f"is not PEM certificates OpenSSL can load ({type(exc).__name__}: {exc.args[-1] if exc.args else ''})"
    if context.cert_store_stats()["x509"] == 0:
        return "holds no certificate OpenSSL can load"
    return None


@lru_cache(maxsize=32)
def client_context(ca_pem: str | None) -> ssl.SSLContext:
    """A verifying client context trusting the public roots and, when given, `ca_pem` too.
    Cached: each context reads the system's roots, and every relay connection asks for one."""
    context = ssl.create_default_context()
    if ca_pem:
        context.load_verify_locations(cadata=ca_pem)
    return context


def describe_tls_failure(error: BaseException, authority: str, *, has_ca_bundle: bool) -> str:
    """A TLS handshake failure as the spec field to fix: a certificate that does not verify is
    the trust configuration's (spec.relay.caBundle), anything else — an OpenSSL error, a reset or
    EOF in the handshake — the URL's (nothing serves TLS there)."""
    if isinstance(error, ssl.SSLCertVerificationError):
        trusted = "the public roots and spec.relay.caBundle" if has_ca_bundle else "the public roots"
        hint = "" if has_ca_bundle else "; a private CA goes in spec.relay.caBundle"
        return (f"spec.relay.caBundle: the relay's TLS certificate for {authority} does not verify against "
                f"{trusted} ({error.verify_message}){hint}")
    why = getattr(error, "reason", None) or type(error).__name__  # OpenSSL's reason, e.g. WRONG_VERSION_NUMBER
    return f"spec.relay.url: the TLS handshake with {authority} failed ({why}): is it serving TLS (wss://) there?"
