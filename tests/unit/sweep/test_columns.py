"""sweep/columns.py: a Table behaves as a dict of rows by key — whatever mix of puts, replacements
and removals, through index growth and compaction — and gives rows back equal to what went in;
each case runs with the columns in the heap (`MEMORY`) and in mapped files (sweep/drive/mapped.py,
the operator's)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import NamedTuple

import pytest
from buzz_operator.sweep import columns
from buzz_operator.sweep.columns import MEMORY, Store, Table
from buzz_operator.sweep.drive.mapped import MappedStore
from buzz_operator.sweep.trial_view import TrialState, TrialView
from hypothesis import given, settings
from hypothesis import strategies as st


class Row(NamedTuple):
    name: str
    task: str
    attempt: int
    cost: float
    reward: float | None = None
    endpoints: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Record:
    name: str
    tokens: int
    state: str


STORES = pytest.mark.parametrize("where", ["memory", "mapped"])


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> MappedStore:
    return MappedStore(tmp_path_factory.mktemp("columns"))


def store_of(where: str, mapped: MappedStore) -> Store:
    return MEMORY if where == "memory" else mapped


names = st.sampled_from([f"t-{i}" for i in range(40)] + ["é-ünïcode", "x" * 70])
rows = st.builds(Row, name=names, task=st.sampled_from(["a", "b", "c"]), attempt=st.integers(0, 2**40),
                 cost=st.floats(allow_nan=False), reward=st.sampled_from([None, 0.0, 0.5, 1.0, 1]),
                 endpoints=st.sampled_from([(), ("gpt",), ("gpt", "claude")]))
operations = st.lists(st.one_of(st.tuples(st.just("put"), rows), st.tuples(st.just("remove"), names)), max_size=300)


@STORES
@settings(max_examples=200, deadline=None)
@given(operations)
def test_a_table_is_a_dict_of_rows_by_key(where: str, mapped: MappedStore, ops: list[tuple[str, object]]) -> None:
    # compaction within a short run, an index small enough that probe paths collide, and keys
    # decoded a few rows at a time
    saved = (columns.COMPACT_AT, columns.MIN_SLOTS, columns.KEY_BLOCK, columns.SORT_WHOLE, columns.SORT_BUCKETS)
    # ... and the sort by key done in buckets past a handful of rows
    columns.COMPACT_AT, columns.MIN_SLOTS, columns.KEY_BLOCK, columns.SORT_WHOLE, columns.SORT_BUCKETS = 4, 4, 3, 5, 3
    try:
        table: Table[Row] = Table(Row, floats=("cost",), ints=("attempt",), store=store_of(where, mapped))
        model: dict[str, Row] = {}
        for op, arg in ops:
            if op == "put":
                assert isinstance(arg, Row)
                table.put(arg)
                model[arg.name] = arg
            else:
                assert isinstance(arg, str)
                assert table.remove(arg) == (model.pop(arg, None) is not None)
        assert len(table) == len(model)
        assert sorted(table) == sorted(model.values())
        for name in {n for _, n in ((op, getattr(a, "name", a)) for op, a in ops)}:
            assert table.get(name) == model.get(name) and (name in table) == (name in model)
        for task in ("a", "b", "z"):
            assert sorted(table.rows(task=task)) == sorted(r for r in model.values() if r.task == task)
            assert list(table.rows_by_key(task=task)) == sorted((r for r in model.values() if r.task == task),
                                                                key=lambda r: r.name)
        assert list(table.rows_by_key()) == sorted(model.values(), key=lambda r: r.name)
        assert len(table.alive) - table.live <= max(table.live, columns.COMPACT_AT)  # the dead are bounded
    finally:
        columns.COMPACT_AT, columns.MIN_SLOTS, columns.KEY_BLOCK, columns.SORT_WHOLE, columns.SORT_BUCKETS = saved


@STORES
def test_values_equal_across_types_stay_apart(where: str, mapped: MappedStore) -> None:
    """1, 1.0 and True are equal dict keys; a reward of 1 must not come back as True."""
    table: Table[Row] = Table(Row, floats=("cost",), ints=("attempt",), store=store_of(where, mapped))
    for i, reward in enumerate([True, 1, 1.0]):
        table.put(Row(name=f"r{i}", task="a", attempt=i, cost=0.0, reward=reward))
    assert [type(r.reward) for r in sorted(table)] == [bool, int, float]


@STORES
def test_a_dataclass_round_trips_and_a_trial_summary_too(where: str, mapped: MappedStore) -> None:
    records: Table[Record] = Table(Record, ints=("tokens",), store=store_of(where, mapped))
    records.put(Record(name="a", tokens=10**12, state="succeeded"))
    assert list(records) == [Record(name="a", tokens=10**12, state="succeeded")]
    assert list(records.tuples()) == [("a", 10**12, "succeeded")]
    summaries: Table[TrialView] = Table(TrialView, floats=("cost_floor", "cost_ceiling"), ints=("attempt",), store=store_of(where, mapped))
    summary = TrialView(name="s-1", sweep="s", task="t", attempt=3, state=TrialState.FAILED, reward=0.0,
                           scored=True, cost_floor=0.25, cost_ceiling=0.5, endpoints=("gpt",), namespace="ns",
                           outcome="fail", reason="AgentTimeout", created_generation=2, stack_digest="d" * 64)
    summaries.put(summary)
    (back,) = summaries
    assert back == summary and type(back) is TrialView and back.state is TrialState.FAILED and not back.active


@STORES
def test_bad_declarations_and_keys_are_refused(where: str, mapped: MappedStore) -> None:
    with pytest.raises(ValueError, match="has no field cots"):
        Table(Row, floats=("cots",), store=store_of(where, mapped))
    table: Table[Row] = Table(Row, store=store_of(where, mapped))
    with pytest.raises(ValueError, match="holds no NUL"):
        table.put(Row(name="a\0b", task="a", attempt=1, cost=0.0))
    with pytest.raises(ValueError, match="selected by a coded field"):
        list(Table(Row, floats=("cost",), store=store_of(where, mapped)).rows(cost=0.0))


@STORES
def test_many_rows_grow_the_index_and_stay_findable(where: str, mapped: MappedStore) -> None:
    table: Table[Row] = Table(Row, floats=("cost",), ints=("attempt",), store=store_of(where, mapped))
    for i in range(5000):
        table.put(Row(name=f"trial-{i}", task="a", attempt=i, cost=i / 7))
    for i in range(0, 5000, 2):
        table.remove(f"trial-{i}")
    assert len(table) == 2500 and table.get("trial-4999") == Row("trial-4999", "a", 4999, 4999 / 7)
    assert table.get("trial-4998") is None and len(table.slots) < 5000 * 4


@STORES
def test_long_random_walks_against_a_dict(where: str, mapped: MappedStore) -> None:
    """Seeded walks of many operations over few keys: long probe paths through removed slots,
    which the generated cases above reach too rarely (a lookup that stops at a removed slot was
    caught here, not there)."""
    rng = random.Random(21)
    (columns.COMPACT_AT, columns.MIN_SLOTS), saved = (4, 4), (columns.COMPACT_AT, columns.MIN_SLOTS)
    try:
        for _ in range(100):
            table: Table[Row] = Table(Row, floats=("cost",), ints=("attempt",), store=store_of(where, mapped))
            model: dict[str, Row] = {}
            for step in range(200):
                name = f"t-{rng.randrange(20)}"
                if rng.random() < 0.6:
                    model[name] = Row(name=name, task="a", attempt=step, cost=0.0)
                    table.put(model[name])
                else:
                    assert table.remove(name) == (model.pop(name, None) is not None)
                assert len(table) == len(model)
            assert sorted(table) == sorted(model.values())
    finally:
        columns.COMPACT_AT, columns.MIN_SLOTS = saved


@STORES
def test_codes_widen_as_the_distinct_values_grow(where: str, mapped: MappedStore) -> None:
    table: Table[Row] = Table(Row, floats=("cost",), ints=("attempt",), store=store_of(where, mapped))
    for i in range(70_000):  # a byte, then two, then four a row
        table.put(Row(name=f"t{i}", task=f"task-{i}", attempt=i, cost=0.0))
    assert table.columns["task"].codes.itemsize == 4  # type: ignore[union-attr]
    assert table.get("t255") == Row("t255", "task-255", 255, 0.0) and table.get("t65536").task == "task-65536"  # type: ignore[union-attr]
    assert [r.task for r in table.rows(task="task-69999")] == ["task-69999"]


@STORES
def test_rows_read_in_key_order_stay_whole_when_the_table_compacts_meanwhile(where: str, mapped: MappedStore) -> None:
    # summary.json is written from a thread while the watch changes the table: the rows asked for
    # come back as they were, even when removals rebuild the columns halfway through the read
    saved = (columns.COMPACT_AT, columns.MIN_SLOTS, columns.SORT_WHOLE, columns.SORT_BUCKETS)
    columns.COMPACT_AT, columns.MIN_SLOTS, columns.SORT_WHOLE, columns.SORT_BUCKETS = 4, 4, 6, 4
    try:
        table: Table[Row] = Table(Row, floats=("cost",), ints=("attempt",), store=store_of(where, mapped))
        before = [Row(f"t-{i:02d}", "abc"[i % 3], i, i / 4) for i in range(30)][::-1]
        for row in before:
            table.put(row)
        reading = table.rows_by_key()
        first = [next(reading) for _ in range(5)]
        width = len(table.alive)
        for row in before[:25]:
            table.remove(row.name)
        table.put(Row("t-00", "z", 99, 9.0))  # replaced meanwhile: the read still has the old row
        assert len(table.alive) < width  # compacted: the columns were rebuilt
        assert first + list(reading) == sorted(before, key=lambda r: r.name)
    finally:
        columns.COMPACT_AT, columns.MIN_SLOTS, columns.SORT_WHOLE, columns.SORT_BUCKETS = saved


@STORES
def test_many_rows_come_back_in_key_order_a_bucket_at_a_time(where: str, mapped: MappedStore) -> None:
    table: Table[Row] = Table(Row, floats=("cost",), ints=("attempt",), store=store_of(where, mapped))
    rng = random.Random(5)
    names = [f"s-{rng.getrandbits(40):010x}" for _ in range(20_000)]
    for i, name in enumerate(names):
        table.put(Row(name=name, task="ab"[i % 2], attempt=i, cost=0.0))
    assert [r.name for r in table.rows_by_key()] == sorted(set(names))
    assert [r.name for r in table.rows_by_key(task="b")] == sorted({n for i, n in enumerate(names) if i % 2})
