"""Slow webhook endpoints of one tenant against another tenant's latency (issue 13, item 3).

Tenant A has 20 endpoints whose receiver answers only after the sender's timeout (1 s here) and
keeps ending calls; tenant B has one quick endpoint. Once A's backlog is established, the first
attempt of each of B's deliveries still reaches B's receiver soon after its call ended: A's
endpoints cost A's own share of the dispatcher's slots (webhook_slots.py, docs/decisions.md 33).
Before, A's attempts queued for the 64 shared slots and B's waited behind them for seconds."""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Iterator
from datetime import datetime

import pytest

from tests.e2e.service import ServeProcess, approved_key, bearer, offline_server
from tests.fakes.receiver import Answer, Receiver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
TIMEOUT = 1.0  # the sender's, per attempt
SLOW_ENDPOINTS = 20
B_CALLS = 30
# SPEC target 250 ms at p99 on a quiet machine; the test allows for a busy CI machine and still
# fails on the shared-slot dispatcher, where B's first attempts waited 1-3 s behind A's timeouts.
P99_BOUND = 0.6
CALL = {"objective": "Webhook fairness", "consent_type": "emergency", "mode": "simulated", "to": "+442071838750",
        "outcome_schema": {"ok": {"type": "boolean"}}, "simulation": {"answered_by": "fax"}}  # ends at once


@pytest.fixture
def server() -> Iterator[ServeProcess]:
    with offline_server("callwright-slow-webhooks-", rate_limit_tiers='{"standard": 1000000}',
                        webhook_allow_private="1", webhook_allow_http="1",
                        webhook_timeout_seconds=str(TIMEOUT)) as process:
        yield process


@pytest.fixture
def slow() -> Iterator[Receiver]:
    made = Receiver(default=Answer(delay=TIMEOUT + 1.5))
    made._server.handle_error = lambda *_: None  # the dispatcher hung up at its timeout: a broken pipe, expected
    yield made
    made.close()


@pytest.fixture
def fast() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.close()


def _create_calls(server: ServeProcess, headers: dict[str, str], count: int, interval: float,
                  stop: threading.Event | None = None) -> list[str]:
    made = []
    with server.client() as http:
        for _ in range(count):
            if stop is not None and stop.is_set():
                break
            answer = http.post("/v1/calls", json=CALL, headers=headers)
            assert answer.status_code == 201, answer.text
            made.append(answer.json()["call_id"])
            time.sleep(interval)
    return made


def test_slow_endpoints_of_one_tenant_do_not_delay_another_tenants_first_attempts(server, slow, fast):
    a, b = (bearer(approved_key(server, email)) for email in ("slow@example.com", "quick@example.com"))
    with server.client() as http:
        for n in range(SLOW_ENDPOINTS):
            assert http.post("/v1/webhooks", json={"url": f"{slow.url}/{n}"}, headers=a).status_code == 201
        assert http.post("/v1/webhooks", json={"url": fast.url}, headers=b).status_code == 201

    _create_calls(server, a, 10, 0.0)  # 200 deliveries to endpoints that time out
    slow.wait_for(40, timeout=15)
    stop = threading.Event()
    more = threading.Thread(target=_create_calls, args=(server, a, 1000, 0.2, stop), daemon=True)
    more.start()  # A goes on ending calls while B's are measured
    try:
        time.sleep(1.5 * TIMEOUT)  # past A's first timeouts: the backlog is established
        b_calls = _create_calls(server, b, B_CALLS, 0.15)
        fast.wait_for(B_CALLS, timeout=30)
    finally:
        stop.set()
        more.join(timeout=10)

    wall = time.time() - time.monotonic()  # the receiver notes monotonic times
    arrived: dict[str, float] = {}
    for request in fast.received:
        arrived.setdefault(json.loads(request.body)["data"]["call_id"], request.at + wall)
    with server.client() as http:
        ended = {c: datetime.fromisoformat(http.get(f"/v1/calls/{c}", headers=b).json()["ended_at"]).timestamp()
                 for c in b_calls}
    latencies = sorted(arrived[c] - ended[c] for c in b_calls)
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
    summary = f"B's first attempts after call end: p50 {statistics.median(latencies):.3f} s, p99 {p99:.3f} s"
    print(summary, f"; {len(slow.received)} attempts reached A's receiver")
    assert len(slow.received) > 60, f"A's endpoints were hardly attempted ({len(slow.received)}); {summary}"
    assert p99 < P99_BOUND, summary
