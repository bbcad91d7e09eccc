"""Pick out, in C, the few log lines that can matter to accounting (docs/accounting.md#log-lines), without stripping all.

Accounting reads only lines that, once ANSI escapes are stripped, hold a usage marker, ``turn ``,
``handoff #``, or both truncation words. Stripping every escape costs one regex match per escape,
and tracing writes one every ~15 bytes. Instead each chunk is reduced to a *skeleton* by deleting,
with ``bytes.translate``, every character an SGR escape (``ESC [ digits/; m``) is made of. If every
real escape in the chunk is SGR, deleting those characters from the raw text or from the stripped
text gives the same skeleton, and none of the needles contains a deleted character, so a line
whose stripped text holds a needle has a skeleton that holds it too: the candidates are a
superset of the lines that matter. Each candidate is then stripped and read exactly like the seed.

The shortcut applies only where that argument holds — ASCII text, ``\\n`` the only line break
(so line numbers agree), and no escape other than SGR; otherwise ``None`` sends the caller down
the plain path.
"""

from __future__ import annotations

# Everything an SGR escape is made of besides its parameters.
_SGR_FRAME = b"\x1b[m"
_SGR_PARAMETERS = b"0123456789;"
# Needles as they appear in a skeleton; none contains a deleted character.
_NEEDLES = (b"goose usage update", b"turn ", b"handoff #")
_TRUNCATION_WORDS = (b"truncat", b"handoff")
# Line breaks str.splitlines() honours besides "\n" (within ASCII).
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")


def candidate_lines(chunk: str) -> list[str] | None:
    """Raw lines of ``chunk`` (in order) that may matter, or None if the shortcut is not exact."""
    if not chunk.isascii() or any(mark in chunk for mark in _OTHER_BREAKS):
        return None
    unparametrised = chunk.encode("ascii").translate(None, _SGR_PARAMETERS)
    # Every "ESC[" must open an SGR escape: a real escape ending in another letter would leave
    # that letter in the skeleton and could split a needle.
    if unparametrised.count(b"\x1b[") != unparametrised.count(b"\x1b[m"):
        return None
    skeleton = unparametrised.translate(None, _SGR_FRAME)
    indexes: set[int] = set()
    for needle in _NEEDLES:
        _collect_lines(skeleton, needle, indexes)
    lowered = skeleton.lower()
    if all(word in lowered for word in _TRUNCATION_WORDS):
        _collect_lines(lowered, _TRUNCATION_WORDS[0], indexes)
    if not indexes:
        return []
    lines = chunk.split("\n")
    return [lines[index] for index in sorted(indexes)]


def _collect_lines(text: bytes, needle: bytes, indexes: set[int]) -> None:
    """Add the index of every line of ``text`` containing ``needle``."""
    line = 0
    counted = 0
    position = text.find(needle)
    while position >= 0:
        line += text.count(b"\n", counted, position)
        counted = position
        indexes.add(line)
        end = text.find(b"\n", position)
        if end < 0:
            return
        position = text.find(needle, end + 1)
