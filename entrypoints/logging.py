"""structlog configuration: JSON lines (default) or console, with context variables merged in."""

from __future__ import annotations

import logging
import os
import sys

import structlog

from application import logs


def configure(level: str = "info", fmt: str = "json", *, final: bool = False) -> None:
    """``final``: nothing configures logging again in this process, so each logger keeps its
    first configuration (a lookup less on every log call; the server passes it)."""
    # Console colours only on a terminal, and never with NO_COLOR set (https://no-color.org).
    colours = not os.environ.get("NO_COLOR") and sys.stderr.isatty()
    renderer = structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer(colors=colours)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper(), logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=final,
    )
    logs.install(structlog.get_logger)  # the application's loggers write through this configuration
    # The twilio SDK logs every request's URL and headers at INFO (never the token, but noise).
    logging.getLogger("twilio.http_client").setLevel(logging.WARNING)
    # httpx logs each request's URL at INFO: the hosted tools' and the dashboard's in-process calls
    # would each log twice (the access line ``http.request`` already records them).
    logging.getLogger("httpx").setLevel(logging.WARNING)
