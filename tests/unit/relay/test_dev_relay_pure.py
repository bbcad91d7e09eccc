"""Dev relay pure parts: REQ filter parsing/matching, relay-signed state tag shapes (docs/relay-protocol.md#kinds),
configuration errors naming the variable."""

from __future__ import annotations

import pytest
from buzz_operator.dev.relay.config import ConfigError, RelayConfig
from buzz_operator.dev.relay.filters import FilterError, parse_filter
from buzz_operator.dev.relay.state import admins_tags, members_tags, metadata_tags
from buzz_operator.relay.nostr import Keypair

EVENT = {"id": "i1", "pubkey": "p1", "kind": 9, "created_at": 100,
         "tags": [["h", "c1"], ["p", "x"], ["e", "root", "", "reply"]], "content": ""}


def test_filter_matching() -> None:
    assert parse_filter({}).matches(EVENT)
    assert parse_filter({"kinds": [9], "#h": ["c1", "c2"], "#e": ["root"], "since": 100, "until": 100}).matches(EVENT)
    assert not parse_filter({"kinds": [0]}).matches(EVENT)
    assert not parse_filter({"#p": ["y"]}).matches(EVENT)
    assert not parse_filter({"authors": ["p2"]}).matches(EVENT)
    assert not parse_filter({"ids": ["i2"]}).matches(EVENT)
    assert not parse_filter({"since": 101}).matches(EVENT)
    assert parse_filter({"limit": 10**9}).limit == 5000


def test_search_needs_every_term_in_the_content_whatever_its_case() -> None:
    profile = {**EVENT, "kind": 0, "content": '{"name":"Benchmark-User-07"}'}
    assert parse_filter({"kinds": [0], "search": "benchmark-user-07"}).matches(profile)
    assert parse_filter({"search": "USER-07 benchmark"}).matches(profile)
    assert not parse_filter({"search": "benchmark-user-08"}).matches(profile)
    assert parse_filter({"search": "  "}).matches(profile)  # no terms: no constraint


@pytest.mark.parametrize(
    ("raw", "key"),
    [([], "filter"), ({"search": ["a"]}, "search"), ({"kinds": ["9"]}, "kinds"), ({"since": -1}, "since"), ({"limit": True}, "limit"),
     ({"#h": "c1"}, "#h"), ({"#x": ["a"]}, "unsupported"), ({"authors": [1]}, "authors")],
)
def test_bad_filters_name_the_key(raw: object, key: str) -> None:
    with pytest.raises(FilterError, match=key):
        parse_filter(raw)


def test_state_tag_shapes() -> None:
    channel = {"id": "c1", "name": "fix-pr-1234", "channel_type": "stream", "visibility": "private",
               "about": "a", "topic": None, "purpose": "p", "ttl_seconds": 3600, "archived_at": object()}
    assert metadata_tags(channel) == [["d", "c1"], ["name", "fix-pr-1234"], ["t", "stream"], ["private"],
                                      ["about", "a"], ["purpose", "p"], ["ttl", "3600"], ["archived", "true"]]
    members = [("o", "owner"), ("m", "member"), ("b", "bot"), ("a", "admin")]
    assert admins_tags("c1", members) == [["d", "c1"], ["p", "o", "owner"], ["p", "a", "admin"]]
    assert members_tags("c1", members) == [["d", "c1"], ["p", "o", "", "owner"], ["p", "m", "", "member"],
                                           ["p", "b", "", "bot"], ["p", "a", "", "admin"]]


def _env(**kw: str) -> dict[str, str]:
    env = {"RELAY_URL": "ws://localhost:3600", "RELAY_OWNER_PUBKEY": Keypair.generate().pubkey_hex,
           "BUZZ_RELAY_PRIVATE_KEY": Keypair.generate().secret_hex, "DATABASE_URL": "postgresql://u:p@h/db",
           "BUZZ_BIND": "0.0.0.0:3600"}
    env.update(kw)
    return env


def test_config_from_env() -> None:
    config = RelayConfig.from_env(_env())
    assert (config.bind_host, config.bind_port, config.authority) == ("0.0.0.0", 3600, "localhost:3600")
    assert config.relay_secret_hex not in repr(config) and "u:p" not in repr(config)


@pytest.mark.parametrize(
    ("kw", "name"),
    [({"RELAY_URL": ""}, "RELAY_URL"), ({"RELAY_URL": "localhost"}, "RELAY_URL"),
     ({"RELAY_OWNER_PUBKEY": "AB" * 32}, "RELAY_OWNER_PUBKEY"), ({"BUZZ_RELAY_PRIVATE_KEY": "x"}, "BUZZ_RELAY_PRIVATE_KEY"),
     ({"DATABASE_URL": "mysql://x"}, "DATABASE_URL"), ({"BUZZ_BIND": "3600"}, "BUZZ_BIND")],
)
def test_config_errors_name_the_variable(kw: dict[str, str], name: str) -> None:
    with pytest.raises(ConfigError, match=f"^{name}:"):
        RelayConfig.from_env(_env(**kw))
