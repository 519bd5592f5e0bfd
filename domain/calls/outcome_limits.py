"""The size limits of a request's ``outcome_schema``, and the problems list that carries the limit
each refusal broke (its ``ctx``). Stdlib only; imports nothing of the service."""

from __future__ import annotations

import json
from typing import Any

Problem = tuple[list[str | int], str, str]  # as domain.errors.Problem

# They bound the agent's prompt and the simulated conversation. A stored definition is compiled
# without them, so what an older version accepted still replays.
MAX_ENUM_VALUES = 100
MAX_ENUM_VALUE_LENGTH = 100
MAX_SCHEMA_BYTES = 16_384  # of the definition as compact UTF-8 JSON


class Problems(list[Problem]):
    """Problems found, and the ``ctx`` (the limit broken) of those that have one, by position."""

    def __init__(self) -> None:
        super().__init__()
        self.ctx: dict[int, dict[str, Any]] = {}

    def over(self, loc: list[str | int], message: str, kind: str, **ctx: Any) -> None:
        self.ctx[len(self)] = ctx
        self.append((loc, message, kind))

    def contexts(self) -> list[dict[str, Any]]:
        return [self.ctx.get(i, {}) for i in range(len(self))]


def schema_bytes(definition: Any) -> int:
    return len(json.dumps(definition, ensure_ascii=False, separators=(",", ":"), default=str)
               .encode("utf-8", "surrogatepass"))
