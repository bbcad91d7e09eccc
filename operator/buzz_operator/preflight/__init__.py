"""Preflight: checks a sweep passes once before its first trial spends anything
(docs/preflight.md#checks). checks.py and canary.py are pure; runner.py does the I/O."""
