"""Everything a trial's corridor steps need, resolved once per drive: the trial's identity and
spec, the condition, the task, the relay and the store — and the per-try Secret's layout.

Seat keys are read from the per-try Secret and model API keys from the user's Secret when a
step needs them, and kept in a mapping whose repr is redacted (model_keys.py). The Secrets a
drive has read are kept in `secret_reads` for that drive only, so each is read once
(kube/secret_reads.py says what that means for a Secret changed mid-drive); it never prints them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from buzz_operator.api.trial import BuzzTrialSpec
from buzz_operator.api.trial_names import pod_name, relay_trial_id, tenant_secret_name
from buzz_operator.condition import EndpointConfig, ExperimentManifest, Seat, plan_seats
from buzz_operator.dataset.task import Task
from buzz_operator.kube.client import Kube
from buzz_operator.kube.secret_reads import SecretReads
from buzz_operator.relay.tenant_models import RelayTarget, SeatSecret, TenantSecrets
from buzz_operator.storage.store import ObjectStore


class Redacted(Mapping[str, str]):
    """A read-only mapping of secret values that never prints them."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Redacted({sorted(self._values)})"


@dataclass(frozen=True)
class RelayService:
    """The in-cluster Service the pod's forwarder targets (resolved to a ClusterIP per pod), for
    a loopback relay URL; a direct one has none."""

    name: str
    port: int


@dataclass(frozen=True)
class TrialContext:
    kube: Kube
    namespace: str
    name: str
    uid: str
    sweep_uid: str
    spec: BuzzTrialSpec
    labels: Mapping[str, str]
    manifest: ExperimentManifest
    prompts: Mapping[str, bytes]  # class_id -> verified persona bytes
    endpoints: EndpointConfig
    # spec.endpoints.secretRef's name: the API keys are read from it when used (model_keys.py)
    api_key_secret: str | None
    task: Task
    relay: RelayTarget  # how the operator reaches the relay (Host = canonical authority)
    relay_service: RelayService | None  # None: agents dial the relay URL directly, no forwarder
    store_url: str
    store: ObjectStore
    workdir: Path
    # where bundles with suspected secrets go (spec.storage.quarantinePrefix); "" keeps them in place
    quarantine_prefix: str = ""
    # every Secret this drive reads, read once (kube/secret_reads.py); load_context shares it with its inputs
    secret_reads: SecretReads = field(default_factory=SecretReads, compare=False)

    @property
    def seats(self) -> list[Seat]:
        return plan_seats(self.manifest)

    @property
    def run_id(self) -> str:
        return self.spec.sweep_name

    def trial_id(self, retry: int) -> str:
        return relay_trial_id(self.sweep_uid, self.name, retry)

    def pod(self, retry: int) -> str:
        return pod_name(self.name, retry)

    def secret(self, retry: int) -> str:
        return tenant_secret_name(self.name, retry)

    def api_key_for(self, seat: Seat, keys: Mapping[str, str]) -> str:
        env_name = self.endpoints[seat.endpoint].api_key_env
        return keys.get(env_name, "")


# Keys of the per-try Secret. Secret data keys allow [-._a-zA-Z0-9], which seat ids satisfy.
USER_KEY, USER_AUTH = "user.key", "user.auth"


def seat_key(seat_id: str) -> str:
    return f"seat.{seat_id}.key"


def seat_auth(seat_id: str) -> str:
    return f"seat.{seat_id}.auth"


def secret_data(secrets: TenantSecrets) -> dict[str, str]:
    data = {USER_KEY: secrets.user_secret_hex, USER_AUTH: secrets.user_auth_tag}
    for seat_id, (secret_hex, auth_tag) in secrets.seats.items():
        data[seat_key(seat_id)] = secret_hex
        data[seat_auth(seat_id)] = auth_tag
    return data


def secrets_from_data(data: Mapping[str, str], seat_ids: list[str]) -> TenantSecrets:
    seats = {s: SeatSecret(data[seat_key(s)], data[seat_auth(s)]) for s in seat_ids}
    return TenantSecrets(seats, data[USER_KEY], data[USER_AUTH])
