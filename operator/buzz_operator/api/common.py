"""Building blocks shared by the BuzzSweep and BuzzTrial schemas.

Every model here is written for two readers at once: the operator, which validates objects
with it, and `kubectl explain`, which shows each Field description after crdgen has turned
the model into an OpenAPI schema. So every field carries a description, and JSON names are
Kubernetes camelCase while Python keeps snake_case (``populate_by_name`` accepts both).
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer
from pydantic.alias_generators import to_camel

from buzz_operator.api.secret_text import StatusText

GROUP = "bench.buzz.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
# The resources' plural names, as the API server's paths and RBAC rules spell them (crdgen
# derives the same from the kinds; a unit test holds them equal).
SWEEPS = "buzzsweeps"
TRIALS = "buzztrials"


def _rfc3339(moment: datetime) -> str:
    # metav1.Time is second-precision RFC 3339 with a literal Z; anything else makes
    # clients that compare timestamps textually (kubectl, Go's time parsing) disagree.
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


Timestamp = Annotated[datetime, PlainSerializer(_rfc3339, return_type=str)]


class SpecModel(BaseModel):
    """User-written input: unknown keys are mistakes (``atempts``) and are refused by name."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", use_enum_values=False
    )

    def to_api(self) -> dict[str, Any]:
        """The object as the API server stores it: camelCase keys, unset optionals left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def _without_empty_strings(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_empty_strings(item) for key, item in value.items() if item != ""}
    if isinstance(value, list):
        return [_without_empty_strings(item) for item in value]
    return value


class StatusModel(BaseModel):
    """Operator-written output: reading it back must survive fields a newer operator added."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_api(self) -> dict[str, Any]:
        """Status as written to the API server: unset and empty-string fields left out.

        Empty strings are left out because kube-apiserver 1.20 was seen rejecting "" in a CR's
        string field as "null" ("must be of type string"); leaving them out costs nothing on any
        server, as every such field defaults to "" when read back.
        """
        return _without_empty_strings(self.model_dump(mode="json", by_alias=True, exclude_none=True))


class LocalObjectRef(SpecModel):
    """A reference to an object in the same namespace as the referrer."""

    name: str = Field(min_length=1, max_length=253, description="Name of the object in this namespace.")


class SecretKeyRef(SpecModel):
    """One key of a Secret in the same namespace."""

    name: str = Field(min_length=1, max_length=253, description="Name of the Secret in this namespace.")
    key: str = Field(min_length=1, description="Key inside the Secret's data whose value is used.")


class ServiceRef(SpecModel):
    """A Service in the same namespace; the operator resolves its ClusterIP through the API."""

    name: str = Field(min_length=1, max_length=63, description="Name of the Service in this namespace.")
    port: int = Field(ge=1, le=65535, description="Service port to connect to.")


class CostRange(StatusModel):
    """Spend in US dollars as a range: the floor counts only priced, reconciled usage; the
    ceiling adds an upper bound for usage that could not be reconciled."""

    floor: float = Field(0.0, ge=0, description="Lower bound of spend in USD (reconciled receipts only).")
    ceiling: float = Field(0.0, ge=0, description="Upper bound of spend in USD (adds unreconciled usage).")


class ImagePullPolicy(StrEnum):
    ALWAYS = "Always"
    IF_NOT_PRESENT = "IfNotPresent"
    NEVER = "Never"


class ConditionStatus(StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class Condition(StatusModel):
    """One aspect of the object's state, in the shape of metav1.Condition."""

    type: str = Field(min_length=1, description="CamelCase aspect this condition describes, e.g. Complete.")
    status: ConditionStatus = Field(description="True, False or Unknown.")
    reason: str = Field(min_length=1, description="CamelCase, machine-readable cause of the last transition.")
    message: StatusText = Field("", description="Human-readable details of the last transition.")
    last_transition_time: Timestamp = Field(description="When status last changed (not reason or message).")
    observed_generation: int | None = Field(
        None, ge=0, description="metadata.generation this condition was computed from."
    )


class Waiting(StatusModel):
    """Why nothing more is starting right now, so `kubectl describe` answers "why pending"."""

    reason: str = Field(description="CamelCase cause, e.g. ParallelismLimit, EndpointLimit, Suspended.")
    message: StatusText = Field(
        "", description="Details, including how many trials wait and which limit holds them."
    )


# A list-map keyed by type, as Kubernetes declares `conditions` (server-side apply merges by key).
CONDITIONS_LIST_EXTRA: dict[str, Any] = {
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
}

# kopf keeps handler progress under status.kopf (StatusProgressStorage(field="status.kopf")).
# Only that subtree keeps unknown fields; the rest of status stays pruned and typed.
KOPF_STATUS_DESCRIPTION = "Handler progress recorded by the operator framework (kopf); not for users."
PRESERVE_UNKNOWN: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}
