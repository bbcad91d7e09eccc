"""NIP-01 REQ filters: validation, translation to SQL over relay.events, and in-memory matching
for live delivery. Supported keys: ids, authors, kinds, #h #d #p #e, since, until, limit, and
NIP-50 `search` — every whitespace-separated term must occur in the content, case-insensitively
(the real relay runs Postgres full-text search; a substring match finds at least what it finds
for the names and words agents look up, e.g. `buzz users get --name`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_LIMIT = 5000
_TAG_KEYS = ("#h", "#d", "#p", "#e")
_ALLOWED = {"ids", "authors", "kinds", "since", "until", "limit", "search", *_TAG_KEYS}


class FilterError(ValueError):
    """A filter the relay cannot honour; the message names the offending key."""


@dataclass(frozen=True)
class Filter:
    ids: tuple[str, ...] | None = None
    authors: tuple[str, ...] | None = None
    kinds: tuple[int, ...] | None = None
    tags: tuple[tuple[str, tuple[str, ...]], ...] = ()
    since: int | None = None
    until: int | None = None
    limit: int = MAX_LIMIT
    search: tuple[str, ...] = ()  # NIP-50 terms, lowercased

    def matches(self, event: Mapping[str, Any]) -> bool:
        if self.ids is not None and event["id"] not in self.ids:
            return False
        if self.authors is not None and event["pubkey"] not in self.authors:
            return False
        if self.kinds is not None and event["kind"] not in self.kinds:
            return False
        if self.since is not None and event["created_at"] < self.since:
            return False
        if self.until is not None and event["created_at"] > self.until:
            return False
        for letter, values in self.tags:
            if not any(len(t) > 1 and t[0] == letter and t[1] in values for t in event["tags"]):
                return False
        content = str(event["content"]).lower()
        return all(term in content for term in self.search)


def _str_list(raw: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    if key not in raw:
        return None
    value = raw[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FilterError(f"{key}: must be a list of strings")
    return tuple(value)


def parse_filter(raw: Any) -> Filter:
    if not isinstance(raw, dict):
        raise FilterError("filter must be an object")
    unknown = set(raw) - _ALLOWED
    if unknown:
        raise FilterError(f"unsupported filter key(s): {sorted(unknown)}")
    kinds = raw.get("kinds")
    if kinds is not None and (
        not isinstance(kinds, list) or not all(isinstance(k, int) and not isinstance(k, bool) for k in kinds)
    ):
        raise FilterError("kinds: must be a list of integers")
    ints: dict[str, int | None] = {}
    for key in ("since", "until", "limit"):
        value = raw.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise FilterError(f"{key}: must be a non-negative integer")
        ints[key] = value
    tags = tuple((key[1], values) for key in _TAG_KEYS if (values := _str_list(raw, key)) is not None)
    search = raw.get("search")
    if search is not None and not isinstance(search, str):
        raise FilterError("search: must be a string")
    return Filter(
        ids=_str_list(raw, "ids"),
        authors=_str_list(raw, "authors"),
        kinds=tuple(kinds) if kinds is not None else None,
        tags=tags,
        since=ints["since"],
        until=ints["until"],
        limit=min(ints["limit"] if ints["limit"] is not None else MAX_LIMIT, MAX_LIMIT),
        search=tuple(search.lower().split()) if search else (),
    )


def _like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def filter_sql(flt: Filter, reader_param: str, first_param: int) -> tuple[str, list[Any]]:
    """WHERE clause (without the keyword) and its arguments. The reader's visibility rule is part
    of it: events scoped to a private channel are returned only to that channel's members."""
    clauses: list[str] = []
    args: list[Any] = []

    def arg(value: Any) -> str:
        args.append(value)
        return f"${first_param + len(args) - 1}"

    if flt.ids is not None:
        clauses.append(f"e.id = ANY({arg(list(flt.ids))}::text[])")
    if flt.authors is not None:
        clauses.append(f"e.pubkey = ANY({arg(list(flt.authors))}::text[])")
    if flt.kinds is not None:
        clauses.append(f"e.kind = ANY({arg(list(flt.kinds))}::int[])")
    if flt.since is not None:
        clauses.append(f"e.created_at >= {arg(flt.since)}")
    if flt.until is not None:
        clauses.append(f"e.created_at <= {arg(flt.until)}")
    for letter, values in flt.tags:
        if letter == "h":
            # channel events store their h tag in channel_id: use the index
            clauses.append(f"e.channel_id = ANY({arg(list(values))}::text[]) AND e.kind < 30000")
        clauses.append(
            "EXISTS (SELECT 1 FROM jsonb_array_elements(e.tags) t "
            f"WHERE t->>0 = {arg(letter)} AND t->>1 = ANY({arg(list(values))}::text[]))"
        )
    for term in flt.search:
        # lower(content) LIKE lower(term): the same test as Filter.matches; ILIKE would also fold
        # case, but by the database's collation rather than by Python's str.lower
        clauses.append(f"lower(e.content) LIKE {arg(_like_pattern(term))}")
    clauses.append(
        "(e.channel_id IS NULL OR NOT EXISTS (SELECT 1 FROM relay.channels c "
        "WHERE c.id = e.channel_id AND c.visibility = 'private') "
        f"OR EXISTS (SELECT 1 FROM relay.members m WHERE m.channel_id = e.channel_id AND m.pubkey = {reader_param}))"
    )
    return " AND ".join(clauses), args
