"""sweep/drive/mapped.py: vectors in mapped, unlinked files behave as `array`s, keep their values
across a `rest` and a growth, leave nothing on disk, and keep a reader's view whole while they grow."""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest
from buzz_operator.sweep.drive.mapped import MIN_BYTES, MappedStore


@pytest.mark.parametrize("typecode, values", [
    ("B", [0, 1, 255, 7]),
    ("H", [0, 65535, 3]),
    ("I", [2**32 - 1, 0]),
    ("q", [-(2**63), 2**63 - 1, -1, 0]),
    ("d", [0.0, -1.5, 1e300, float("inf")]),
])
def test_a_vector_holds_what_an_array_holds_through_growth_and_rest(tmp_path: Path, typecode: str,
                                                                     values: list[float]) -> None:
    store = MappedStore(tmp_path)
    vector, model = store.vector(typecode), array(typecode)
    rounds = 3 * MIN_BYTES // model.itemsize  # past the first file twice over
    for i in range(rounds):
        value = values[i % len(values)]
        vector.append(value)
        model.append(value)
        if i % 997 == 0:
            store.rest()  # the pages go; the values stay in the file
    assert len(vector) == len(model) and list(vector) == list(model)
    assert vector[-1] == model[-1] and vector[5] == model[5]
    assert vector[3:9].tobytes() == model[3:9].tobytes()
    vector[4] = values[0]
    assert vector[4] == values[0]
    with pytest.raises(IndexError):
        vector[len(model)]
    with pytest.raises(IndexError):
        vector[len(model)] = values[0]


def test_copies_fills_and_bytes(tmp_path: Path) -> None:
    store = MappedStore(tmp_path)
    widened = store.vector("H", array("B", [1, 2, 3]))
    assert list(widened) == [1, 2, 3] and widened.itemsize == 2
    filled = store.filled("q", -1, 10_000)
    assert len(filled) == 10_000 and set(filled) == {-1}
    blob = store.vector("B")
    blob.frombytes("héllo".encode())
    assert blob[0:len(blob)].tobytes().decode() == "héllo"


def test_nothing_is_left_on_disk(tmp_path: Path) -> None:
    store = MappedStore(tmp_path)
    vectors = [store.vector("q", range(5000)) for _ in range(4)]
    assert os.listdir(tmp_path) == []  # unlinked as soon as made: a killed operator leaves no file
    assert store.mapped_bytes() >= 4 * 5000 * 8 and len(vectors) == 4


def test_a_reader_keeps_a_whole_prefix_while_the_vector_grows(tmp_path: Path) -> None:
    store = MappedStore(tmp_path)
    vector = store.vector("q", range(100))
    reading = iter(vector)
    first = [next(reading) for _ in range(10)]
    vector.extend(range(100, 100_000))  # grown into new files meanwhile
    vector[50] = -50  # a change in place of the mapping being read is not seen: that one is old
    assert first + list(reading) == list(range(100))
    assert vector[50] == -50 and len(vector) == 100_000


def test_an_unwritable_directory_is_named(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("not a directory")
    with pytest.raises(RuntimeError, match=r"writable directory, and .*/file/settled is not one \(Not a directory\); set BUZZ_WORKDIR"):
        MappedStore(target / "settled")
