"""The settled trials' columns in files the operator maps (docs/design.md#settled-trials, item 7).

Kept in `array`s, a settled trial's row (about 0.2 KB) was anonymous memory for as long as the
operator ran, and so was the room the allocator kept around the arrays as they grew: the
operator's RSS grew with every trial a sweep had ever settled (docs/performance.md#memory). Here
each column is a file, unlinked as soon as it is made, and mapped shared: its pages belong to
the kernel's page cache, which writes them back and drops them under pressure and reads them in
again on the next touch, so they are never the operator's to keep.

What stays resident between reconciles is only what was touched since the last `rest`: after
each reconcile the operator calls `MappedStore.rest`, which drops the mappings' pages from its
resident set (`MADV_DONTNEED` on a shared file mapping: the data stays in the page cache and
the file); a tick that reads the columns faults them back in from the cache.

A vector grows by doubling into a new file, copying what it held; one that is being read (a
summary.json written from a thread) keeps reading its old mapping, which is unmapped when the
last reader lets go, as an `array` that grows leaves its readers a consistent prefix.
"""

from __future__ import annotations

import mmap
import os
import resource
import struct
import tempfile
import weakref
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

MIN_BYTES = mmap.PAGESIZE  # a new vector's first file
# each mapping holds a descriptor: a namespace's two tables hold about forty, so the soft limit
# is raised to the hard one when it is lower than this
WANTED_FILES = 65536


class MappedVector:
    """A growable vector of one `array` typecode in a mapped, unlinked file."""

    def __init__(self, store: MappedStore, typecode: str) -> None:
        self.store = store
        self.typecode = typecode
        self.itemsize = struct.calcsize(typecode)
        if self.itemsize != array(typecode).itemsize:
            raise ValueError(f"typecode {typecode!r}: struct and array disagree on its size")
        self.length = 0
        self._map: mmap.mmap | None = None
        self._view = memoryview(b"").cast(typecode)
        self._grow(MIN_BYTES)

    def _grow(self, size: int) -> None:
        fd, path = tempfile.mkstemp(dir=self.store.directory, prefix="column-")
        try:
            os.unlink(path)  # nothing is left on disk when the operator stops, however it stops
            os.ftruncate(fd, size)
            mapped = mmap.mmap(fd, size)  # shared, read and write: the file's pages, not anonymous memory
        finally:
            os.close(fd)  # the mapping keeps its own descriptor
        view = memoryview(mapped).cast(self.typecode)
        view[:self.length] = self._view[:self.length]
        # the old mapping is dropped here, and unmapped once no reader holds a view of it
        self._map, self._view = mapped, view

    def _room(self, items: int) -> None:
        if self.length + items > len(self._view):
            size = len(self._view) * self.itemsize
            while size < (self.length + items) * self.itemsize:
                size *= 2
            self._grow(size)

    def append(self, value: Any) -> None:
        if self.length == len(self._view):
            self._room(1)
        self._view[self.length] = value
        self.length += 1

    def frombytes(self, data: bytes) -> None:
        items = len(data) // self.itemsize
        self._room(items)
        self._view[self.length:self.length + items] = memoryview(data).cast(self.typecode)
        self.length += items

    def extend(self, values: Iterable[Any]) -> None:
        self.frombytes(array(self.typecode, values).tobytes())

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self._view[:self.length][index]
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError("vector index out of range")
        return self._view[index]

    def __setitem__(self, index: int, value: Any) -> None:
        if not 0 <= index < self.length:
            raise IndexError("vector index out of range")
        self._view[index] = value

    def __iter__(self) -> Iterator[Any]:
        """The values as they are now: a later append is not read, a later change in place is."""
        return iter(self._view[:self.length])

    def rest(self) -> None:
        if self._map is not None:
            self._map.madvise(mmap.MADV_DONTNEED)


class MappedStore:
    """The `columns.Store` of the operator: vectors in files under `directory`, made when needed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        try:
            directory.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=directory):
                pass
        except OSError as error:
            raise RuntimeError(f"the settled trials' columns need a writable directory, and {directory} "
                               f"is not one ({error.strerror}); set BUZZ_WORKDIR to one") from error
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < WANTED_FILES:
            wanted = WANTED_FILES if hard == resource.RLIM_INFINITY else min(WANTED_FILES, hard)
            if wanted > soft:
                resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        self.vectors: weakref.WeakSet[MappedVector] = weakref.WeakSet()

    def vector(self, typecode: str, initial: Iterable[Any] = ()) -> MappedVector:
        made = MappedVector(self, typecode)
        made.extend(initial)
        self.vectors.add(made)
        return made

    def filled(self, typecode: str, value: Any, length: int) -> MappedVector:
        made = MappedVector(self, typecode)
        made.frombytes(struct.pack(typecode, value) * length)
        self.vectors.add(made)
        return made

    def rest(self) -> None:
        for vector in list(self.vectors):
            vector.rest()

    def mapped_bytes(self) -> int:
        """The size of every vector's file: what a reconcile reading every column reads back in."""
        return sum(len(vector._view) * vector.itemsize for vector in list(self.vectors))
