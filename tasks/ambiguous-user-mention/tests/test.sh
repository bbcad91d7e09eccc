#!/usr/bin/env bash
# Grades the post-agent Buzz evidence snapshot. Paths default to the in-container layout Harbor
# uses (/tests, /logs/artifacts, /logs/verifier); the BUZZ_* overrides exist so the unit tests
# can run this very script against fixture evidence on the host.
set -euo pipefail

tests_dir="${BUZZ_TESTS_DIR:-/tests}"
evidence="${BUZZ_EVIDENCE:-/logs/artifacts/buzz-evidence.json}"
verifier_dir="${BUZZ_VERIFIER_DIR:-/logs/verifier}"

mkdir -p "$verifier_dir"
python3 "$tests_dir/verify.py" \
  --evidence "$evidence" \
  --reward "$verifier_dir/reward.json" \
  --details "$verifier_dir/details.json"
