"""Request shapes of ``/v1/webhooks``."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, StringConstraints

from domain.webhooks.endpoint import MAX_DESCRIPTION
from entrypoints.http.schemas.calls import Strict
from entrypoints.http.schemas.text import safe_text


class WebhookCreateRequest(Strict):
    url: Annotated[str, StringConstraints(min_length=1, max_length=2048), AfterValidator(safe_text)]
    description: Annotated[str, StringConstraints(max_length=MAX_DESCRIPTION), AfterValidator(safe_text)] | None = None
    events: Annotated[list[Annotated[str, StringConstraints(max_length=64)]], AfterValidator(list)] | None = None
