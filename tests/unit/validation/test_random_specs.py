"""Random sweeps never crash a handler: generated sweep specs, condition manifests and endpoint
configs (inline and ConfigMap YAML), owner-key and DSN Secret values and relay URLs — valid,
subtly wrong and garbage — go through the code the sweep reconcile and the trials run (the
pydantic twin of the CRD schema, condition, endpoints, store and dataset loading, relay_target's
checks of URL, owner key and DSN, the lock, the plan, admission and each trial's spec), and each
ends either accepted or refused with a message that names a spec field. Anything else escaping
is a bad input nobody thought of: it goes into the bad-input corpus (corpus.py) once understood.

Prints, per property: random <what>: <run> run, <accepted> accepted, <refused> refused naming a
field, 0 escaped (10,800 inputs in all).
"""

from __future__ import annotations

import asyncio
import copy
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.api.escapes import classify
from buzz_operator.api.relay import is_loopback_url
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.condition import ConditionError, check_endpoints
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import datasets, resolve
from buzz_operator.pod.trial_pod import forwarder_listen_address, stack_container
from buzz_operator.relay.bech32 import encode_nsec
from buzz_operator.relay.hosts import handshake_refusal, relay_url_authority, relay_url_problem
from buzz_operator.relay.nostr import SECP256K1_ORDER
from buzz_operator.sweep.admission import admit
from buzz_operator.sweep.drive.documents import lock_digest
from buzz_operator.sweep.invalid import validation_message
from buzz_operator.sweep.lock import sweep_lock
from buzz_operator.sweep.planner import plan_trials
from buzz_operator.sweep.settings import DEFAULT_STACK
from buzz_operator.sweep.trialspec import build_trial_spec, roster_endpoints, trial_object
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.support.corpus import load_corpus

corpus = load_corpus()
ROOT = Path(__file__).resolve().parents[3]
GOOD = corpus.good_body(ROOT, store_url="file:///var/lib/buzz-operator/bundles")
SPEC_CRD_URL = re.compile(r"^wss?://[^/\s]+(/.*)?$")  # spec.relay.url's pattern in the CRD
# "spec.<field>: …" — a refusal that says where ("spec: …" alone does not); a generated unknown
# key may be any text, so the field is whatever stands between "spec." and the first ": "
NAMES_FIELD = re.compile(r"^spec\..+?: ", re.DOTALL)
# Each property's share of the >= 10,000 inputs; modest per-example cost keeps the whole under a minute.
EXAMPLES = {"sweep": 3000, "manifest": 1800, "endpoints": 1000, "yaml": 2000, "owner_key": 1200,
            "dsn": 600, "relay_url": 1200}
# BUZZ_PROPERTY_EXPLORE=<n>: n times the inputs, freshly random — for hunting new classes by hand;
# the unit tier runs the same derandomized inputs every time
EXPLORE = int(os.environ.get("BUZZ_PROPERTY_EXPLORE") or 0)
if EXPLORE:
    EXAMPLES = {what: count * EXPLORE for what, count in EXAMPLES.items()}
EXAMPLES_MIN_SHARE = 0.9  # hypothesis may stop a little short (duplicates of small strategies)
TALLY: Counter[str] = Counter()
QUICK = dict(deadline=None, derandomize=not EXPLORE, database=None,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])

# --- generators -------------------------------------------------------------------------------

SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                   st.text(max_size=24))
GARBAGE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                       max_leaves=6)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += _paths(inner, (*prefix, index))
    return found


def _near(value: Any) -> st.SearchStrategy[Any]:
    """Subtly wrong variants of a valid value: the mistakes people make, not noise."""
    if isinstance(value, bool):
        return st.sampled_from([not value, "true", 1, None])
    if isinstance(value, int):
        return st.sampled_from([0, -1, value + 1, value * 1000, 2**31, 2**63, float(value) + 0.5, str(value), True])
    if isinstance(value, float):
        return st.sampled_from([0.0, -value, value * 1e6, float("inf"), float("nan"), str(value), 1e-300])
    if isinstance(value, str):
        return st.sampled_from(["", " ", value + " ", " " + value, value.upper(), value + "/..", value * 40,
                                value + "\x00", value + "é", value.replace("/", "//"), value + ":", "..", "-" + value])
    if isinstance(value, list):
        return st.sampled_from([[], value * 2, [None], [*value[:1], value[0]] if value else ["x"], {"0": value}])
    if isinstance(value, dict):
        return st.sampled_from([{}, {**value, "unknownField": 1}, [value], {k: None for k in value}])
    return GARBAGE


def _get(root: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        root = root[key]
    return root


@st.composite
def mutated(draw: st.DrawFn, base: Any, paths: list[tuple[Any, ...]], max_changes: int = 3) -> Any:
    """`base` with 1..max_changes changes: a near value, garbage, a deleted or an unknown key."""
    value = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, max_changes))):
        path = draw(st.sampled_from(paths))
        try:
            parent, old = _get(value, path[:-1]), _get(value, path)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed or replaced this path
        if not isinstance(parent, dict | list):
            continue
        action = draw(st.sampled_from(["near", "near", "garbage", "drop", "extra"]))
        if action == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "extra" and isinstance(old, dict):
            old[draw(st.text(min_size=1, max_size=12))] = draw(GARBAGE)
        elif action == "garbage":
            parent[path[-1]] = draw(GARBAGE)
        else:
            parent[path[-1]] = draw(_near(old))
    return value


# the sweep spec's mutations start from one that names its stack too, so spec.stack's fields
# (layout, binaryPath: spliced into the install script) are mutated with the rest
STACKED_SPEC = {**GOOD["spec"], "stack": {"image": "docker.io/buzz/stack:dev", "layout": "sprig",
                                          "binaryPath": "/usr/local/bin/sprig"}}
SPEC_PATHS = _paths(STACKED_SPEC)
MANIFEST_PATHS = _paths(GOOD["spec"]["condition"]["inline"])
ENDPOINT_PATHS = _paths(GOOD["spec"]["endpoints"]["config"])
SWEEP_NAMES = st.one_of(st.just("good"), st.from_regex(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", fullmatch=True))

_VALID_KEY = st.integers(1, SECP256K1_ORDER - 1).map(lambda n: n.to_bytes(32, "big").hex())


def _flip(text: str, at: int) -> str:
    at %= len(text)
    return text[:at] + ("q" if text[at] != "q" else "p") + text[at + 1:]


OWNER_KEYS = st.one_of(
    _VALID_KEY, _VALID_KEY.map(str.upper), _VALID_KEY.map(lambda k: f"  {k}\n"), _VALID_KEY.map(encode_nsec),
    st.tuples(_VALID_KEY.map(encode_nsec), st.integers(0, 62)).map(lambda t: _flip(*t)),  # bad checksum
    _VALID_KEY.map(lambda k: k[:-1]), _VALID_KEY.map(lambda k: k + "0"), _VALID_KEY.map(lambda k: "0x" + k),
    st.sampled_from(["", "0" * 64, f"{SECP256K1_ORDER:064x}", "f" * 64, "nsec1", "npub1" + "q" * 58]),
    st.text(max_size=80), st.from_regex(r"[0-9a-fA-Fg-z]{60,68}", fullmatch=True),
)
RELAY_URLS = st.one_of(
    st.from_regex(SPEC_CRD_URL, fullmatch=True),
    st.builds(lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
              st.sampled_from(["ws", "wss"]),
              st.sampled_from(["localhost", "relay.example.com", "127.0.0.1", "[::1]", "[::1", "::1", "user@h",
                               "h.", "", "xn--", "[fe80::1%eth0]", "a:b"]),
              st.one_of(st.just(""), st.integers(-5, 99999).map(lambda p: f":{p}"), st.sampled_from([":", ":x"])),
              st.sampled_from(["", "/", "/path", "/a b", "?q=1", "#f", "/%zz"])),
)

# --- the code the handlers run ------------------------------------------------------------------


async def reconcile_pure(body: dict[str, Any], name: str = "good", *,
                         config_maps: dict[str, dict[str, str]] | None = None) -> str | None:
    """What the sweep reconcile would conclude without a cluster: None when it would go on to
    create trials (each trial spec is built too), else the message of its Accepted=False.
    `config_maps` stands in for the ConfigMaps a configMapRef condition or endpoints names."""
    try:
        spec = BuzzSweepSpec.model_validate(body["spec"])
    except ValidationError as error:
        return validation_message(error)
    maps = config_maps or {}
    try:
        if problem := relay_url_problem(spec.relay.url):  # relay_target's first check
            raise InputError("spec.relay.url", problem)
        if (ref := spec.condition.config_map_ref) is not None:  # load_condition once the ConfigMap is read
            condition = resolve.condition_from_config_map(maps[ref.name], ref.manifest_key)
        else:
            condition = await resolve.load_condition(None, "ns", spec)  # type: ignore[arg-type]  # inline: no API
        if spec.endpoints is not None and (eref := spec.endpoints.config_map_ref) is not None:
            config = resolve.endpoints_from_config_map(maps[eref.name], eref.key)  # load_endpoints, after the read
            try:
                check_endpoints(condition.manifest, config)
            except ConditionError as exc:
                raise InputError("spec.endpoints", str(exc)) from exc
        else:
            if spec.endpoints is not None:  # the Secret is the cluster tier's business
                spec = spec.model_copy(update={"endpoints": spec.endpoints.model_copy(update={"secret_ref": None})})
            await resolve.load_endpoints(None, "ns", spec, condition.manifest)  # type: ignore[arg-type]
        if spec.storage is not None and spec.storage.credentials_secret_ref is not None:
            spec = spec.model_copy(update={"storage": spec.storage.model_copy(update={"credentials_secret_ref": None})})
        await resolve.open_sweep_store(None, "ns", spec)  # type: ignore[arg-type]  # no Secret: no API
        dataset, tasks = await datasets.load_tasks(None, "ns", spec, None)  # type: ignore[arg-type]
    except InputError as error:
        return str(error)
    manifest = condition.manifest
    images = {t.name: t.image_ref(spec.task_image_registry, dataset) for t in tasks}
    lock_digest(sweep_lock(manifest=manifest, dataset=dataset, tasks=tasks, task_images=images,
                           stack=spec.stack_source(DEFAULT_STACK), stack_digests=None,
                           operator_image=spec.operator_image or "o"))
    planned = plan_trials(name, "uid-1", manifest.sha256, [t.name for t in tasks], spec.attempts)
    decision = admit(planned, [], parallelism=spec.parallelism, endpoint_caps={}, operator_cap=None, cost_so_far=0.0,
                     max_cost=spec.budget.max_cost_usd if spec.budget else None, suspended=spec.suspend,
                     endpoints=roster_endpoints(manifest), namespace="ns")
    by_name = {t.name: t for t in tasks}
    for trial in decision.admit[:3]:
        trial_spec = build_trial_spec(trial, task=by_name[trial.task], manifest=manifest,
                                      condition_hash=manifest.sha256, sweep=spec, dataset=dataset,
                                      default_stack=DEFAULT_STACK, default_operator_image="o")
        trial_object(trial, trial_spec, namespace="ns", sweep_uid="uid-1", generation=1)
        stack_container(trial_spec.stack_source, trial_spec.image_pull_policy.value)  # the install script
    if is_loopback_url(spec.relay.url):  # each trial's pod spec (a direct URL has no forwarder)
        forwarder_listen_address(spec.relay.url)
    relay_url_authority(spec.relay.url)
    return None


def judge(kind: str, run: Callable[[], str | None]) -> None:
    """One input's verdict: accepted, or refused naming a field; an escape fails the test with
    the condition the handler would now write for it (api/escapes.py)."""
    TALLY["run"] += 1
    try:
        message = run()
    except Exception as error:
        TALLY["escaped"] += 1
        escape = classify(error, kind)
        raise AssertionError(f"{kind}: escaped as {escape.reason}: {escape.message}") from error
    if message is None:
        TALLY["accepted"] += 1
        return
    assert NAMES_FIELD.match(message), f"{kind}: refused without naming a field: {message!r}"
    TALLY["refused"] += 1


def _sweep(spec: dict[str, Any]) -> dict[str, Any]:
    return {**GOOD, "spec": spec}


# --- properties -------------------------------------------------------------------------------


def _run(prop: Callable[[], None], what: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Runs one property and prints how many inputs it judged (each test prints its own line,
    so the figure survives xdist spreading them over workers)."""
    before = TALLY.copy()
    prop()
    done = TALLY - before
    with capsys.disabled():
        print(f"\nrandom {what}: {done['run']} run, {done['accepted']} accepted, "
              f"{done['refused']} refused naming a field, {done['escaped']} escaped")
    assert done["run"] >= EXAMPLES_MIN_SHARE * EXAMPLES[what.split()[0]] and not done["escaped"]


@settings(max_examples=EXAMPLES["sweep"], **QUICK)
@given(mutated(STACKED_SPEC, SPEC_PATHS), SWEEP_NAMES)
def sweep_specs(spec: dict[str, Any], name: str) -> None:
    judge("sweep", lambda: asyncio.run(reconcile_pure(_sweep(spec), name)))


def test_random_sweep_specs(capsys: pytest.CaptureFixture[str]) -> None:
    _run(sweep_specs, "sweep specs", capsys)


@settings(max_examples=EXAMPLES["manifest"], **QUICK)
@given(st.one_of(mutated(GOOD["spec"]["condition"]["inline"], MANIFEST_PATHS, 4), GARBAGE))
def condition_manifests(manifest: Any) -> None:
    spec = copy.deepcopy(GOOD["spec"])
    spec["condition"] = {"inline": manifest}
    judge("manifest", lambda: asyncio.run(reconcile_pure(_sweep(spec))))


def test_random_condition_manifests(capsys: pytest.CaptureFixture[str]) -> None:
    _run(condition_manifests, "manifest condition manifests", capsys)


@settings(max_examples=EXAMPLES["endpoints"], **QUICK)
@given(st.one_of(mutated(GOOD["spec"]["endpoints"]["config"], ENDPOINT_PATHS, 4), GARBAGE))
def endpoint_configs(config: Any) -> None:
    spec = copy.deepcopy(GOOD["spec"])
    spec["endpoints"]["config"] = config
    judge("endpoints", lambda: asyncio.run(reconcile_pure(_sweep(spec))))


def test_random_endpoint_configs(capsys: pytest.CaptureFixture[str]) -> None:
    _run(endpoint_configs, "endpoints configs", capsys)


PERSONA = (ROOT / "manifests" / "personas" / "solo.md").read_text()
HOLE = "__HOLE__"
# what YAML can say that JSON cannot, and the YAML mistakes people make
YAML_TOKENS = st.sampled_from([
    ".inf", "-.inf", ".nan", "2026-12-01", "2026-12-01T10:00:00Z", "~", "yes", "off", "0o777", "0x1F", "1_000",
    "1e400", "!!binary aGVsbG8=", "!!set {a: null}", "!!python/object:os.system x", "!!timestamp 2001-12-14",
    "'unterminated", "{", "[", "- a", "&x [*x]", "*undefined", "!!int abc", "!!float x", "\"\\x\"", "|", ">-",
    "@reserved", "`reserved", "%YAML", "? a", "!!str", "!!null x", "12:30:00", "0b101", "+12", "!custom x",
])


@st.composite
def yaml_config_map(draw: st.DrawFn, base: Any, paths: list[tuple[Any, ...]], key: str) -> dict[str, str]:
    """A ConfigMap's data: `base` (mutated, maybe) dumped as YAML with one scalar swapped for a
    YAML-only token, or raw text; the condition's prompt file beside it (maybe changed)."""
    import yaml

    doc = draw(st.one_of(st.just(copy.deepcopy(base)), mutated(base, paths, 2)))
    choice = draw(st.sampled_from(["token", "token", "plain", "text"]))
    if choice == "text":
        # a plain-string document: once read as a path on the operator's disk (a relative one
        # even loaded the repository's own manifest)
        text = draw(st.one_of(st.text(max_size=200), st.sampled_from(
            ["~0", "/etc/hostname", "manifests/standin-oracle.yaml", "manifests/endpoints/standin.json"])))
    else:
        if choice == "token":
            for path in draw(st.lists(st.sampled_from(paths), min_size=1, max_size=2)):
                try:
                    parent = _get(doc, path[:-1])
                    parent[path[-1]] = HOLE
                except (KeyError, IndexError, TypeError):
                    continue
        text = yaml.safe_dump(doc, sort_keys=False)
        text = text.replace(HOLE, draw(YAML_TOKENS))
    data = {key: text}
    persona = draw(st.sampled_from([PERSONA, PERSONA, PERSONA + " ", "", None]))
    if persona is not None:
        data[draw(st.sampled_from(["personas__solo.md", "personas/solo.md", "solo.md"]))] = persona
    return data


@settings(max_examples=EXAMPLES["yaml"] // 2, **QUICK)
@given(yaml_config_map(GOOD["spec"]["condition"]["inline"], MANIFEST_PATHS, "manifest.yaml"))
def yaml_condition_config_maps(data: dict[str, str]) -> None:
    spec = copy.deepcopy(GOOD["spec"])
    spec["condition"] = {"configMapRef": {"name": "condition"}}
    judge("yaml", lambda: asyncio.run(reconcile_pure(_sweep(spec), config_maps={"condition": data})))


@settings(max_examples=EXAMPLES["yaml"] // 2, **QUICK)
@given(yaml_config_map(GOOD["spec"]["endpoints"]["config"], ENDPOINT_PATHS, "endpoints.yaml"))
def yaml_endpoint_config_maps(data: dict[str, str]) -> None:
    spec = copy.deepcopy(GOOD["spec"])
    spec["endpoints"] = {"configMapRef": {"name": "endpoints", "key": "endpoints.yaml"}}
    judge("yaml", lambda: asyncio.run(reconcile_pure(_sweep(spec), config_maps={"endpoints": data})))


def test_random_yaml_config_maps(capsys: pytest.CaptureFixture[str]) -> None:
    def both() -> None:
        yaml_condition_config_maps()
        yaml_endpoint_config_maps()

    _run(both, "yaml condition and endpoints ConfigMaps", capsys)


REF = BuzzSweepSpec.model_validate(GOOD["spec"]).relay.owner_key_secret_ref


def _owner_key(value: str) -> str | None:
    try:
        hex_key = resolve.owner_key_hex(value, REF)
    except InputError as error:
        assert len(value.strip()) < 16 or value.strip() not in str(error), "the message quotes the key"
        return str(error)
    # what every later reader of the key does with it
    from buzz_operator.relay.identities import stable_keypair
    from buzz_operator.relay.nip_oa import compute_auth_tag

    probe = stable_keypair(hex_key, "preflight:owner-key-probe")
    compute_auth_tag(hex_key, probe.pubkey_hex)
    return None


@settings(max_examples=EXAMPLES["owner_key"], **QUICK)
@given(OWNER_KEYS)
def owner_key_values(value: str) -> None:
    judge("owner-key", lambda: _owner_key(value))


def test_random_owner_key_secret_values(capsys: pytest.CaptureFixture[str]) -> None:
    _run(owner_key_values, "owner_key Secret values", capsys)


DSNS = st.one_of(
    st.from_regex(r"postgres(ql)?://([a-z]{1,6}(:[^@/\s]{0,8})?@)?[a-z0-9.\[\]:,-]{0,24}(/[a-z]{0,6})?(\?[a-z=&_%-]{0,24})?",
                  fullmatch=True),
    st.sampled_from(["", "not a dsn", "mysql://x", "postgresql://[::1/db", "postgresql://h:x/db",
                     "postgresql://u:p@h:5432/db?sslmode=bogus", "postgresql://h/db?port=x", "postgresql:///db?host=/tmp",
                     "postgresql://h1:5432,h2:5433/db", "postgresql://u:p%zz@h/db", "postgres://h/db?target_session_attrs=x"]),
    st.text(max_size=60),
)


def _dsn(dsn: str) -> str | None:
    """relay_target's check of the DSN Secret; what it accepts asyncpg's own parser takes too (its
    private parser, called here only: the same one connect() runs before dialling)."""
    from asyncpg import connect_utils

    if problem := resolve.dsn_problem(dsn.strip()):
        assert len(dsn) < 12 or dsn.strip() not in problem, "the message quotes the DSN"
        return f"spec.relay.postgresDsnSecretRef: {problem}"
    connect_utils._parse_connect_dsn_and_args(
        dsn=dsn.strip(), host=None, port=None, user=None, password=None, passfile=None, database=None, ssl=None,
        service=None, servicefile=None, direct_tls=None, server_settings=None, target_session_attrs=None,
        krbsrvname=None, gsslib=None)
    return None


@settings(max_examples=EXAMPLES["dsn"], **QUICK)
@given(DSNS)
def dsn_values(dsn: str) -> None:
    judge("dsn", lambda: _dsn(dsn))


def test_random_dsn_secret_values(capsys: pytest.CaptureFixture[str]) -> None:
    _run(dsn_values, "dsn Postgres DSN Secret values", capsys)


def _relay_url(url: str, status: int) -> str | None:
    spec = copy.deepcopy(GOOD["spec"])
    spec["relay"]["url"] = url
    if not SPEC_CRD_URL.match(url):
        return "spec.relay.url: refused by the CRD's pattern"  # the API server never stores it
    if (message := asyncio.run(reconcile_pure(_sweep(spec)))) is not None:
        return message
    refusal = handshake_refusal(url, status)  # preflight's reading of the relay's handshake answer
    return None if refusal is None else f"spec.relay.url: {refusal}"


@settings(max_examples=EXAMPLES["relay_url"], **QUICK)
@given(RELAY_URLS, st.integers(100, 599))
def relay_urls(url: str, status: int) -> None:
    judge("relay-url", lambda: _relay_url(url, status))


def test_random_relay_urls_and_handshake_answers(capsys: pytest.CaptureFixture[str]) -> None:
    _run(relay_urls, "relay_url relay URLs and handshake answers", capsys)
