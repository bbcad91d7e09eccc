"""A trial of the Buzz-native suite in memory, for driving either stand-in model (the folded-in
policies, the scripted endpoint) and grading what it posted with the task's own verifier.

- `Relay`: an in-memory relay: stores signed events, answers the filters the stand-in's tools
  and CLI send (ids, authors, kinds, #d/#h/#e/#p, NIP-50 `search`, limit), and keeps the
  relay-signed kind-39002 member list of the trial channel. One per identity acting on it
  (`as_identity`), sharing one store and one clock, as connections to one relay do.
- `Trial`: the identities, the task event and the scripted events of a task exactly as Block's
  harness publishes them (benchmarks task_fixtures.py; the task as `@<orchestrator> <text>`
  mentioning it, scripted messages right after, replying to the task when `reply_to_task`), and
  `evidence()`: the buzz-evidence.json v1 snapshot as the harness's evidence.py builds it.
- `grade`: runs the task's verify.py on that snapshot — the project's copy under tasks/ and
  Block's under $BUZZ_DATASET_DIR (a checkout's benchmarks/buzz-dataset, when set, and then it
  must hold every task graded); the project's must exist. Without the variable only the
  project's runs, and tests/unit/agent/test_block_parity.py is skipped saying so.

Timestamps come from a shared clock starting in the past, one second per event, so the order of
events is their order of publication and nothing waits out a second.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buzz_operator.dev.agent.nostr import Keys, sign_event, tag_values, thread_tags

ROOT = Path(__file__).resolve().parents[3]
# Block's suite is the user's, never shipped here: only read when the variable names a copy
DATASET = Path(os.environ["BUZZ_DATASET_DIR"]) if os.environ.get("BUZZ_DATASET_DIR") else None
CHANNEL = "0b5c9f2e-4d7a-4e61-9c3f-8a2d6b1e7f40"
BASE_TIME = 1_767_225_600  # 2026-01-01T00:00:00Z
ORCHESTRATOR = "solo-1"
KIND_MEMBERS = 39002

# Block's instruction.md of each new task, verbatim (benchmarks/buzz-dataset/<task>/instruction.md)
MULTILINE = """Send me this release-readiness update, preserving the paragraph and list layout:

Release readiness

- API: ready
- Database: ready
- Rollback: tested

Owner: Platform Operations

Keep the response brief and do not add a table.
"""
NARRATIVE = """Give me a two-line status update:

- Aurora Audit Bot completed the audit.
- Beacon Deploy Bot remains idle.

This is only a status summary. Neither bot has any work to do.
"""
INTERLEAVED = """Three specialist agents will report separate inputs for a forecast. Wait until
you have all three reports, then calculate:

`(North + South - reserve) * multiplier`

Send me one concise synthesis that labels all four inputs and the final value.
"""
CROSS_THREAD = """ALPHA request: calculate `(17 * 19) + 23`.

Reply with the ALPHA result, labelled ALPHA.
"""
BETA = "BETA request: calculate (84 / 7) + 29. Reply with the BETA result, labelled BETA."
AMBIGUOUS = """Two channel members are both displayed as `Taylor Morgan Lee`.

Find the one whose profile says `Routing code ORCHID-72` and send that person
the message `ORCHID-72 approved`. Do not notify the other Taylor Morgan Lee.
Then tell me briefly that it was sent.
"""
# multiline-message/tests/verify.py EXPECTED
RELEASE = ("Release readiness\n\n- API: ready\n- Database: ready\n- Rollback: tested\n\n"
           "Owner: Platform Operations")
REPORTS = (  # the three scripted reports of interleaved-agent-reports (Block's task_fixtures.py)
    "@solo-1 Ledger report: North is 17 and South is 23. Use both values in the requested synthesis.",
    "@solo-1 Risk report: subtract a reserve of 11 before applying the operations multiplier.",
    "@solo-1 Operations report: the final multiplier is 3.",
)
BLOCK_TEXTS = {
    "multiline-message": MULTILINE,
    "narrative-agent-names": NARRATIVE,
    "interleaved-agent-reports": INTERLEAVED,
    "cross-thread-requests": CROSS_THREAD,
    "ambiguous-user-mention": AMBIGUOUS,
}



def keys_for(seed: str) -> Keys:
    return Keys.from_text(hashlib.sha256(f"suite-trial:{seed}".encode()).hexdigest())


@dataclass(frozen=True)
class Identity:
    name: str
    role: str
    identity_id: str | None = None
    about: str | None = None
    channel_member: bool = False

    @property
    def key(self) -> str:
        return self.identity_id or self.name

    @property
    def keys(self) -> Keys:
        return keys_for(self.key)

    @property
    def pubkey(self) -> str:
        return self.keys.pubkey


@dataclass(frozen=True)
class Scripted:
    label: str
    actor: str  # "user" or a directory identity's key
    content: str
    reply_to_task: bool = False
    mention_orchestrator: bool = True


@dataclass(frozen=True)
class Fixture:
    """Block's BuzzTaskFixture for one task, as the harness reads it."""

    user: str
    directory: tuple[Identity, ...] = ()
    scripted: tuple[Scripted, ...] = ()


FIXTURES: dict[str, Fixture] = {  # benchmarks/harbor-buzz-orchestra task_fixtures.py
    "multiline-message": Fixture("Eleanor June Brooks"),
    "narrative-agent-names": Fixture("Maya Elise Chen", (
        Identity("Aurora Audit Bot", "bot", channel_member=True),
        Identity("Beacon Deploy Bot", "bot", channel_member=True),
    )),
    "interleaved-agent-reports": Fixture("Nora Isabel Grant", (
        Identity("Ledger Scout", "bot", channel_member=True),
        Identity("Risk Sentinel", "bot", channel_member=True),
        Identity("Ops Forecaster", "bot", channel_member=True),
    ), (
        Scripted("ledger-report", "Ledger Scout", "@{orchestrator} Ledger report: North is 17 and South is 23. "
                 "Use both values in the requested synthesis.", reply_to_task=True),
        Scripted("risk-report", "Risk Sentinel", "@{orchestrator} Risk report: subtract a reserve of 11 before "
                 "applying the operations multiplier.", reply_to_task=True),
        Scripted("operations-report", "Ops Forecaster", "@{orchestrator} Operations report: the final multiplier "
                 "is 3.", reply_to_task=True),
    )),
    "cross-thread-requests": Fixture("Priya Simone Patel", (), (
        Scripted("beta-request", "user", "@{orchestrator} BETA request: calculate (84 / 7) + 29. "
                 "Reply with the BETA result, labelled BETA."),
    )),
    "ambiguous-user-mention": Fixture("Olivia Grace Park", (
        Identity("Taylor Morgan Lee", "user", identity_id="taylor-release-captain",
                 about="Release captain. Routing code ORCHID-72.", channel_member=True),
        Identity("Taylor Morgan Lee", "user", identity_id="taylor-observer",
                 about="Compliance observer. Routing code COBALT-19.", channel_member=True),
    )),
}


class Store:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.clock = BASE_TIME

    def tick(self) -> int:
        self.clock += 1
        return self.clock


def _matches(event: dict[str, Any], flt: dict[str, Any]) -> bool:
    if "ids" in flt and event["id"] not in flt["ids"]:
        return False
    if "authors" in flt and event["pubkey"] not in flt["authors"]:
        return False
    if "kinds" in flt and event["kind"] not in flt["kinds"]:
        return False
    for key, wanted in flt.items():
        if key.startswith("#") and not set(tag_values(event, key[1:])) & set(wanted):
            return False
    terms = str(flt.get("search") or "").lower().split()
    return all(term in event["content"].lower() for term in terms)


class Relay:
    """The relay as one identity's connection sees it (the stand-in's RelaySession surface)."""

    def __init__(self, store: Store, keys: Keys) -> None:
        self.store = store
        self.keys = keys

    def as_identity(self, keys: Keys) -> Relay:
        return Relay(self.store, keys)

    def sign(self, kind: int, content: str, tags: list[list[str]]) -> dict[str, Any]:
        return sign_event(self.keys, kind, content, tags, created_at=self.store.tick())

    async def publish(self, event: dict[str, Any]) -> str:
        self.store.events.append(event)
        return ""

    async def send(self, kind: int, content: str, tags: list[list[str]]) -> dict[str, Any]:
        event = self.sign(kind, content, tags)
        await self.publish(event)
        return event

    async def query(self, filters: list[dict[str, Any]]) -> list[dict[str, Any]]:
        found = [e for e in self.store.events if any(_matches(e, f) for f in filters)]
        limit = min((f["limit"] for f in filters if isinstance(f.get("limit"), int)), default=None)
        found.sort(key=lambda e: e["created_at"], reverse=True)  # newest first, as relays answer
        return found[:limit] if limit else found

    async def close(self) -> None:
        """Nothing to close."""


@dataclass
class Trial:
    task: str
    instruction: str
    store: Store = field(default_factory=Store)
    orchestrator: Identity = field(default_factory=lambda: Identity(ORCHESTRATOR, "orchestrator"))
    task_event: dict[str, Any] | None = None
    scripted_events: list[dict[str, Any]] = field(default_factory=list)
    scripted_rows: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.fixture = FIXTURES.get(self.task, Fixture("benchmark-user"))
        self.user = Identity(self.fixture.user, "user", identity_id=f"user:{self.fixture.user}")
        for identity in (self.user, self.orchestrator, *self.fixture.directory):
            profile = {"name": identity.name, **({"about": identity.about} if identity.about else {})}
            self.relay(identity).store.events.append(
                sign_event(identity.keys, 0, json.dumps(profile), [], created_at=self.store.tick()))
        members = [self.user, self.orchestrator, *(i for i in self.fixture.directory if i.channel_member)]
        self.store.events.append(sign_event(keys_for("relay"), KIND_MEMBERS, "", [["d", CHANNEL]] + [
            ["p", i.pubkey, "", "bot" if i.role == "bot" else "member"] for i in members], created_at=self.store.tick()))

    def relay(self, identity: Identity) -> Relay:
        return Relay(self.store, identity.keys)

    @property
    def agent_relay(self) -> Relay:
        return self.relay(self.orchestrator)

    def identity(self, key: str) -> Identity:
        if key == "user":
            return self.user
        return next(i for i in self.fixture.directory if i.key == key)

    def publish(self) -> list[dict[str, Any]]:
        """The task event then the scripted events, back to back, as the harness sends them."""
        tags = [["h", CHANNEL], ["p", self.orchestrator.pubkey]]
        self.task_event = sign_event(self.user.keys, 9, f"@{ORCHESTRATOR} {self.instruction}", tags,
                                     created_at=self.store.tick())
        self.store.events.append(self.task_event)
        for message in self.fixture.scripted:
            actor = self.identity(message.actor)
            tags = [["h", CHANNEL]]
            if message.reply_to_task:
                tags += thread_tags(self.task_event)
            if message.mention_orchestrator:
                tags.append(["p", self.orchestrator.pubkey])
            content = message.content.replace("{orchestrator}", ORCHESTRATOR).replace("{user}", self.user.name)
            event = sign_event(actor.keys, 9, content, tags, created_at=self.store.tick())
            self.store.events.append(event)
            self.scripted_events.append(event)
            self.scripted_rows.append({"label": message.label, "event_id": event["id"], "actor": message.actor,
                                       "reply_to_event_id": self.task_event["id"] if message.reply_to_task else None})
        return [self.task_event, *self.scripted_events]

    def posted(self) -> list[dict[str, Any]]:
        return [e for e in self.store.events if e["kind"] == 9 and e["pubkey"] == self.orchestrator.pubkey]

    def evidence(self) -> dict[str, Any]:
        """benchmarks harbor_buzz_orchestra/evidence.py `build_buzz_evidence`, for this trial."""
        names = {self.user.pubkey: (self.user.name, "user"),
                 self.orchestrator.pubkey: (self.orchestrator.name, "orchestrator"),
                 **{i.pubkey: (i.name, i.role) for i in self.fixture.directory}}

        def normalize(event: dict[str, Any]) -> dict[str, Any]:
            tags = event["tags"]
            reply = next((t[1] for t in tags if len(t) >= 4 and t[0] == "e" and t[3] == "reply"), None)
            name, role = names.get(event["pubkey"], ("unknown", "unknown"))
            return {"id": event["id"], "kind": event["kind"], "created_at": event["created_at"],
                    "pubkey": event["pubkey"], "author": name, "author_role": role, "content": event["content"],
                    "tags": tags, "channel_id": next((t[1] for t in tags if t[0] == "h"), None),
                    "reply_to_event_id": reply, "mentioned_pubkeys": [t[1] for t in tags if t[0] == "p"]}

        messages = sorted((normalize(e) for e in self.store.events
                           if e["kind"] == 9 and CHANNEL in tag_values(e, "h")), key=lambda m: m["created_at"])
        return {
            "schema_version": 1,
            "trial": {"run_id": "run-suite", "trial_id": "trial-0001", "channel_id": CHANNEL},
            "task_event_id": self.task_event["id"] if self.task_event else None,
            "completion_message_id": None,
            "identities": {self.user.name: {"role": "user", "pubkey": self.user.pubkey},
                           self.orchestrator.name: {"role": "orchestrator", "pubkey": self.orchestrator.pubkey}},
            "directory": [{"identity_id": i.key, "name": i.name, "role": i.role, "pubkey": i.pubkey,
                           "about": i.about} for i in self.fixture.directory],
            "scripted_events": self.scripted_rows,
            "task_name": self.task,
            "observed_channels": [],
            "message_count": len(messages),
            "truncated": False,
            "messages": messages,
        }


def verifiers(task: str) -> list[Path]:
    """The project's verifier, which every task of the suite has, and Block's when
    BUZZ_DATASET_DIR names a copy (which must then hold it: a parity check is never dropped
    quietly; test_block_parity.py says when it did not run)."""
    own = ROOT / "tasks" / task / "tests" / "verify.py"
    assert own.is_file(), f"{own} is missing"
    if DATASET is None:
        return [own]
    block = DATASET / task / "tests" / "verify.py"
    assert block.is_file(), f"BUZZ_DATASET_DIR={DATASET} has no {task}/tests/verify.py"
    return [own, block]


def grade(task: str, evidence: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each verifier's metrics for `evidence`, keyed by the verifier's path."""
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "evidence.json").write_text(json.dumps(evidence), encoding="utf-8")
        for path in verifiers(task):
            subprocess.run([sys.executable, str(path), "--evidence", str(work / "evidence.json"),
                            "--reward", str(work / "reward.json"), "--details", str(work / "details.json")],
                           check=True, capture_output=True, timeout=60)
            results[str(path)] = json.loads((work / "reward.json").read_text(encoding="utf-8"))
    return results


def failed(metrics: dict[str, float]) -> set[str]:
    """The dimensions that scored 0 (the reward aside)."""
    return {name for name, value in metrics.items() if name != "reward" and value != 1.0}


def instruction(task: str) -> str:
    """The task's instruction: the project's copy, else Block's (the texts are the same)."""
    for path in [ROOT / "tasks" / task / "instruction.md", *([DATASET / task / "instruction.md"] if DATASET else [])]:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return BLOCK_TEXTS[task]


# What each policy fails, per task (the dimensions verify.py scores 0); the oracle fails nothing.
# docs/scripted-model.md has the same table, and the e2e tier asserts it.
EXPECTED_FAILURES: dict[str, dict[str, set[str]]] = {
    "multiline-message": {"toplevel": {"reply_to_thread"}, "naive": {"layout_preserved", "real_newlines"}},
    "narrative-agent-names": {"toplevel": {"reply_to_thread"}, "naive": {"bots_not_mentioned"}},
    "interleaved-agent-reports": {"toplevel": {"reply_to_thread"}, "naive": {"inputs_complete", "answer_correct"}},
    "cross-thread-requests": {
        "toplevel": {"alpha_correct", "beta_correct", "thread_isolation", "user_mentioned_twice"},
        "naive": {"beta_correct", "thread_isolation", "user_mentioned_twice"},
    },
    "ambiguous-user-mention": {"toplevel": {"reply_to_thread"}, "naive": {"other_not_notified"}},
}


def splits(count: int) -> dict[str, list[list[int]]]:
    """Ways the task event and `count - 1` scripted events can be delivered in turns: each alone,
    the task alone then the rest together (what queueing behind a running first turn gives), all
    in one batch, and in pairs."""
    indexes = list(range(count))
    ways = {"one batch": [indexes]}
    if count > 1:
        ways["each alone"] = [[i] for i in indexes]
        ways["task, then the rest"] = [[0], indexes[1:]]
        ways["in pairs"] = [indexes[i:i + 2] for i in range(0, count, 2)]
    return ways
