"""The pods the operator makes, as plain dicts: the hardened base every container starts from
(base.py), the trial pod with its stack, forwarder sidecar and egress labels (trial_pod.py), how
the agent stack is installed into it (stack_install.py) and the scripts run in it by exec
(shell.py, launch_script.py, relay_ca.py), and what a pod's state and wait mean (state.py,
waiting.py). Pure; trial/ and preflight/ build their pods here (docs/design.md#rooms)."""
