"""The janitor: reaps what a trial leaves behind once the trial is gone (pods, per-try Secrets,
unarchived relay channels). orphans.py decides (pure); drive/reaper.py lists and deletes."""
