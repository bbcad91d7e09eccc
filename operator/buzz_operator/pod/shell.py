"""Shell scripts the corridor runs in the task container by exec (pure strings).

They are the seed's commands (docs/corridor.md#trust-store, docs/completion.md#what-is-watched, docs/corridor.md#stop, docs/corridor.md#collect) where it had them, so a
container that seeds its trust store or installs curl for the seed does the same here. Values
that would otherwise put a marker string into the script's own command line (and so into
/proc/<pid>/cmdline, where the process sweep would match the sweeping shell) arrive as
environment variables on the exec's stdin.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from buzz_operator.condition.paths import (
    REMOTE_BIN,
    REMOTE_CA_BUNDLE,
    REMOTE_LOGS,
    REMOTE_ROOT,
    SYSTEM_CA_BUNDLE,
    SYSTEM_CA_DIR,
    remote_stderr_log,
    remote_stdout_log,
)
from buzz_operator.pod import cgroup

STATE_DIR = f"{REMOTE_ROOT}/state"  # what the runtime recorded in the pod (pids, dispositions)
# in STATE_DIR: why the evidence could not be exported (collect writes it, bundling keeps it)
EVIDENCE_ERROR = "buzz-evidence-error.txt"
VERIFIER_DEPS = ("curl",)
VERIFIER_DEPS_TIMEOUT_S = 120

# docs/corridor.md#trust-store, verbatim: the last stdout line is present | seeded | failed.
SEED_TRUST_STORE = (
    f"if [ -s {SYSTEM_CA_BUNDLE} ]; then echo present; "
    f"elif mkdir -p {SYSTEM_CA_DIR} && cp {REMOTE_CA_BUNDLE} {SYSTEM_CA_BUNDLE}; then echo seeded; "
    "else echo failed; fi"
)

# docs/corridor.md#collect, verbatim for curl: present | installed | unavailable.
INSTALL_VERIFIER_DEPS = (
    "if command -v curl >/dev/null 2>&1; then echo present; "
    f"elif {{ timeout {VERIFIER_DEPS_TIMEOUT_S} apt-get update -qq >/dev/null 2>&1 || true; }} && "
    f"timeout {VERIFIER_DEPS_TIMEOUT_S} apt-get install -y -qq curl >/dev/null 2>&1 && "
    "command -v curl >/dev/null 2>&1; then echo installed; else echo unavailable; fi"
)

PREPARE = f"mkdir -p {STATE_DIR} /logs/artifacts /logs/verifier"
TRUST_STORE_WORDS = ("present", "seeded", "failed")
VERIFIER_DEPS_WORDS = ("present", "installed", "unavailable")
TRUST_STORE_LINE = "@@trust-store "
MANIFEST_FAILED = "@@manifest-exit "
PREPARE_FAILED = "@@prepare-exit "


def recording(fact: str, script: str, words: tuple[str, ...]) -> str:
    """`script`, whose last stdout line is one of `words` (else the last word), recorded in the
    pod as the fact `fact` — the file pod_exec.record would write — and echoed: one exec
    where a run and a record were two (bench/trial.py)."""
    return f'{_record_word(fact, script, words)}\necho "$v"'


def _record_word(fact: str, script: str, words: tuple[str, ...]) -> str:
    # sets $v; kept out of a $(...) so that no shell has to parse a case inside one
    return (
        f"v=$( ( {script} ) | tail -n 1 )\n"
        f'case "$v" in {"|".join(words)}) ;; *) v={words[-1]} ;; esac\n'
        f"printf '\"%s\"' \"$v\" > {STATE_DIR}/{fact}.json"
    )


def prepare_pod(read_manifest: str) -> str:
    """The launch exec's first part (pod/launch_script.py): the stack's digests read back, the
    pod's directories made, the trust store seeded (docs/corridor.md#trust-store) and its
    disposition recorded. Prints the
    manifest, then `@@trust-store <word>`; or `@@manifest-exit N <last line>` / `@@prepare-exit N`
    alone when the read or the mkdir failed (launch_script.parse names them): the last line is
    a mount-image install's `stack: …` refusal (pod/stack_install.py), empty for a failed cat."""
    return (
        f'manifest=$( {read_manifest} ) || {{ code=$?; echo "{MANIFEST_FAILED}$code'
        ' $(printf \'%s\\n\' "$manifest" | tail -n 1)"; exit 0; }\n'
        f'{PREPARE} || {{ echo "{PREPARE_FAILED}$?"; exit 0; }}\n'
        f"{_record_word('container_trust_store', SEED_TRUST_STORE, TRUST_STORE_WORDS)}\n"
        'printf \'%s\\n\' "$manifest"\n'
        f'echo "{TRUST_STORE_LINE}$v"'
    )

# Matches processes whose command line names the stack's bin directory ($BUZZ_MATCH), except
# this shell and the forwarder; `kill -0` alone would count zombies (an exec'd seat that
# exited is reparented to the keepalive shell, which never reaps it) as alive.
_LIVE_STACK_PIDS = r"""
live_stack_pids() {
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [ "$pid" = "$$" ] && continue
    state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "$p/status" 2>/dev/null)
    [ -z "$state" ] || [ "$state" = Z ] && continue
    cmd=$(tr '\0' ' ' < "$p/cmdline" 2>/dev/null) || continue
    case "$cmd" in *relay-forwarder*) continue ;; *"$BUZZ_MATCH"*) echo "$pid" ;; esac
  done
}
"""

STOP_ENV = {"BUZZ_MATCH": REMOTE_BIN}

# docs/corridor.md#stop: TERM, 2 s, KILL. The seed sleeps the whole 2 s; here the grace ends as
# soon as no stack process is left, which a seat that honours TERM reaches in well under 0.1 s
# (bench/trial.py: the fixed sleep was 2 of the ~7 s the operator added to an instantly-answering
# trial). A seat ignoring TERM still gets 2 s.
_STOP_ROUND = r"""
for pid in $(live_stack_pids); do kill -TERM "$pid" 2>/dev/null; done
waited=0
while [ -n "$(live_stack_pids)" ] && [ "$waited" -lt 20 ]; do sleep 0.1; waited=$((waited + 1)); done
for pid in $(live_stack_pids); do kill -KILL "$pid" 2>/dev/null; done
[ -z "$(live_stack_pids)" ] || sleep 0.2
"""
STOP_ROUNDS = 3
# up to STOP_ROUNDS rounds, then `left <n>` (the caller checks it is 0)
_STOP = (
    f"r=0\nwhile :; do\n{_STOP_ROUND}"
    "left=$(( $(live_stack_pids | wc -l) )); r=$((r + 1))\n"
    f'[ "$left" -eq 0 ] || [ "$r" -ge {STOP_ROUNDS} ] && break\ndone\n'
    'echo "left $left"'
)
STOP_SEATS = _LIVE_STACK_PIDS + _STOP

# collect's first exec: the seats stopped (a failed run may not have), then their logs as a tar
# on stdout — read once nothing can write them any more. Survivors exit STOP_FAILED_EXIT with
# `left <n>` on stderr and no tar.
STOP_FAILED_EXIT = 96
STOP_THEN_TAR_LOGS = (
    _LIVE_STACK_PIDS + _STOP + " >&2\n"
    f'[ "$left" -eq 0 ] || exit {STOP_FAILED_EXIT}\n'
    f"if [ -d {REMOTE_LOGS} ]; then tar -c -f - -C {REMOTE_LOGS} .; fi"
)

# the pod's clock in hundredths of a second (/proc/uptime has two decimals on every kernel):
# date +%N is GNU's, and task images may carry busybox
_UPTIME_CS = r"""
uptime_cs() { u=$(cut -d' ' -f1 /proc/uptime); echo "${u%.*}${u#*.}"; }
"""


def pid_file(seat_id: str) -> str:
    return f"{STATE_DIR}/{seat_id}.pid"


def launch_seat(seat_id: str, command: str) -> str:
    """docs/corridor.md#agent-environment: start buzz-acp detached with its logs; idempotent — a seat whose pid file names a
    live process is left alone, so a resumed launch never starts a second copy. `command` is a
    shell word, put in as given (launch_script passes `"$BUZZ_SEAT_COMMAND"`)."""
    pid, out, err = pid_file(seat_id), remote_stdout_log(seat_id), remote_stderr_log(seat_id)
    return (
        f'if [ -s {pid} ] && [ -d /proc/$(cat {pid}) ] && '
        f'! grep -q "^State:[[:space:]]*Z" /proc/$(cat {pid})/status; then cat {pid}; exit 0; fi\n'
        f"{command} </dev/null >{out} 2>{err} &\n"
        f"echo $! > {pid}; echo $!"
    )


def seats_alive(seat_ids: list[str]) -> str:
    """One line per seat: `<seat> alive|dead` (dead includes zombies)."""
    lines = []
    for seat in seat_ids:
        pid = pid_file(seat)
        lines.append(
            f'p=$(cat {pid} 2>/dev/null); s=$(sed -n "s/^State:[[:space:]]*\\([A-Z]\\).*/\\1/p" /proc/$p/status 2>/dev/null); '
            f'if [ -n "$p" ] && [ -n "$s" ] && [ "$s" != Z ]; then echo "{seat} alive"; else echo "{seat} dead"; fi'
        )
    return "\n".join(lines)


def await_subscribed(seat_ids: list[str], marker: str, seconds: float, poll_s: float = 0.05) -> str:
    """Waits in the pod, up to `seconds`, until every seat's logs hold `marker`; its last line is
    `ready`, `dead <seat>…` (a seat still waiting whose process is gone) or `waiting <seat>…`.

    One exec instead of a read-logs and a liveness exec per 0.5 s poll: readiness is seen within
    `poll_s` of the seat subscribing (bench/trial.py: the poll loop was ~1 s of every launch).
    """
    rounds = max(1, int(seconds / poll_s))
    checks = []
    for seat in seat_ids:
        pid = pid_file(seat)
        checks.append(
            f"if ! cat {remote_stdout_log(seat)} {remote_stderr_log(seat)} 2>/dev/null | grep -qF \"$MARKER\"; then "
            f"waiting=\"$waiting {seat}\"; "
            f'p=$(cat {pid} 2>/dev/null); s=$(sed -n "s/^State:[[:space:]]*\\([A-Z]\\).*/\\1/p" /proc/$p/status 2>/dev/null); '
            f'if [ -z "$p" ] || [ -z "$s" ] || [ "$s" = Z ]; then dead="$dead {seat}"; fi; fi'
        )
    body = "\n  ".join(checks)
    return (
        f"MARKER={shlex.quote(marker)}\n"
        f"i=0\nwhile :; do\n  waiting=''; dead=''\n  {body}\n"
        '  [ -z "$waiting" ] && { echo ready; exit 0; }\n'
        '  [ -n "$dead" ] && { echo "dead$dead"; exit 0; }\n'
        f'  i=$((i + 1)); [ "$i" -ge {rounds} ] && {{ echo "waiting$waiting"; exit 0; }}\n'
        f"  sleep {poll_s}\ndone"
    )


# buzz-acp's pool::prompt lines that open and close a turn (docs/corridor.md#usage-settle): a
# seat whose last such line opens one has a model request in flight, billed once it answers
TURN_START = "turn starting for "
TURN_ENDS = (
    "turn complete for ", "turn cancelled for ", "turn hit max_", "turn refused for ",
    "exited during prompt", "session_prompt error", "idle timeout (", "hard timeout (",
    "exited during cancel_with_cleanup", "cancel_with_cleanup error",
)


def without_usage(seat_ids: list[str], marker: str) -> str:
    """One line per seat still to settle: alive (not a zombie), and either no `marker` in its
    logs yet or a turn still open (its last turn line is TURN_START) — the liveness and the log
    reads of docs/corridor.md#usage-settle in one exec, not one each."""
    turns = " ".join(f"-e {shlex.quote(line)}" for line in (TURN_START, *TURN_ENDS))  # fixed strings: any grep
    lines = [f"MARKER={shlex.quote(marker)}", f"OPEN={shlex.quote(TURN_START)}"]
    for seat in seat_ids:
        pid = pid_file(seat)
        logs = f"{remote_stdout_log(seat)} {remote_stderr_log(seat)}"
        lines.append(
            f'p=$(cat {pid} 2>/dev/null); s=$(sed -n "s/^State:[[:space:]]*\\([A-Z]\\).*/\\1/p" /proc/$p/status 2>/dev/null); '
            f'if [ -n "$p" ] && [ -n "$s" ] && [ "$s" != Z ] && '
            f'{{ ! cat {logs} 2>/dev/null | grep -qF "$MARKER" || '
            f'cat {logs} 2>/dev/null | grep -F {turns} | tail -n 1 | grep -qF "$OPEN"; }}; '
            f'then echo "{seat}"; fi'
        )
    return "\n".join(lines)


def settle_then_stop(seat_ids: list[str], marker: str, settle_s: float, poll_s: float = 0.1) -> str:
    """The run's end in one exec (three and more before): docs/corridor.md#usage-settle — wait
    in the pod, at most `settle_s`, until no live seat lacks `marker` in its logs, and record
    the time waited as the fact `usage_settle_seconds` — then docs/corridor.md#stop, whose
    `left <n>` is the last line. Needs STOP_ENV."""
    pending = without_usage(seat_ids, marker).replace("\n", "\n  ")
    limit_cs = int(settle_s * 100)
    return (
        _LIVE_STACK_PIDS + _UPTIME_CS
        + f"t0=$(uptime_cs)\nwhile :; do\n  pending=$(\n  {pending}\n  )\n"
        f'  [ -z "$pending" ] && break\n'
        f'  [ $(( $(uptime_cs) - t0 )) -ge {limit_cs} ] && break\n'
        f"  sleep {poll_s}\ndone\n"
        "d=$(( $(uptime_cs) - t0 ))\n"
        f"printf '%d.%02d' $((d / 100)) $((d % 100)) > {STATE_DIR}/usage_settle_seconds.json\n"
        + _STOP
    )


VERIFIER_EXIT = "@@verifier-exit "
VERIFIER_USER_MISSING = "@@verifier-user-missing "
# the cgroup readings around the verifier (pod/cgroup.py)
VERIFIER_START = "verifier-start"
VERIFIER_END = "verifier-end"
AGENTS_END = "agents-end"


def _as_user(user: str | int, command: str) -> tuple[str, str]:
    """(a check, the command) run as ``user`` the way Harbor's GKE environment runs a command as
    a task's user: ``su <user> -s /bin/bash -c`` (not ``su -``: the working directory stays), a
    numeric id named through getent. The check prints VERIFIER_USER_MISSING when the image has no
    su or no such user, which the verifier step names instead of scoring a verifier that could not
    start."""
    name = f"$(getent passwd {int(user)} | cut -d: -f1)" if isinstance(user, int) else shlex.quote(user)
    check = (f'{{ u="{name}"; if [ -z "$u" ] || ! command -v su >/dev/null 2>&1 || ! id "$u" >/dev/null 2>&1; '
             f'then echo "{VERIFIER_USER_MISSING}"{shlex.quote(str(user))} >&2; fi; chmod 0777 /logs/verifier; }} && ')  # fmt: skip
    return check, f'su "$u" -s /bin/bash -c {shlex.quote(command)}'


def run_verifier(timeout_s: int, env: Mapping[str, str] | None = None, user: str | int | None = None) -> str:
    """tests/test.sh with the verifier timeout and task.toml's `[verifier] env` (literal values
    only: the loader refuses Harbor's host templates), as `[verifier] user` when it names one;
    its output kept where Harbor keeps it. Its exit status goes to stderr as `@@verifier-exit N`,
    the container's cgroup counters before and after it (pod/cgroup.py, labels VERIFIER_START and
    VERIFIER_END) too, and /logs/verifier follows on stdout as a tar: grading reads the verifier's
    output in the exec that ran it."""
    assigned = "".join(f"{shlex.quote(f'{key}={value}')} " for key, value in sorted((env or {}).items()))
    command = f"{'env ' + assigned if assigned else ''}bash /tests/test.sh"
    check = ""
    if user is not None:
        check, command = _as_user(user, command)
    return (
        f"{cgroup.read(VERIFIER_START)}\n"
        f"mkdir -p /logs/verifier && {check}timeout -k 5 {timeout_s} {command} "
        ">/logs/verifier/test-stdout.txt "
        f'2>/logs/verifier/test-stderr.txt; echo "{VERIFIER_EXIT}$?" >&2\n'
        f"{cgroup.read(VERIFIER_END)}\n"
        "if [ -d /logs/verifier ]; then tar -c -f - -C /logs/verifier .; fi"
    )
