"""Stream a text file as chunks of whole lines, with ``str.splitlines()`` semantics.

The seed harness reads each log with ``read_text(encoding="utf-8", errors="replace")`` and then
``splitlines()`` (docs/accounting.md#logs-read). Agent logs can be hundreds of MB, so here the file is
decoded incrementally and handed out as chunks that always end on a line break: splitting every
chunk with ``splitlines()`` yields exactly the lines the whole-file read would have, and the
memory held is one chunk plus the longest line, whatever the file size.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path

# 1 MiB of bytes per read: large enough that per-chunk Python overhead vanishes next to the C-level
# substring scans done on each chunk, small enough that peak memory stays flat.
CHUNK_BYTES = 1 << 20
# Every character str.splitlines() breaks on.
_BREAK_RE = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def iter_line_chunks(path: Path, chunk_bytes: int = CHUNK_BYTES) -> Iterator[str]:
    """Yield the decoded file as strings of complete lines (the last may lack a line break).

    A chunk never ends in the middle of a line, and never between ``\\r`` and a following
    ``\\n``: ``splitlines()`` treats ``\\r\\n`` as one break, and cutting between the two would
    invent an empty line and shift every line number after it (the secret scan reports them).
    Undecodable bytes become U+FFFD rather than an error, as in the seed: a stray binary byte must
    not lose a usage line.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    carry = ""
    with path.open("rb") as handle:
        while True:
            raw = handle.read(chunk_bytes)
            final = not raw
            text = carry + decoder.decode(raw, final=final)
            if final:
                if text:
                    yield text
                return
            cut = _last_safe_break(text)
            if cut == 0:
                carry = text
                continue
            carry = text[cut:]
            yield text[:cut]


def _last_safe_break(text: str) -> int:
    """Index just after the last line break that is safe to cut at, or 0 if there is none.

    A trailing bare "\r" is not safe: its "\n" may arrive with the next read. The common break
    is "\n", so ``rfind`` locates it in C and only the short tail after it is searched for the
    rarer breaks ``splitlines()`` also honours.
    """
    end = len(text) - 1 if text.endswith("\r") else len(text)
    newline = text.rfind("\n", 0, end)
    last = newline
    for match in _BREAK_RE.finditer(text, newline + 1, end):
        last = match.start()
    return last + 1
