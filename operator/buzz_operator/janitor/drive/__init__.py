"""The janitor's I/O: lists and deletes what orphans.py says is left behind (reaper.py)."""
