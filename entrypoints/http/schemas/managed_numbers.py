"""The request of ``POST /v1/numbers``: a managed number's area code and use case.

``use_case`` is an enum in the OpenAPI document; anything else is refused by the domain's reason
(``domain.numbers.use_cases``) as 422 ``use_case_not_supported`` with ``ctx.allowed``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError

from domain.numbers import use_cases
from entrypoints.http.schemas.calls import Strict


def _supported(value: str) -> str:
    reason = use_cases.refusal(value)
    if reason is not None:
        raise PydanticCustomError("use_case_not_supported", reason.replace("{", "(").replace("}", ")"),
                                  {"allowed": list(use_cases.ALLOWED)})
    return value


USE_CASE_SCHEMA = {"type": "string", "enum": list(use_cases.ALLOWED),
                   "description": "What the number is for: " + "; ".join(
                       f"{name}: {what}" for name, what in use_cases.USE_CASES.items())}


class ManagedNumberCreate(Strict):
    area_code: Annotated[str, StringConstraints(pattern=r"^[2-9][0-9]{2}$")] = Field(
        description="A North American area code (3 digits, the first 2 to 9): the number is bought in it",
        examples=["415"])
    use_case: Annotated[str, AfterValidator(_supported)] = Field(json_schema_extra=USE_CASE_SCHEMA)
