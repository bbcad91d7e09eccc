"""The stand-in `buzz` CLI (docs/relay-protocol.md#cli subcommands, JSON stdout, exit codes) against the dev relay,
run from the built stack exactly as an agent's shell would run it."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.condition import ExperimentManifest, plan_seats
from buzz_operator.relay.tenant import provision
from buzz_operator.relay.tenant_models import DirectoryEntry, TenantRequest

pytestmark = pytest.mark.timeout(120)
MANIFEST = Path(__file__).resolve().parents[3] / "manifests" / "standin-oracle.yaml"


class Cli:
    def __init__(self, exe: Path, relay_url: str, secret_hex: str, auth_tag: str) -> None:
        self.exe, self.env = exe, {"BUZZ_RELAY_URL": relay_url, "BUZZ_PRIVATE_KEY": secret_hex,
                                   "BUZZ_AUTH_TAG": auth_tag}

    async def run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
                  ) -> tuple[int, Any, str]:
        proc = await asyncio.create_subprocess_exec(
            str(self.exe), *args, env=env if env is not None else self.env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else b""), 30)
        return proc.returncode or 0, json.loads(out) if out.strip() else None, err.decode()

    async def ok(self, *args: str, stdin: str | None = None) -> Any:
        code, out, err = await self.run(*args, stdin=stdin)
        assert code == 0, err
        return out


async def test_cli_subcommands_against_the_dev_relay(stage, stack_dir: Path) -> None:
    manifest = ExperimentManifest.load(MANIFEST)
    directory = [DirectoryEntry(f"benchmark-user-{i:02d}", "user") for i in (1, 2)] + [
        DirectoryEntry("benchmark-bot-01", "bot")]
    handle, tenant = await provision(stage.target, TenantRequest(
        run_id="cli", trial_id=f"t-{secrets.token_hex(6)}", manifest_sha256=manifest.sha256,
        seats=plan_seats(manifest), channel_label="cli", task_name="cli", directory=directory))
    exe = stack_dir / "bin" / "buzz"
    # the harness's host view is the HTTP URL; agents use ws:// — both reach the same relay
    user = Cli(exe, stage.agent_url.replace("ws://", "http://"), tenant.user_secret_hex, tenant.user_auth_tag)
    orch_secret = tenant.seats[handle.orchestrator.seat_id]
    orch = Cli(exe, stage.agent_url, orch_secret.secret_hex, orch_secret.auth_tag)
    channel, orch_pk = handle.channel_id, handle.orchestrator.pubkey

    sent = await user.ok("messages", "send", "--channel", channel, "--content", "@solo-1 hi", "--mention", orch_pk)
    # the real CLI's shape: normalize_write_response plus the pubkeys the event mentions
    assert set(sent) == {"event_id", "accepted", "message", "mention_pubkeys"}
    assert sent["accepted"] is True and isinstance(sent["message"], str) and sent["mention_pubkeys"] == [orch_pk]
    reply = await orch.ok("messages", "send", "--channel", channel, "--content", "-", "--reply-to",
                          sent["event_id"], stdin="from stdin")
    nested = await user.ok("messages", "send", "--channel", channel, "--content", "nested", "--reply-to",
                           reply["event_id"])
    got = await user.ok("messages", "get", "--channel", channel, "--limit", "100")
    assert {m["id"] for m in got} == {sent["event_id"], reply["event_id"], nested["event_id"]}
    assert set(got[0]) == {"id", "pubkey", "kind", "created_at", "content", "tags"}
    events = {m["id"]: m for m in got}
    assert ["p", orch_pk] in events[sent["event_id"]]["tags"] and ["h", channel] in events[sent["event_id"]]["tags"]
    assert any(tag[0] == "auth" for tag in events[sent["event_id"]]["tags"])  # NIP-OA on every event
    assert events[reply["event_id"]]["content"] == "from stdin"
    assert ["e", sent["event_id"], "", "reply"] in events[reply["event_id"]]["tags"]
    assert ["e", sent["event_id"], "", "root"] in events[nested["event_id"]]["tags"]
    assert ["e", reply["event_id"], "", "reply"] in events[nested["event_id"]]["tags"]

    names = {d.name: d.pubkey for d in handle.directory}
    profiles = await user.ok("users", "get", "--pubkey", names["benchmark-user-01"],
                             "--pubkey", names["benchmark-bot-01"])
    assert sorted(p["name"] for p in profiles) == ["benchmark-bot-01", "benchmark-user-01"]

    # by name: the relay's NIP-50 search, then a case-insensitive substring of name/display_name
    (found,) = await orch.ok("users", "get", "--name", "BENCHMARK-user-01")
    assert found == {"name": "benchmark-user-01", "pubkey": names["benchmark-user-01"]}
    assert {p["pubkey"] for p in await orch.ok("users", "get", "--name", "benchmark-user")} >= {
        names["benchmark-user-01"], names["benchmark-user-02"]}
    assert await orch.ok("users", "get", "--name", "nobody-by-this-name") == []
    (own,) = await orch.ok("users", "get")  # no --pubkey: this identity's own profile
    assert own["pubkey"] == orch_pk

    created = await orch.ok("channels", "create", "--name", "fix-pr-1234", "--type", "stream",
                            "--visibility", "private", "--description", "cli test", "--ttl", "3600")
    assert set(created) == {"event_id", "accepted", "message", "channel_id"}
    side = created["channel_id"]
    added = await orch.ok("channels", "add-member", "--channel", side, "--pubkey", names["benchmark-user-02"],
                          "--role", "member")
    assert set(added) == {"event_id", "accepted", "message"} and added["accepted"] is True
    await orch.ok("channels", "invite", "--channel", side, "--pubkey", names["benchmark-bot-01"], "--role", "bot")
    (row,) = await orch.ok("channels", "search", "--query", "FIX-PR-1234", "--exact")
    assert row == {"channel_id": side, "name": "fix-pr-1234", "channel_type": "stream", "visibility": "private",
                   "archived": False, "about": "cli test", "topic": None, "purpose": None, "ttl_seconds": 3600}
    members = await orch.ok("channels", "members", "--channel", side)
    assert {m["pubkey"]: m["role"] for m in members} == {
        orch_pk: "owner", names["benchmark-user-02"]: "member", names["benchmark-bot-01"]: "bot"}

    await orch.ok("channels", "archive", "--channel", side)
    assert await orch.ok("channels", "search", "--query", "fix-pr-1234", "--exact") == []
    (archived,) = await orch.ok("channels", "search", "--query", "fix-pr-1234", "--exact", "--include-archived")
    assert archived["archived"] is True

    await orch.ok("users", "set-profile", "--name", "renamed-orchestrator")
    (profile,) = await user.ok("users", "get", "--pubkey", orch_pk)
    assert profile["name"] == "renamed-orchestrator"


async def test_cli_errors_are_json_with_exit_codes(stage, stack_dir: Path) -> None:
    exe = stack_dir / "bin" / "buzz"
    cli = Cli(exe, stage.agent_url, "00" * 32, "")
    code, _, err = await cli.run("messages", "get", "--channel", "c")
    assert code == 1 and json.loads(err)["error"] == "user"  # zero is not a valid secret key
    unreachable = {**cli.env, "BUZZ_RELAY_URL": "ws://127.0.0.1:9", "BUZZ_PRIVATE_KEY": "11" * 32}
    code, _, err = await cli.run("messages", "get", "--channel", "c", env=unreachable)
    assert code == 2 and json.loads(err)["error"] == "network"
    unadmitted = {**cli.env, "BUZZ_PRIVATE_KEY": "11" * 32}  # no NIP-OA tag: the relay refuses AUTH
    code, _, err = await cli.run("messages", "send", "--channel", "c", "--content", "x", env=unadmitted)
    assert code == 3 and json.loads(err)["error"] == "auth", err
    admitted = {**cli.env, "BUZZ_PRIVATE_KEY": "11" * 32}
    for argv, fragment in ((["--name", "x", "--pubkey", "ab" * 32], "mutually exclusive"),
                           (["--owner", "me"], "--owner requires --name"), (["--name", " "], "cannot be empty")):
        code, _, err = await cli.run("users", "get", *argv, env=admitted)
        assert code == 1 and fragment in json.loads(err)["message"], err
