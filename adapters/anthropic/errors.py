"""The one error the Anthropic adapters raise: the model could not be reached or refused to answer."""

from __future__ import annotations

from application.errors import ApplicationError


class AgentUnavailableError(ApplicationError):
    """The Messages API failed (status error, connection error, timeout); ``status`` when it answered."""

    code = "agent_unavailable"

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
