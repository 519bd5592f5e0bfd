"""Periodic jobs that keep every call moving (ARCHITECTURE.md §7): the watchdog fails calls stuck
past their maximum duration, the reconciler asks the carrier about live calls gone quiet.

Each runs on a thread of its own, started with the followers and stopped with the container; a
failing round is reported and the next one runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Protocol

import structlog

from application.calling.app import Calling
from application.calling.lifecycle import fail_overdue
from application.calling.reconcile import reconcile
from domain.calls.simulated_run import LEASE
from domain.calls.call_rules import IN_PROGRESS, QUEUED
from projections.calls_list.overdue import overdue_call_ids, running_live_call_ids, simulated_calls

log = structlog.get_logger(__name__)

INTERVAL_SECONDS = 5.0
# A simulated call queued this long is one the runner's memory may have lost (a restart).
QUEUED_GRACE = timedelta(seconds=10)


class PeriodicJob:
    def __init__(self, name: str, interval: float, job: Callable[[], None]) -> None:
        self.name = name
        self.interval = interval
        self.job = job
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"call-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.job()
            except Exception as exc:
                log.error(f"{self.name}.failed", error=type(exc).__name__, exc_info=exc)


def watchdog(calling: Calling, conninfo: str, max_call_seconds: int, interval: float = INTERVAL_SECONDS) -> PeriodicJob:
    """Every few seconds, end calls stuck past their maximum duration (``timeout``)."""

    def job() -> None:
        ids = overdue_call_ids(conninfo, calling.ports.clock(), max_call_seconds)
        if ids:
            log.warning("watchdog.timeouts", calls=fail_overdue(calling, ids))

    return PeriodicJob("watchdog", interval, job)


def reconciler(calling: Calling, conninfo: str, after_seconds: float, interval: float = INTERVAL_SECONDS) -> PeriodicJob:
    """Every few seconds, ask the carrier about live calls that have been quiet too long."""
    after = timedelta(seconds=after_seconds)

    def job() -> None:
        ids = running_live_call_ids(conninfo, calling.ports.clock() - after)
        moved = reconcile(calling, ids, after) if ids else []
        if moved:
            log.warning("reconciler.settled", calls=moved)

    return PeriodicJob("reconciler", min(interval, max(0.5, after.total_seconds() / 2)), job)


def simulation_resumer(calling: Calling, conninfo: str, runner: SimulationRunner, following: Callable[[], bool],
                       interval: float = INTERVAL_SECONDS) -> PeriodicJob:
    """Simulated calls wait in the call runner's memory, unclaimed, while the reactor's position
    moves past them: every few seconds, the ones queued longer than ``QUEUED_GRACE`` are handed
    to it again (a restart or a crash loses none; a call already waiting there is not taken
    twice), and the ones in progress longer than a lease are offered for a take-over (their
    runner's process died: the aggregate grants it only when the lease ran out). Only while
    ``following``: the runner is the one this process feeds from the log."""

    def job() -> None:
        if not following():
            return
        now = calling.ports.clock()
        taken = runner.resume(simulated_calls(conninfo, QUEUED, now - QUEUED_GRACE))
        if taken:
            log.info("simulation.resumed", calls=taken)
        offered = runner.take_over(simulated_calls(conninfo, IN_PROGRESS, now - LEASE))
        if offered:
            log.debug("simulation.take_over_offered", calls=offered)

    return PeriodicJob("simulation-resumer", interval, job)


class SimulationRunner(Protocol):
    def resume(self, waiting: list[tuple[str, str]]) -> int: ...

    def take_over(self, running: list[tuple[str, str]]) -> int: ...
