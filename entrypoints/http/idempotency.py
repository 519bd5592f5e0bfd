"""The ``Idempotency-Key`` header of the creating routes (``POST /v1/calls``, its batch,
``POST /v1/numbers``): its parameter, its check, and the answer of a run that may be a replay."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Response
from litestar.params import Parameter

from application.calling.idempotency import Answer
from application.errors import FieldError
from domain.calls.idempotency import is_valid_key

IdempotencyKey = Annotated[str | None, Parameter(header="Idempotency-Key", required=False)]


def checked_key(value: str | None) -> str | None:
    if value is not None and not is_valid_key(value):
        raise FieldError(["header", "Idempotency-Key"],
                         "Idempotency-Key must be 1 to 255 characters from A-Z a-z 0-9 _ . : -",
                         code="invalid_idempotency_key", value=value[:300])
    return value


def answer_response(answer: Answer) -> Response[Any]:
    """The first run's answer; a replay says so in ``Idempotent-Replayed``."""
    headers = {"Idempotent-Replayed": "true"} if answer.replayed else None
    return Response(answer.body, status_code=answer.status_code, headers=headers)
