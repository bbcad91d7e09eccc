"""Rows of named tuples or dataclasses kept column by column, found by a text key
(docs/design.md#settled-trials).

The operator keeps a summary and a metrics record of every settled trial for as long as it runs.
Kept as objects, each was a handful of small allocations (the instance, its name, its floats, a
key tuple): about 0.3 KB of live heap a trial (bench/scale.py's heap attribution). Here a row is
a few entries in `array`s and one bytearray of keys, about 0.2 KB for both, grown in large
blocks; a row comes back out as an object only when read, and is dropped after. (That the
process's RSS grows with trials is not explained by this keep: docs/performance.md#memory.)

Columns by kind:
- the key (a trial's name): utf-8 in one bytearray, NUL-separated;
- `floats` and `ints`: `array('d')` / `array('q')`, for values that differ from row to row
  (costs, token counts);
- every other field: a code into a table of the distinct values (a sweep's few tasks, states,
  endpoint tuples, generations), so repeated values are stored once.
A removed row is a tombstone until the dead outnumber the live; then the columns are rebuilt.

Where the columns' numbers live is a `Store`'s choice: `MEMORY` keeps each in an `array` of the
process's heap; the operator's store (sweep/drive/mapped.py) keeps each in a file it maps, so a
settled trial's row is the kernel's page cache — reclaimable, written back and read in as needed —
and not the operator's anonymous memory (docs/design.md#settled-trials, item 7). A vector is
anything with `array`'s append, frombytes, indexing, slicing to something with `tobytes`,
iteration and `itemsize`.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import fields, is_dataclass
from itertools import compress, islice, pairwise, repeat
from typing import Any, Generic, Protocol, TypeVar

Row = TypeVar("Row")
EMPTY, DELETED = -1, -2  # slots of the key index
MIN_SLOTS = 64
COMPACT_AT = 1024  # rebuild once the dead rows outnumber both the live ones and this
KEY_BLOCK = 4096  # keys decoded together when a column is read whole
SORT_WHOLE = 4096  # up to this many rows are sorted by key in one go
SORT_BUCKETS = 16  # more are sorted in this many buckets, one at a time


class Store(Protocol):
    """Where a table's vectors of numbers live."""

    def vector(self, typecode: str, initial: Iterable[Any] = ()) -> Any:
        """A new vector of `array` typecode `typecode`, holding `initial`."""
        ...

    def filled(self, typecode: str, value: Any, length: int) -> Any:
        """A new vector of `length` copies of `value`."""
        ...

    def rest(self) -> None:
        """A pass over the rows is over: what the store keeps resident for it may go."""
        ...


class Memory:
    """Vectors as `array`s in the process's own heap."""

    def vector(self, typecode: str, initial: Iterable[Any] = ()) -> array[Any]:
        return array(typecode, initial)

    def filled(self, typecode: str, value: Any, length: int) -> array[Any]:
        return array(typecode, [value]) * length

    def rest(self) -> None:
        return None


MEMORY = Memory()


class Codes:
    """Repeated values: each row holds the code of its value in `values`."""

    def __init__(self, store: Store = MEMORY) -> None:
        self.store = store
        self.values: list[Any] = []
        self.index: dict[Any, int] = {}
        self.codes = store.vector("B")  # a byte a row, widened as the distinct values outgrow it

    def append(self, value: Any) -> None:
        key = (type(value), value)  # 1, 1.0 and True are equal keys, and must stay apart
        code = self.index.get(key)
        if code is None:
            code = self.index[key] = len(self.values)
            self.values.append(value)
            if code == 1 << (8 * self.codes.itemsize):
                self.codes = self.store.vector("H" if self.codes.itemsize == 1 else "I", self.codes)
        self.codes.append(code)

    def __getitem__(self, row: int) -> Any:
        return self.values[self.codes[row]]

    def column(self) -> Iterable[Any]:
        return map(self.values.__getitem__, self.codes)

    def code(self, value: Any) -> int:
        """The code of `value`, -1 when no row ever held it."""
        return self.index.get((type(value), value), -1)


class Numbers:
    """A number that differs from row to row."""

    def __init__(self, typecode: str, store: Store = MEMORY) -> None:
        self.codes = store.vector(typecode)

    def append(self, value: Any) -> None:
        self.codes.append(value)

    def __getitem__(self, row: int) -> Any:
        return self.codes[row]

    def column(self) -> Iterable[Any]:
        return self.codes


class Keys:
    """The key of each row, utf-8 in one vector of bytes; a key holds no NUL (Kubernetes names)."""

    def __init__(self, store: Store = MEMORY) -> None:
        self.blob = store.vector("B")
        self.ends = store.vector("q")

    def append(self, value: str) -> None:
        if "\0" in value:
            raise ValueError(f"a key holds no NUL: {value!r}")
        self.blob.frombytes(value.encode())
        self.ends.append(len(self.blob))
        self.blob.append(0)

    def __getitem__(self, row: int) -> str:
        start = self.ends[row - 1] + 1 if row else 0
        return self.blob[start:self.ends[row]].tobytes().decode()

    def column(self) -> Iterator[str]:
        """Every key in row order, decoded a block of KEY_BLOCK rows at a time: the whole column
        decoded at once was a list of every trial's name on each read (8.6 MB at 100,000)."""
        start, rows = 0, len(self.ends)
        for first in range(0, rows, KEY_BLOCK):
            end = self.ends[min(first + KEY_BLOCK, rows) - 1]
            yield from self.blob[start:end].tobytes().decode().split("\0")
            start = end + 1


def _in_key_order(keys: Keys, selector: bytes) -> Iterator[int]:
    """The numbers of the rows `selector` marks, in key order. A few rows are sorted at once;
    more are sorted a bucket at a time, the buckets cut at keys sampled in one pass: each pass
    decodes every key and keeps those of its bucket, so the sort holds about a SORT_BUCKETS-th
    of the keys (a list of every key was summary.json's largest transient: 8 MB at 100,000
    trials, docs/performance.md#memory), for SORT_BUCKETS passes over the key column."""
    rows = len(selector)
    selected = selector.count(1)
    if selected <= SORT_WHOLE:
        order = list(compress(range(rows), selector))
        order.sort(key=keys.__getitem__)
        yield from order
        return
    step = max(selected // (SORT_BUCKETS * 8), 1)
    sample = sorted(islice(compress(islice(keys.column(), rows), selector), 0, None, step))
    cuts = [sample[len(sample) * i // SORT_BUCKETS] for i in range(1, SORT_BUCKETS)]
    bounds: list[str | None] = [None, *sorted(set(cuts)), None]
    for low, high in pairwise(bounds):
        bucket = [(key, row) for row, key in compress(enumerate(islice(keys.column(), rows)), selector)
                  if (low is None or key >= low) and (high is None or key < high)]
        bucket.sort()
        yield from (row for _, row in bucket)


class Table(Generic[Row]):
    """Rows of one NamedTuple or frozen dataclass type, keyed by its text field `key`.

    `floats` and `ints` name the fields held in a `Numbers` column (every row must hold a float,
    or an int, there); every other field but the key is held in a `Codes` column. `store` holds
    the columns' numbers (the module's docstring).
    """

    def __init__(self, kind: type[Row], *, key: str = "name", floats: Iterable[str] = (),
                 ints: Iterable[str] = (), store: Store = MEMORY) -> None:
        self.kind = kind
        self.store = store
        self.key = key
        self.tuple = not is_dataclass(kind)  # a NamedTuple is built straight from its values
        self.names: tuple[str, ...] = (tuple(f.name for f in fields(kind)) if not self.tuple  # type: ignore[arg-type]
                                       else kind._fields)  # type: ignore[attr-defined]
        self.floats, self.ints = frozenset(floats), frozenset(ints)
        unknown = (self.floats | self.ints | {key}) - set(self.names)
        if unknown:
            raise ValueError(f"{kind.__name__} has no field {', '.join(sorted(unknown))}")
        self._reset(MIN_SLOTS)

    def _reset(self, slots: int) -> None:
        store = self.store
        self.columns: dict[str, Codes | Numbers | Keys] = {
            name: Keys(store) if name == self.key else Numbers("d", store) if name in self.floats
            else Numbers("q", store) if name in self.ints else Codes(store)
            for name in self.names
        }
        self.ordered = [self.columns[name] for name in self.names]  # the type's own field order
        self.keys: Keys = self.columns[self.key]  # type: ignore[assignment]
        self.hashes = store.vector("q")
        self.alive = store.vector("B")
        self.live = 0
        self.slots = store.filled("q", EMPTY, slots)
        self.used = 0  # slots not EMPTY: live rows and DELETED marks

    def __len__(self) -> int:
        return self.live

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(key)[0] >= 0

    def get(self, key: str) -> Row | None:
        row = self._find(key)[0]
        return None if row < 0 else self._row(row)

    def put(self, item: Row) -> None:
        """Add `item`, or replace the row of the same key."""
        key = getattr(item, self.key)
        row, slot = self._find(key)
        if row >= 0:  # replaced: the old row dies, the new one takes its slot
            self.alive[row] = 0
            self.live -= 1
        elif self.slots[slot] == EMPTY:
            self.used += 1
        for name, column in zip(self.names, self.ordered, strict=True):
            column.append(getattr(item, name))
        self.hashes.append(hash(key))
        self.alive.append(1)
        self.live += 1
        self.slots[slot] = len(self.alive) - 1
        self._tidy()

    def remove(self, key: str) -> bool:
        row, slot = self._find(key)
        if row < 0:
            return False
        self.alive[row] = 0
        self.live -= 1
        self.slots[slot] = DELETED
        self._tidy()
        return True

    def __iter__(self) -> Iterator[Row]:
        return self.rows()

    def rows(self, **where: Any) -> Iterator[Row]:
        """The live rows (those whose Codes fields equal `where`), built as they are read."""
        values = self.tuples(**where)
        if self.tuple:
            return map(tuple.__new__, repeat(self.kind), values)  # type: ignore[arg-type]
        return (self.kind(*value) for value in values)

    def tuples(self, **where: Any) -> Iterator[tuple[Any, ...]]:
        """The live rows as plain tuples in field order, no object built (metrics sum these)."""
        selector = self._selector(where)
        return zip(*[compress(column.column(), selector) for column in self.ordered], strict=True)

    def rows_by_key(self, **where: Any) -> Iterator[Row]:
        """The live rows (selected as `rows` selects them, when called) in key order, each built
        as it is read. Never the rows themselves are held, nor every key: the sort holds a
        bucket of keys at a time (`_in_key_order`)."""
        selector = bytes(self._selector(where))
        # the columns as they are now: a compaction while the rows are read (summary.json is
        # written from a thread) makes new columns and leaves these whole
        columns, kind = list(self.ordered), self.kind
        order = _in_key_order(self.keys, selector)
        if self.tuple:
            return (tuple.__new__(kind, [column[row] for column in columns]) for row in order)  # type: ignore[type-var]
        return (kind(*[column[row] for column in columns]) for row in order)

    def _selector(self, where: dict[str, Any]) -> Iterable[int]:
        selector: Iterable[int] = self.alive
        for name, value in where.items():
            column = self.columns[name]
            if not isinstance(column, Codes):
                raise ValueError(f"{name}: rows are selected by a coded field")
            code = column.code(value)
            selector = bytes(a and c == code for a, c in zip(selector, column.codes, strict=True))
        return selector

    def _row(self, row: int) -> Row:
        values = [column[row] for column in self.ordered]
        return tuple.__new__(self.kind, values) if self.tuple else self.kind(*values)  # type: ignore[return-value,type-var]

    def _find(self, key: str) -> tuple[int, int]:
        """(row or -1, the slot it is in, or else the first free slot on its probe path)."""
        wanted = hash(key)
        slots, mask = self.slots, len(self.slots) - 1
        slot, free = wanted & mask, -1
        while True:
            row = slots[slot]
            if row == EMPTY:
                return -1, (slot if free < 0 else free)
            if row == DELETED:
                free = slot if free < 0 else free
            elif self.hashes[row] == wanted and self.keys[row] == key:
                return row, slot
            slot = (slot + 1) & mask

    def _tidy(self) -> None:
        if len(self.alive) - self.live > max(self.live, COMPACT_AT):  # mostly dead: copy the live out
            # read from the old columns as the new ones fill: never a list of every live row
            items = self.rows()
            self._reset(MIN_SLOTS)
            for item in items:
                self.put(item)
        elif self.used * 3 >= len(self.slots) * 2:  # the index two thirds full: rehashed, larger if need be
            self._reindex(len(self.slots) * 2 if self.live * 3 >= len(self.slots) else len(self.slots))

    def _reindex(self, size: int) -> None:
        slots, mask = self.store.filled("q", EMPTY, size), size - 1
        for row in compress(range(len(self.alive)), self.alive):
            slot = self.hashes[row] & mask
            while slots[slot] != EMPTY:
                slot = (slot + 1) & mask
            slots[slot] = row
        self.slots, self.used = slots, self.live

