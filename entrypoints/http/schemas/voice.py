"""Request and response shapes of the voice routing settings: ``/v1/tenants/me`` and
``/v1/admin/system-defaults``, ``/v1/admin/voice-model-stats``.

PATCH bodies tell a field left out (kept) from one sent (``model_fields_set``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError


def _json_bool(value: Any) -> Any:
    # Litestar validates bodies with strict=False, which would read "yes" or 1 as true.
    if not isinstance(value, bool):
        raise PydanticCustomError("bool_type", "Input should be a valid boolean")
    return value


def _json_number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PydanticCustomError("float_type", "Input should be a valid number")
    return value


Engine = Literal["alpha_25", "alpha_31", "beta_think_fast"]  # tenant and system level (SPEC.md Call create request)
JsonBool = Annotated[bool, BeforeValidator(_json_bool)]
Weight = Annotated[float, Field(ge=0, le=1_000_000, allow_inf_nan=False), BeforeValidator(_json_number)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TenantSettingsPatch(Strict):
    # null clears the tenant's default: the system default engine applies again
    voice_engine_default: Engine | None = None
    voice_ab_disabled: JsonBool = False


class SystemDefaultsPatch(Strict):
    voice_engine_default: Engine = "alpha_25"
    voice_ab_weights: dict[Engine, Weight] = Field(default_factory=dict)

    @field_validator("voice_ab_weights")
    @classmethod
    def _some_weight_positive(cls, value: dict[str, float]) -> dict[str, float]:
        if not any(weight > 0 for weight in value.values()):
            raise ValueError("at least one engine needs a positive weight")
        return value


class TenantSettingsResponse(msgspec.Struct, kw_only=True):
    tenant_id: str
    voice_engine_default: str | None
    voice_ab_disabled: bool


class SystemDefaultsResponse(msgspec.Struct, kw_only=True):
    voice_engine_default: str
    voice_ab_weights: dict[str, float]
    updated_at: str | None
    updated_by: str | None
