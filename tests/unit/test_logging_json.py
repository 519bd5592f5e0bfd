"""Every line a process logs is one JSON object (``entrypoints/logging.py``): the standard library's
records (third-party libraries, granian), exceptions no code caught in any thread, and a command's
failure; tracebacks inside the line, never a local variable's value."""

from __future__ import annotations

import json
import logging
import pickle
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
import typer
from granian.log import LogLevels, configure_logging

from entrypoints.cli.main import _logged
from entrypoints.logging import QUIET, command_failed, configure, granian_log_config

NAMED = ("aiokafka", "_granian", "granian.access", *QUIET)


@pytest.fixture(autouse=True)
def restored_logging() -> Iterator[None]:
    """Each test configures the process's logging; the configuration before it comes back after."""
    saved = structlog.get_config()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    named = {name: (logging.getLogger(name).handlers[:], logging.getLogger(name).level,
                    logging.getLogger(name).propagate) for name in NAMED}
    hooks = sys.excepthook, threading.excepthook, sys.unraisablehook
    try:
        yield
    finally:
        structlog.configure(**saved)
        root.handlers[:] = handlers
        root.setLevel(level)
        for name, (its_handlers, its_level, propagate) in named.items():
            logger = logging.getLogger(name)
            logger.handlers[:] = its_handlers
            logger.setLevel(its_level)
            logger.propagate = propagate
        sys.excepthook, threading.excepthook, sys.unraisablehook = hooks


def json_lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """Every non-empty line written to stderr, each parsed as one JSON object."""
    return [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_a_library_s_warning_is_one_json_line_with_its_logger_s_name(capsys):
    configure("info", "json")

    logging.getLogger("aiokafka.consumer.group_coordinator").warning("x %s", 1)

    [line] = json_lines(capsys)
    assert {k: line[k] for k in ("event", "level", "logger")} == {
        "event": "x 1", "level": "warning", "logger": "aiokafka.consumer.group_coordinator"}
    assert line["timestamp"].endswith("Z")  # ISO 8601, UTC


def test_a_library_s_exception_is_logged_with_its_traceback_inside_the_line(capsys):
    configure("info", "json")

    try:
        {}["missing"]
    except KeyError:
        logging.getLogger("psycopg.pool").exception("error connecting in %r", "pool-1")

    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1  # the traceback did not follow as lines of its own
    line = json.loads(err)
    assert (line["event"], line["level"], line["logger"]) == ("error connecting in 'pool-1'", "error", "psycopg.pool")
    assert line["exception"].startswith("Traceback (most recent call last):")
    assert "KeyError: 'missing'" in line["exception"]


def test_library_lines_follow_the_configured_level_and_noisy_libraries_start_at_warning(capsys):
    configure("warning", "json")
    logging.getLogger("aiokafka.consumer.group_coordinator").info("Joined group")
    logging.getLogger("aiokafka.consumer.group_coordinator").error("Heartbeat failed")
    assert [line["event"] for line in json_lines(capsys)] == ["Heartbeat failed"]

    configure("info", "json")  # a second configuration replaces the first one's handler
    logging.getLogger("aiokafka.consumer.group_coordinator").info("Joined group")
    logging.getLogger("httpx").info('HTTP Request: GET http://127.0.0.1/healthz "HTTP/1.1 200 OK"')
    logging.getLogger("twilio.http_client").info("-- BEGIN Twilio API Request --")
    logging.getLogger("twilio.http_client").warning("retrying")
    assert [line["event"] for line in json_lines(capsys)] == ["Joined group", "retrying"]


def test_an_exception_no_thread_caught_is_one_json_line_naming_the_thread(capsys):
    configure("info", "json")

    def fail() -> None:
        raise RuntimeError("the view's follower stopped")

    thread = threading.Thread(target=fail, name="view-follower")
    thread.start()
    thread.join()

    [line] = json_lines(capsys)
    assert {k: line[k] for k in ("event", "level", "error", "thread")} == {
        "event": "thread.failed", "level": "error", "error": "RuntimeError", "thread": "view-follower"}
    assert "RuntimeError: the view's follower stopped" in line["exception"] and line["timestamp"]


def test_an_exception_that_ends_the_process_is_one_json_line_without_local_values(capsys):
    configure("info", "json")

    def connect() -> None:
        password = "s3cret-local-value"  # noqa: F841 - a local a traceback with locals would print
        raise ConnectionError("database unreachable")

    try:
        connect()
    except ConnectionError:
        sys.excepthook(*sys.exc_info())

    err = capsys.readouterr().err
    [line] = [json.loads(text) for text in err.splitlines()]
    assert {k: line[k] for k in ("event", "level", "error", "thread")} == {
        "event": "process.failed", "level": "error", "error": "ConnectionError", "thread": "MainThread"}
    assert "ConnectionError: database unreachable" in line["exception"]
    assert "s3cret-local-value" not in err


def test_a_command_that_raises_logs_process_failed_and_exits_1_while_its_own_exits_pass(capsys):
    def worker() -> None:
        configure("info", "json")
        raise OSError("could not create the tables")

    with pytest.raises(SystemExit) as exited:
        _logged("worker")(worker)()

    assert exited.value.code == 1
    [line] = json_lines(capsys)
    assert {k: line[k] for k in ("event", "level", "command", "error")} == {
        "event": "process.failed", "level": "error", "command": "worker", "error": "OSError"}
    assert "OSError: could not create the tables" in line["exception"]

    def relay() -> None:
        raise typer.Exit(2)  # a refusal the command printed itself

    with pytest.raises(typer.Exit):
        _logged("relay")(relay)()
    assert capsys.readouterr().err == ""
    assert _logged("worker")(worker).__wrapped__ is worker  # typer reads the command's own signature


def test_a_command_that_fails_before_configuring_the_log_still_writes_json(capsys, monkeypatch):
    monkeypatch.delenv("CALLWRIGHT_LOG_FORMAT", raising=False)
    monkeypatch.delenv("CALLWRIGHT_LOG_LEVEL", raising=False)
    structlog.reset_defaults()  # no configuration yet, as in a fresh process

    command_failed("serve", ValueError("CALLWRIGHT_PORT is not a number"))

    [line] = json_lines(capsys)
    assert (line["event"], line["command"], line["error"]) == ("process.failed", "serve", "ValueError")


def test_granian_s_lines_are_json_through_its_own_logging_configuration(capsys):
    config = granian_log_config("info", "json")
    assert pickle.loads(pickle.dumps(config)) == config  # a spawned worker process receives it too

    configure_logging(LogLevels.info, config)  # what granian does in its main and worker processes
    logging.getLogger("_granian").info("Listening at: http://127.0.0.1:8000")
    logging.getLogger("_granian.serve").info("Started worker-1")  # the Rust side's loggers
    logging.getLogger("granian.access").info("%(method)s %(path)s", {"method": "GET", "path": "/healthz"})
    logging.getLogger("_granian").debug("below the level")
    logging.getLogger("mcp.server.streamable_http_manager").info("StreamableHTTP session manager started")

    assert [(line["logger"], line["event"], line["level"]) for line in json_lines(capsys)] == [
        ("_granian", "Listening at: http://127.0.0.1:8000", "info"),
        ("_granian.serve", "Started worker-1", "info"),
        ("granian.access", "GET /healthz", "info"),
        ("mcp.server.streamable_http_manager", "StreamableHTTP session manager started", "info"),
    ]


def test_the_console_format_renders_a_library_s_line_on_one_line_too(capsys):
    configure("info", "console")

    logging.getLogger("aiokafka.consumer.group_coordinator").warning("Heartbeat session expired")

    [text] = capsys.readouterr().err.splitlines()
    assert "Heartbeat session expired" in text and "aiokafka.consumer.group_coordinator" in text


def test_an_exception_python_cannot_raise_is_one_json_line(capsys):
    """A ``__del__`` that raises: Python reports it through ``sys.unraisablehook``, which wrote plain
    text into the JSON lines before."""
    configure("info", "json")

    class Leaky:
        def __del__(self) -> None:
            raise ValueError("closing a connection twice")

    leaky = Leaky()
    del leaky

    [line] = json_lines(capsys)
    assert {k: line[k] for k in ("event", "level", "error")} == {
        "event": "exception.unraisable", "level": "warning", "error": "ValueError"}
    assert "closing a connection twice" in line["exception"] and "Leaky.__del__" in line["object"] + line["where"]
