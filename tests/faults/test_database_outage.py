"""PostgreSQL goes away under a steady load of keyed creates (issue 13, item 1).

While it is away every create is answered within one connection wait (``database_wait_seconds``
+ 1 s; issue 30 item 9), ``201`` or ``503 database_unavailable`` with
``Retry-After``; ``/readyz`` answers within a second; within 5 s of the database's return the
service creates again; no acknowledged call is lost and none is created twice; the calls list
catches up within 10 s."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.service import ServeProcess, approved_key, bearer, offline_server
from tests.faults.load import Answer, Load, rows
from tests.faults.postgres_control import EmbeddedCluster
from tests.support.readme import first_call_body

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
UNLIMITED = '{"standard": 1000000}'
WAIT_SECONDS = 3.0  # CALLWRIGHT_DATABASE_WAIT_SECONDS, the default


@pytest.fixture
def server() -> Iterator[ServeProcess]:
    with offline_server("callwright-outage-", rate_limit_tiers=UNLIMITED) as process:
        yield process


def _calls_listed(server: ServeProcess, headers: dict[str, str]) -> set[str]:
    with server.client() as http:
        return {row["call_id"] for row in rows(http, "/v1/calls", headers)}


def _check_answers(load: Load, stopped: float, back: float) -> None:
    creates, probes = load.answers, load.readiness
    assert {a.status for a in creates} <= {201, 503}, sorted({(a.status, a.code) for a in creates} - {(201, None)})
    unavailable = [a for a in creates if a.status == 503]
    assert unavailable, "the outage was never seen"
    assert all(a.retry_after and int(a.retry_after) > 0 and a.code == "database_unavailable" for a in unavailable)
    # Issue 30 item 9: every answer within database_wait_seconds (3) + 1 s: one wait per request.
    slowest = max(creates, key=lambda a: a.seconds)
    assert slowest.seconds < WAIT_SECONDS + 1.0, f"a create took {slowest.seconds:.2f} s ({slowest.status})"
    assert all(a.status in (200, 503) and a.seconds < 1.0 for a in probes), \
        [(round(a.at - stopped, 2), a.status, round(a.seconds, 2)) for a in probes if a.seconds >= 1.0]
    assert any(a.status == 503 and stopped < a.at < back for a in probes), "/readyz never said not_ready"
    late = [a for a in creates if a.at > back + 5.0 and a.status != 201]
    assert not late, f"still failing {min(a.at for a in late) - back:.1f} s after the database came back"


def _nothing_lost_or_twice(server: ServeProcess, headers: dict[str, str], load: Load) -> None:
    by_key: dict[str, set[str]] = {}
    with server.client() as http:
        for answer in load.answers:
            if answer.status == 201:
                by_key.setdefault(answer.key, set()).add(answer.call_id)
        accepted = {call_id for ids in by_key.values() for call_id in ids}
        assert all(len(ids) == 1 for ids in by_key.values()), "a key was answered with two calls"
        deadline = time.monotonic() + 10.0
        listed: set[str] = set()
        while time.monotonic() < deadline:
            listed = _calls_listed(server, headers)
            if accepted <= listed:
                break
            time.sleep(0.5)
        assert accepted <= listed, f"{len(accepted - listed)} accepted calls missing from the list after 10 s"
        assert len(listed) == len(accepted), "the list holds calls nobody was told of (created twice?)"
        for call_id in list(accepted)[:20]:
            assert http.get(f"/v1/calls/{call_id}", headers=headers).status_code == 200


@pytest.mark.parametrize(("seconds", "mode"), [(3.0, "immediate"), (20.0, "fast")])
def test_postgres_stopped_under_load(server: ServeProcess, seconds: float, mode: str) -> None:
    headers = bearer(approved_key(server, "ops@example.com"))
    cluster = EmbeddedCluster(server.data_dir)
    load = Load(server.base_url, headers, first_call_body()).start()
    try:
        time.sleep(2.0)
        stopped = time.monotonic()
        cluster.stop(mode)
        time.sleep(seconds)
        cluster.start()
        back = time.monotonic()
        time.sleep(7.0)
    finally:
        load.stop()
    _check_answers(load, stopped, back)
    assert any(a.status == 201 and a.at > back for a in load.answers)
    _nothing_lost_or_twice(server, headers, load)


def test_every_backend_terminated(server: ServeProcess) -> None:
    """``pg_terminate_backend`` of every connection: only 503s until the pools reconnect, within 5 s."""
    headers = bearer(approved_key(server, "ops@example.com"))
    cluster = EmbeddedCluster(server.data_dir)
    load = Load(server.base_url, headers, first_call_body()).start()
    try:
        time.sleep(2.0)
        cut = time.monotonic()
        assert cluster.terminate_backends() > 0
        time.sleep(7.0)
    finally:
        load.stop()
    assert {a.status for a in load.answers} <= {201, 503}
    assert all(a.retry_after for a in load.answers if a.status == 503)
    assert not [a for a in load.answers if a.at > cut + 5.0 and a.status != 201]
    _nothing_lost_or_twice(server, headers, load)


def test_a_client_gone_before_the_commit_creates_nothing() -> None:
    """The database is away; a create waits for a connection; its client gives up after 1 s; the
    database returns and the request gets its connection: it must not commit then."""
    with offline_server("callwright-gone-", rate_limit_tiers=UNLIMITED, database_wait_seconds="12", log_level="info") as server:
        headers = bearer(approved_key(server, "ops@example.com"))
        cluster = EmbeddedCluster(server.data_dir)
        before = _calls_listed(server, headers)
        cluster.stop("fast")
        try:
            # The first requests meet pooled connections the stop broke and are answered 503 at
            # once; then one waits for a new connection, and its client leaves.
            for _ in range(20):
                try:
                    answer = httpx.post(f"{server.base_url}/v1/calls", json=first_call_body(), headers=headers,
                                        timeout=1.0, trust_env=False)
                except httpx.ReadTimeout:
                    break
                assert answer.status_code == 503, answer.text
            else:
                pytest.fail("no create waited for the database")
            time.sleep(1.0)
        finally:
            cluster.start()
        time.sleep(6.0)  # the pools reconnect (≤ 2 s) and the abandoned request runs to its commit
        assert _calls_listed(server, headers) == before, "\n".join(l[:300] for l in server.output().splitlines() if "v1/calls" in l or "client" in l)
        assert '"status":499' in server.output().replace(" ", "") or "client_closed_request" in server.output()
