"""The launch step's one exec (docs/corridor.md#launch): the pod prepared, the prompts (and the
relay's private CA) unpacked, every seat started with its own environment, and the first round
of readiness awaited — four to six exec round trips before, one now (bench/trial.py).

What the exec reads from its stdin, in order: the tar of files for REMOTE_ROOT, then each
seat's `export` lines (kube.exec.env_prelude). Each part is read with `head -c <its length>`,
which stops at exactly that many bytes, so every seat's environment is eval'd in a subshell
of its own and no seat sees another's keys. The seats' command arrives as `$BUZZ_SEAT_COMMAND`
on the exec's own environment: a stack path in this script's text would put it into the
long-lived shell's /proc/<pid>/cmdline, which the stop sweep matches (shell.STOP_SEATS).

Its stdout, line by line: the stack's manifest, `@@trust-store <word>`, `@@relay-ca <answer>`
when a CA was sent, `@@seat <id> <exit> <last line>` per seat, then await_subscribed's line.
A stage that fails prints its own `@@…` line and the script stops there; parse() names the
failure as the separate execs did.

Idempotent as each part was: mkdir -p, a seed that finds its store present, identical files
unpacked again, a seat whose recorded pid is alive left alone.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from buzz_operator.condition.paths import REMOTE_PROMPTS, REMOTE_ROOT
from buzz_operator.pod import shell
from buzz_operator.pod.relay_ca import INSTALL_RELAY_CA
from buzz_operator.scoring.failures import StepFailure

SEAT_COMMAND_VAR = "BUZZ_SEAT_COMMAND"
UNPACK_FAILED = "@@unpack-exit "
RELAY_CA_LINE = "@@relay-ca "
SEAT_LINE = "@@seat "
AGENT_USER_MISSING = "@@agent-user-missing "


@dataclass(frozen=True)
class LaunchOutcome:
    manifest: str  # the stack's digests manifest as the pod holds it
    readiness: str  # await_subscribed's last line: ready | dead <seat>… | waiting <seat>…


def _as_agent_user(user: str | int) -> str:
    """task.toml's `[agent] user`: named (a uid through getent, as Harbor's Kubernetes
    environment names it) and checked before any seat starts; AGENT_USER_MISSING when the image
    has no su or no such user."""
    name = f"$(getent passwd {int(user)} | cut -d: -f1)" if isinstance(user, int) else shlex.quote(user)
    # the seats' prompts are 0600: theirs to read, so the user's
    prompts = shlex.quote(REMOTE_PROMPTS)
    return (f'u="{name}"\n'
            'if [ -z "$u" ] || ! command -v su >/dev/null 2>&1 || ! id "$u" >/dev/null 2>&1; then '
            f'echo "{AGENT_USER_MISSING}"{shlex.quote(str(user))}; exit 0; fi\n'
            f'chown -R "$u" {prompts} 2>/dev/null || true')  # fmt: skip


def script(*, read_manifest: str, files_bytes: int, seats: Sequence[tuple[str, int]], relay_ca: bool,
           marker: str, ready_round_s: float, agent_user: str | int | None = None) -> str:
    """The exec's script; `files_bytes` is the tar's length, `seats` each seat's id and the
    length of its export lines, in the order they follow the tar on stdin. With `agent_user`
    each seat runs as that user, through `su` as Harbor's Kubernetes environment runs an agent's
    commands (not `su -`: the working directory and the seat's variables stay; the user's HOME,
    SHELL, USER and LOGNAME are su's), its logs written through the descriptors opened here."""
    parts = [
        shell.prepare_pod(read_manifest),
        f"head -c {files_bytes} | tar -x -o -f - -C {shlex.quote(REMOTE_ROOT)} || "
        f'{{ echo "{UNPACK_FAILED}$?"; exit 0; }}',
    ]
    if relay_ca:
        # installed after the seed: the task's own trust store stays the seed's
        parts.append(
            f"ca=$( ( {INSTALL_RELAY_CA} ) 2>/dev/null | tail -n 1 )\n"
            f'echo "{RELAY_CA_LINE}$ca"\n'
            'case "$ca" in "installed "*) ;; *) exit 0 ;; esac'
        )
    command = f'"${SEAT_COMMAND_VAR}"'
    if agent_user is not None:
        parts.append(_as_agent_user(agent_user))
        command = f"""su "$u" -s /bin/sh -c 'exec "$0"' {command}"""
    for seat_id, env_bytes in seats:
        start = shell.launch_seat(seat_id, command)
        parts.append(
            f'out=$(eval "$(head -c {env_bytes})" || exit 125\n{start})\n'
            f'code=$?; echo "{SEAT_LINE}{seat_id} $code $(printf \'%s\\n\' "$out" | tail -n 1)"\n'
            '[ "$code" -eq 0 ] || exit 0'
        )
    parts.append(shell.await_subscribed([seat_id for seat_id, _ in seats], marker, ready_round_s))
    return "\n".join(parts)


def parse(stdout: str, exit_code: int, seat_ids: Sequence[str], *, relay_ca: bool) -> LaunchOutcome:
    """What the exec did, or the StepFailure of the stage that failed (the reasons and messages
    the separate execs gave: StackInstallFailed for the pod's preparation and the CA,
    AgentsNotReady for a seat that could not be started)."""
    lines = stdout.splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith("@@")]
    first = lines[marks[0]] if marks else ""
    if first.startswith(shell.MANIFEST_FAILED):
        code, _, said = first.removeprefix(shell.MANIFEST_FAILED).partition(" ")
        # a mount-image install's refusal names what the image lacks; a failed cat says nothing
        raise StepFailure("StackInstallFailed", said.strip()[:300] if said.startswith("stack: ")
                          else f"reading the stack's digests: exit {code}")
    if first.startswith(shell.PREPARE_FAILED):
        raise StepFailure("StackInstallFailed", f"preparing the pod's directories: exit {first.split()[-1]}")
    if not first.startswith(shell.TRUST_STORE_LINE):
        raise StepFailure("StackInstallFailed", f"preparing the pod: exit {exit_code}, output {first[:100]!r}")
    manifest = "\n".join(lines[: marks[0]]) + "\n"
    rest = [lines[i] for i in marks[1:]]
    if rest and rest[0].startswith(UNPACK_FAILED):
        raise StepFailure("StackInstallFailed", f"unpacking the prompts: exit {rest[0].split()[-1]}")
    if relay_ca:
        answer = rest.pop(0) if rest and rest[0].startswith(RELAY_CA_LINE) else ""
        if not answer.removeprefix(RELAY_CA_LINE).startswith("installed "):
            raise StepFailure("StackInstallFailed", "adding spec.relay.caBundle to the agents' CA file: "
                                                    f"exit {exit_code}, answer {answer[:100]!r}")
    if rest and rest[0].startswith(AGENT_USER_MISSING):
        user = rest[0].removeprefix(AGENT_USER_MISSING)
        raise StepFailure("AgentUserMissing", f"[agent] user {user}: the task image has no such user, or no su "
                                              "to switch to it (docs/task-toml.md#users)")
    for seat_id in seat_ids:
        line = rest.pop(0) if rest and rest[0].startswith(SEAT_LINE) else ""
        words = line.split()
        code = words[2] if len(words) > 2 else str(exit_code)
        if len(words) != 4 or words[1] != seat_id or code != "0" or not words[3].isdigit():
            raise StepFailure("AgentsNotReady", f"cannot launch {seat_id}: exit {code}")
    readiness = lines[-1].strip() if lines else ""
    if exit_code != 0 or not readiness.startswith(("ready", "dead", "waiting")):
        raise StepFailure("AgentsNotReady", f"awaiting the seats' subscriptions: exit {exit_code}, "
                                            f"output {readiness[:100]!r}")
    return LaunchOutcome(manifest=manifest, readiness=readiness)
