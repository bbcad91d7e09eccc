"""A drive's Secrets read once (kube/secret_reads.py).

The reader behind the memo is a counting stand-in: what is tested is which calls reach the API
and what each caller is answered, including a failure the memo must not keep — the real
read_secret against a real apiserver is what the integration tier's trials run through.
"""

from __future__ import annotations

import pytest
from buzz_operator.kube.secret_reads import SecretReads
from kubernetes_asyncio.client.exceptions import ApiException


class Reader:
    """read_secret's shape over a dict of Secrets; a missing one is the apiserver's 404."""

    def __init__(self, secrets: dict[tuple[str, str], dict[str, str]]) -> None:
        self.secrets = secrets
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, kube: object, namespace: str, name: str, *, key: str | None = None) -> dict[str, str]:
        assert key is None, "the memo reads the whole Secret, whatever key a caller wants"
        self.calls.append((namespace, name))
        if (namespace, name) not in self.secrets:
            raise ApiException(status=404, reason="Not Found")
        return dict(self.secrets[(namespace, name)])


async def test_each_secret_is_read_once_and_every_key_answered_from_it() -> None:
    reader = Reader({("ns", "relay"): {"owner-key": "aa", "dsn": "postgres://x"}, ("ns", "keys"): {"K": "v"},
                     ("other", "keys"): {"K": "w"}})
    reads = SecretReads(reader)
    assert await reads(None, "ns", "relay", key="owner-key") == {"owner-key": "aa"}  # type: ignore[arg-type]
    assert await reads(None, "ns", "relay", key="dsn") == {"dsn": "postgres://x"}  # type: ignore[arg-type]
    assert await reads(None, "ns", "relay") == {"owner-key": "aa", "dsn": "postgres://x"}  # type: ignore[arg-type]
    assert await reads(None, "ns", "keys") == {"K": "v"}  # type: ignore[arg-type]
    assert await reads(None, "other", "keys") == {"K": "w"}  # type: ignore[arg-type]  # same name, its own Secret
    assert await reads(None, "ns", "keys") == {"K": "v"}  # type: ignore[arg-type]
    assert reader.calls == [("ns", "relay"), ("ns", "keys"), ("other", "keys")]


async def test_a_caller_changing_its_answer_does_not_change_the_next_callers() -> None:
    reads = SecretReads(Reader({("ns", "s"): {"a": "1"}}))
    first = await reads(None, "ns", "s")  # type: ignore[arg-type]
    first["a"] = "changed"
    assert await reads(None, "ns", "s") == {"a": "1"}  # type: ignore[arg-type]


async def test_a_failed_read_is_not_kept_so_a_secret_written_later_is_read() -> None:
    reader = Reader({})
    reads = SecretReads(reader)
    with pytest.raises(ApiException) as missing:
        await reads(None, "ns", "tenant-0")  # type: ignore[arg-type]
    assert missing.value.status == 404
    reader.secrets[("ns", "tenant-0")] = {"seat": "k"}  # provisioning wrote it since
    assert await reads(None, "ns", "tenant-0") == {"seat": "k"}  # type: ignore[arg-type]
    assert reader.calls == [("ns", "tenant-0"), ("ns", "tenant-0")]


async def test_a_missing_key_is_named_as_read_secret_names_it() -> None:
    reads = SecretReads(Reader({("ns", "relay"): {"dsn": "x"}}))
    with pytest.raises(KeyError, match="Secret ns/relay has no key 'owner-key'"):
        await reads(None, "ns", "relay", key="owner-key")  # type: ignore[arg-type]


async def test_what_it_keeps_never_prints() -> None:
    reads = SecretReads(Reader({("ns", "keys"): {"OPENAI_API_KEY": "sk-secret-value"}}))
    await reads(None, "ns", "keys")  # type: ignore[arg-type]
    assert "sk-secret-value" not in repr(reads) and "ns/keys" in repr(reads)
    assert "sk-secret-value" not in str(reads)
