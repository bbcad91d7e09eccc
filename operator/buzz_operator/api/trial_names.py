"""Names of the objects one trial owns, derived from the trial's name and retry index.

Every try gets fresh names: a retry never has to wait for the previous pod or Secret to be
fully deleted before creating its own (Vivaria #818, "container already exists"), and the
relay sees a new trial id, so a retried team starts in an empty channel instead of reading
the messages of the try that failed.
"""

from __future__ import annotations

import uuid

from buzz_operator.api.naming import DNS_LABEL_MAX

# Fixed namespace for relay trial ids: uuid5(URL namespace, this operator's API group).
TRIAL_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://bench.buzz.dev/trial")

# The trial name leaves room for "-r<retry>" with up to three digits inside a DNS label.
MAX_RETRY_SUFFIX = len("-r999")
TRIAL_NAME_MAX = DNS_LABEL_MAX - MAX_RETRY_SUFFIX


def _suffix(retry: int) -> str:
    if retry < 0 or len(f"-r{retry}") > MAX_RETRY_SUFFIX:
        raise ValueError(f"retry must be between 0 and 999, not {retry}")
    return "" if retry == 0 else f"-r{retry}"


def pod_name(trial_name: str, retry: int) -> str:
    """The trial pod of one try: the trial's name, with ``-r<retry>`` from the first retry on."""
    return f"{trial_name}{_suffix(retry)}"


def tenant_secret_name(trial_name: str, retry: int) -> str:
    """The per-try Secret with seat keys and auth tags (read by the operator, never mounted)."""
    return f"{trial_name}{_suffix(retry)}-seats"


def relay_trial_id(sweep_uid: str, trial_name: str, retry: int) -> str:
    """The relay's trial id for one try: stable across operator restarts, distinct per try."""
    if not sweep_uid:
        raise ValueError("sweep_uid must not be empty")
    _suffix(retry)
    return str(uuid.uuid5(TRIAL_ID_NAMESPACE, f"{sweep_uid}/{trial_name}/{retry}"))
