"""The request class of the app: a body the JSON decoder cannot read is the client's error.

Litestar turns only ``msgspec.DecodeError`` into a 400; invalid UTF-8 and very deep nesting
escape as ``UnicodeDecodeError`` and ``RecursionError`` and would become 500s.
"""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.exceptions import SerializationException

# The largest body the app reads: a larger one is refused with 413 (payload_too_large) unread.
MAX_BODY_BYTES = 1_000_000


class JsonBodyRequest(Request[Any, Any, Any]):
    async def json(self) -> Any:
        try:
            return await super().json()
        except UnicodeDecodeError as exc:
            raise SerializationException("the body is not valid UTF-8") from exc
        except RecursionError as exc:
            raise SerializationException("the body nests too deeply") from exc
