"""The application's logging port (application/logs.py): use cases log events with fields and never
import a logging library; the entrypoints install the service's logger."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from application import logs


class Recording:
    def __init__(self, name: str, lines: list[tuple[str, str, str, dict[str, Any]]]) -> None:
        self.name, self.lines = name, lines

    def __getattr__(self, level: str) -> Any:
        return lambda event, **fields: self.lines.append((self.name, level, event, fields))


@pytest.fixture
def restore() -> Any:
    saved = logs._installed[0]
    yield
    logs.install(saved)


def test_a_logger_made_at_import_writes_through_the_factory_installed_later(restore):
    lines: list[tuple[str, str, str, dict[str, Any]]] = []
    log = logs.get_logger("callwright.test")
    logs.install(lambda name: Recording(name, lines))

    log.warning("call.dial_unknown", call_id="cll_1", reason="timeout")
    logs.install(lambda name: Recording(name + ".again", lines))
    log.info("call.queued", call_id="cll_2")

    assert lines == [("callwright.test", "warning", "call.dial_unknown", {"call_id": "cll_1", "reason": "timeout"}),
                     ("callwright.test.again", "info", "call.queued", {"call_id": "cll_2"})]


def test_without_an_installed_logger_lines_go_to_the_standard_library(restore, caplog):
    logs.install(logs._StandardLogger)
    with caplog.at_level(logging.INFO, logger="callwright.fallback"):
        logs.get_logger("callwright.fallback").info("call.queued", call_id="cll_3", duration_seconds=12)
        try:
            raise ValueError("boom")
        except ValueError:
            logs.get_logger("callwright.fallback").exception("projection.failed", projection="calls_list_v1")

    assert caplog.records[0].getMessage() == "call.queued call_id='cll_3' duration_seconds=12"
    assert caplog.records[1].levelno == logging.ERROR and caplog.records[1].exc_info is not None


def test_the_service_configuration_installs_its_logger(restore):
    import structlog

    from entrypoints.logging import configure

    saved = structlog.get_config()
    try:
        configure("info", "json")
        assert logs._installed[0] is structlog.get_logger
    finally:
        structlog.configure(**saved)
