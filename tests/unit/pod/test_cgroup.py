"""The cgroup readings (docs/resources.md#telemetry): v1 as this machine's kernel writes its files
(recorded/cgroup-v1-host.txt, read on the host by the very script the pods run), v2 in the
kernel's documented format (recorded/cgroup-v2-container.txt; the local cluster runs the
host's version, so v2 is met on the cluster only where the machine has it)."""

from __future__ import annotations

from pathlib import Path

from buzz_operator.pod import cgroup

RECORDED = Path(__file__).parent / "recorded"


def test_v1_as_the_kernel_writes_it() -> None:
    reading = cgroup.parse((RECORDED / "cgroup-v1-host.txt").read_text(), "a")
    assert reading is not None and reading.version == 1
    assert reading.peak_memory_bytes == 12131225600 and reading.memory_limit_bytes is None  # 2^63-ish: none
    assert (reading.oom_kills, reading.cpu_usage_ns) == (0, 13293314984867)
    assert (reading.periods, reading.throttled_periods, reading.throttled_ns) == (0, 0, 0)


def test_v2_in_the_documented_format() -> None:
    reading = cgroup.parse((RECORDED / "cgroup-v2-container.txt").read_text(), "agents-end")
    assert reading == cgroup.Reading(version=2, peak_memory_bytes=268435456, memory_limit_bytes=536870912,
                                     oom_kills=2, cpu_usage_ns=8_500_000_000, periods=1200, throttled_periods=300,
                                     throttled_ns=2_500_000_000)
    used = cgroup.usage(reading)
    assert (used.peak_memory_mb, used.memory_limit_mb, used.oom_kills) == (256.0, 512.0, 2)
    assert (used.cpu_seconds, used.throttled_periods, used.throttled_seconds) == (8.5, 300, 2.5)


def test_a_v2_container_without_a_limit_reads_none() -> None:
    text = "@@cgroup:x version 2\n@@cgroup:x memory.max max\n@@cgroup:x memory.peak 4096\n"
    reading = cgroup.parse(text, "x")
    assert reading is not None and reading.memory_limit_bytes is None and reading.oom_kills is None


def test_only_the_asked_label_is_read_and_no_reading_is_none() -> None:
    text = (RECORDED / "cgroup-v2-container.txt").read_text()
    assert cgroup.parse(text, "verifier-end") is None
    assert cgroup.parse("stderr of a container with no /sys/fs/cgroup\n", "agents-end") is None


def test_a_phase_counts_growth_and_keeps_the_peak() -> None:
    start = cgroup.Reading(version=2, peak_memory_bytes=2**28, oom_kills=1, cpu_usage_ns=4 * 10**9, periods=100,
                           throttled_periods=10, throttled_ns=10**9)
    end = cgroup.Reading(version=2, peak_memory_bytes=2**28, oom_kills=3, cpu_usage_ns=6 * 10**9, periods=160,
                         throttled_periods=40, throttled_ns=3 * 10**9)
    used = cgroup.usage(end, start)
    assert (used.oom_kills, used.cpu_seconds, used.periods, used.throttled_periods) == (2, 2.0, 60, 30)
    assert used.throttled_seconds == 2.0 and used.peak_memory_mb == 256.0
    restarted = cgroup.usage(cgroup.Reading(version=2, oom_kills=1, cpu_usage_ns=10**9), end)
    assert (restarted.oom_kills, restarted.cpu_seconds) == (1, 1.0)  # lower than before: counted afresh


def test_the_read_script_never_fails(tmp_path: Path) -> None:
    import subprocess

    ran = subprocess.run(["sh", "-c", f"{cgroup.read('here')}; echo after"], capture_output=True, text=True,
                         check=False)
    assert ran.returncode == 0 and ran.stdout == "after\n"
    reading = cgroup.parse(ran.stderr, "here")
    assert reading is not None and reading.version in (1, 2) and reading.cpu_usage_ns
