"""The trial corridor, one module per step (docs/corridor.md): provision → launch → run →
collect → grade → bundle, then teardown; regrade runs outside the corridor on a finished
trial. trial/drive/driver.py's STEPS table is the map from phase to step.

A step never imports another step. What several steps share lives beside them, and none is a
step: `tenant` (the try's relay tenant, cached, with one error mapping), `stack` (the digests
the pod installed), `verifier` (tests/test.sh run in a pod, for grade and regrade).
"""

# In corridor order; tests/unit/trial/test_steps.py holds each to importing none of the others.
STEP_MODULES = ("provision", "launch", "run", "collect", "grade", "bundle", "teardown", "regrade")
SHARED_MODULES = ("tenant", "stack", "verifier")
