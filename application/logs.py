"""Where the use cases say what happened: a structured logger (an event name and key-value fields)
behind a port. The entrypoints install the service's logger (``entrypoints/logging.py``), so the
application imports no logging library of its own; until one is installed, lines go to the
standard library's ``logging``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol


class Logger(Protocol):
    def debug(self, event: str, **fields: Any) -> Any: ...

    def info(self, event: str, **fields: Any) -> Any: ...

    def warning(self, event: str, **fields: Any) -> Any: ...

    def error(self, event: str, **fields: Any) -> Any: ...

    def exception(self, event: str, **fields: Any) -> Any:
        """``error`` with the exception being handled."""
        ...


LoggerFactory = Callable[[str], Logger]


class _StandardLogger:
    """The fallback: ``event key=value …`` through the standard library's ``logging``."""

    def __init__(self, name: str) -> None:
        self._logger = logging.getLogger(name)

    def _log(self, level: int, event: str, fields: dict[str, Any], exc_info: Any = False) -> None:
        if self._logger.isEnabledFor(level):
            exc_info = fields.pop("exc_info", exc_info)
            text = " ".join([event, *(f"{key}={value!r}" for key, value in fields.items())])
            self._logger.log(level, text, exc_info=exc_info)

    def debug(self, event: str, **fields: Any) -> None:
        self._log(logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log(logging.WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, event, fields, exc_info=True)


_installed: list[LoggerFactory] = [_StandardLogger]


def install(factory: LoggerFactory) -> None:
    """Every logger of the application writes through ``factory``'s loggers from now on."""
    _installed[0] = factory


class _Deferred:
    """A module's logger, created at import, resolved against the factory installed at the time of
    each line (and kept while that factory stays installed)."""

    __slots__ = ("_name", "_factory", "_logger")

    def __init__(self, name: str) -> None:
        self._name = name
        self._factory: LoggerFactory | None = None
        self._logger: Logger | None = None

    def _current(self) -> Logger:
        factory = _installed[0]
        if factory is not self._factory or self._logger is None:
            self._factory, self._logger = factory, factory(self._name)
        return self._logger

    def debug(self, event: str, **fields: Any) -> None:
        self._current().debug(event, **fields)

    def info(self, event: str, **fields: Any) -> None:
        self._current().info(event, **fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._current().warning(event, **fields)

    def error(self, event: str, **fields: Any) -> None:
        self._current().error(event, **fields)

    def exception(self, event: str, **fields: Any) -> None:
        self._current().exception(event, **fields)


def get_logger(name: str) -> Logger:
    return _Deferred(name)
