"""Periodic jobs that keep every call moving (ARCHITECTURE.md §7): the watchdog fails calls stuck
past their maximum duration, the reconciler asks the carrier about live calls gone quiet.

Each runs on a thread of its own, started with the followers and stopped with the container; a
failing round is reported and the next one runs. The watchdog and the reconciler are singletons:
every process that runs them holds a ``lock`` (an advisory lock), and only its holder does the
rounds, the others standing by. The resumer runs beside every call runner, safely sharded: a call
is taken only under a lease no live runner holds (``RunLeases``).

``pool`` is the process's connection pool (the calls list is read through it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Protocol

import structlog

from application.calling.app import Calling
from application.calling.lifecycle import fail_overdue
from application.calling.reconcile import reconcile
from domain.calls.call_rules import LEASE
from domain.calls.call_rules import IN_PROGRESS, QUEUED
from projections.calls_list.overdue import overdue_call_ids, running_live_call_ids, simulated_calls

log = structlog.get_logger(__name__)

INTERVAL_SECONDS = 5.0
# A simulated call queued this long is one the runner's memory may have lost (a restart).
QUEUED_GRACE = timedelta(seconds=10)


class Lock(Protocol):
    def try_acquire(self) -> bool: ...

    def release(self) -> None: ...


class PeriodicJob:
    def __init__(self, name: str, interval: float, job: Callable[[], None], lock: Lock | None = None) -> None:
        self.name = name
        self.interval = interval
        self.job = job
        self.lock = lock  # None: every process runs the rounds
        self.leading = lock is None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"call-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self.lock is not None:
            self.lock.release()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                if self._leads():
                    self.job()
            except Exception as exc:
                log.error(f"{self.name}.failed", error=type(exc).__name__, exc_info=exc)

    def _leads(self) -> bool:
        if self.lock is None:
            return True
        leading = self.lock.try_acquire()
        if leading and not self.leading:
            log.info("periodic.leading", job=self.name)
        self.leading = leading
        return leading


def watchdog(calling: Calling, pool: Any, max_call_seconds: int, interval: float = INTERVAL_SECONDS,
             lock: Lock | None = None) -> PeriodicJob:
    """Every few seconds, end calls stuck past their maximum duration (``timeout``)."""

    def job() -> None:
        ids = overdue_call_ids(pool, calling.ports.clock(), max_call_seconds)
        failed = fail_overdue(calling, ids) if ids else []
        if failed:
            log.warning("watchdog.timeouts", calls=failed)

    return PeriodicJob("watchdog", interval, job, lock)


def reconciler(calling: Calling, pool: Any, after_seconds: float, interval: float = INTERVAL_SECONDS,
               lock: Lock | None = None) -> PeriodicJob:
    """Every few seconds, ask the carrier about live calls that have been quiet too long."""
    after = timedelta(seconds=after_seconds)

    def job() -> None:
        ids = running_live_call_ids(pool, calling.ports.clock() - after)
        moved = reconcile(calling, ids, after) if ids else []
        if moved:
            log.warning("reconciler.settled", calls=moved)

    return PeriodicJob("reconciler", min(interval, max(0.5, after.total_seconds() / 2)), job, lock)


def simulation_resumer(calling: Calling, pool: Any, runner: SimulationRunner,
                       interval: float = INTERVAL_SECONDS) -> PeriodicJob:
    """Simulated calls wait in a call runner's memory, unclaimed, while the reactor's position
    moves past them: every few seconds, the ones queued longer than ``QUEUED_GRACE`` that no live
    runner holds (their runner died, or stopped and handed them back) are taken by this one (a
    call already waiting here is not taken twice), and the ones in progress longer than a lease
    are offered for a take-over (their runner's process died: the aggregate grants it only when
    the lease ran out)."""

    def job() -> None:
        now = calling.ports.clock()
        taken = runner.resume(simulated_calls(pool, QUEUED, now - QUEUED_GRACE))
        if taken:
            log.info("simulation.resumed", calls=taken)
        offered = runner.take_over(simulated_calls(pool, IN_PROGRESS, now - LEASE))
        if offered:
            log.debug("simulation.take_over_offered", calls=offered)

    return PeriodicJob("simulation-resumer", interval, job)


class SimulationRunner(Protocol):
    def resume(self, waiting: list[tuple[str, str]]) -> int: ...

    def take_over(self, running: list[tuple[str, str]]) -> int: ...
