#!/usr/bin/env bash
# Grades the post-agent Buzz evidence snapshot against the skill file the image wrote. Paths
# default to the in-container layout (/tests, /logs/artifacts, /logs/verifier, HOME=/home/buzz);
# the BUZZ_* overrides exist so the unit tests can run this very script on fixture evidence.
set -euo pipefail

tests_dir="${BUZZ_TESTS_DIR:-/tests}"
evidence="${BUZZ_EVIDENCE:-/logs/artifacts/buzz-evidence.json}"
verifier_dir="${BUZZ_VERIFIER_DIR:-/logs/verifier}"
skill_file="${BUZZ_SKILL_FILE:-/home/buzz/.claude/skills/context-health-check/SKILL.md}"

mkdir -p "$verifier_dir"
python3 "$tests_dir/verify.py" \
  --evidence "$evidence" \
  --reward "$verifier_dir/reward.json" \
  --details "$verifier_dir/details.json" \
  --skill-file "$skill_file"
