"""The call runner's pools (entrypoints/workers/call_runner.py): simulated conversations with the
scripted brain run on few threads (pure Python: more would only contend for the GIL), dials and
conversations with a networked brain on more; each pool claims a call only when it can start it."""

from __future__ import annotations

import threading
import time

from adapters.scripted.brain import ScriptedExtractor
from entrypoints.bootstrap import SCRIPTED_SIMULATIONS, bootstrap
from entrypoints.workers.call_runner import CallRunner, _Workers
from tests.support.setup import FAST_HASHER


def runner_of(container) -> CallRunner:
    return container.reactors[CallRunner.name].process_event.__self__


def test_the_scripted_brain_gets_few_simulation_threads_and_another_brain_the_default(container, settings, db, clock, mail):
    assert runner_of(container).simulation_workers == SCRIPTED_SIMULATIONS == 2

    class NetworkedBrain:  # any brain that is not the scripted one
        def open(self, brief):  # pragma: no cover - never asked to converse here
            raise NotImplementedError

    other = bootstrap(settings, database=db, clock=clock, email=mail, hasher=FAST_HASHER,
                      agent=(NetworkedBrain(), ScriptedExtractor()))
    try:
        assert runner_of(other).simulation_workers == 8
    finally:
        other.close()


def test_a_pool_runs_at_most_its_size_at_once_and_a_refused_claim_frees_its_slot():
    workers = _Workers(2, "test")
    release = threading.Event()
    running: list[int] = []
    peak: list[int] = []
    lock = threading.Lock()

    def work(call) -> None:
        with lock:
            running.append(call)
            peak.append(len(running))
        release.wait(5)
        with lock:
            running.remove(call)

    try:
        workers.start(lambda: None, work)  # refused: claims nothing, keeps no slot
        for n in range(4):  # two run, two wait in the pool: the slots allow twice the size
            workers.start(lambda n=n: n, work)
        time.sleep(0.2)
        assert len(running) == 2
        blocked = threading.Thread(target=workers.start, args=(lambda: 99, work), daemon=True)
        blocked.start()
        blocked.join(0.2)
        assert blocked.is_alive()  # a fifth claim waits for a slot
        release.set()
        blocked.join(5)
        assert not blocked.is_alive()
    finally:
        release.set()
        workers.close()
    assert max(peak) == 2 and running == []


def test_a_claim_that_fails_keeps_no_slot():
    workers = _Workers(1, "test")
    done = threading.Event()

    def failing():
        raise ConnectionError("database unreachable")

    def claims() -> None:
        for _ in range(3):  # more failures than the pool has slots (2)
            try:
                workers.start(failing, lambda call: None)
            except ConnectionError:
                pass
        workers.start(lambda: 1, lambda call: done.set())

    try:
        threading.Thread(target=claims, daemon=True).start()
        assert done.wait(5), "a failed claim kept its slot: the pool would stall"
    finally:
        workers.close()
