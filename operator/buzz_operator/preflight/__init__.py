"""Preflight: checks a sweep passes once before its first trial spends anything
(buzz-harness.md §6.1). checks.py and canary.py are pure; runner.py does the I/O."""
