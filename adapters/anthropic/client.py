"""The SDK client factory and the mapping of every SDK failure to ``AgentUnavailableError``.

The API key goes to the SDK client and nowhere else: never into a log line, an error or an event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

import anthropic
import structlog

from adapters.anthropic.errors import AgentUnavailableError

# Any model name is accepted by the SDK (its ``model`` parameter is a str); this one is current
# and not on the SDK's deprecation list (2.12: claude-sonnet-4-5 ends 2026-11-30).
DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_MAX_RETRIES = 2

log = structlog.get_logger(__name__)


def make_client(api_key: str, base_url: str | None = None, timeout: float = DEFAULT_TIMEOUT_SECONDS,
                max_retries: int = DEFAULT_MAX_RETRIES) -> anthropic.Anthropic:
    """A synchronous client; ``base_url`` None means ``ANTHROPIC_BASE_URL`` or the public API."""
    if not api_key:
        raise ValueError("an Anthropic API key is required")
    return anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries)


@contextmanager
def calling_model(operation: str, model: str) -> Iterator[None]:
    """Runs one Messages API request; SDK errors leave as ``AgentUnavailableError``."""
    try:
        yield
    except anthropic.APIStatusError as exc:
        # A mid-stream ``error`` event arrives on a 200 response: its type says what went wrong.
        status = exc.status_code if exc.status_code >= 400 else None
        log.warning("anthropic.failed", operation=operation, model=model, status=status,
                    error_type=exc.type, request_id=exc.request_id)
        where = f"status {status}" if status is not None else "mid-stream"
        raise AgentUnavailableError(f"the language model failed: {exc.type or 'error'} ({where})", status=status) from exc
    except anthropic.APIError as exc:  # connection errors, timeouts, unreadable responses
        log.warning("anthropic.failed", operation=operation, model=model, error_type=type(exc).__name__)
        raise AgentUnavailableError(f"the language model could not be reached ({type(exc).__name__})") from exc


class ModelAdapter:
    """What the agent brain and the extractor share: a client, a model, a token budget and an
    optional clock (for today's date in prompts)."""

    default_max_tokens = 1024

    def __init__(self, client: anthropic.Anthropic, *, model: str = DEFAULT_MODEL, max_tokens: int | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self._client = client
        self.model = model
        self._max_tokens = max_tokens or self.default_max_tokens
        self._clock = clock
