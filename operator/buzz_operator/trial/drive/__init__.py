"""One trial's driver, the I/O that walks the corridor model of trial/state.py: the context a
drive reads (context.py, setup.py), the model keys it launches seats with (model_keys.py), exec
in the task container (pod_exec.py), the egress phase relabel (egress_phase.py), where a pod's
wait is told (waiting.py), and the loop itself (driver.py). The steps are in trial/steps/."""
