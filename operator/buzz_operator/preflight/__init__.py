"""Preflight: checks a sweep passes once before its first trial spends anything
(docs/preflight.md#checks). checks.py, canary.py and probe.py are pure; drive/runner.py does the I/O."""
