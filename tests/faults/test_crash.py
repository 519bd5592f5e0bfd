"""The server killed (SIGKILL to its process group) in the middle of work, then started again on
the same data directory and port (issue 13's acceptance):

- during a steady load of keyed creates, whose clients retry with the same ``Idempotency-Key``
  until they are answered;
- during batches of 200 simulated calls, while their calls run; a batch whose answer was lost is
  sent again with its key.

Afterwards nothing is lost and nothing is duplicated (the calls list is exactly the calls the
clients were told of), every call is terminal within 60 s of the restart, and every terminal call
has at least one webhook delivery (the tenant's endpoint is a loopback receiver answering 200)."""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from domain.calls import dialing_rules
from domain.calls.call_rules import TERMINAL
from domain.errors import DialingRuleError
from tests.e2e.service import ServeProcess, approved_key, base_env, bearer, free_port, start
from tests.fakes.receiver import Receiver
from tests.faults.load import Load, rows
from tests.support.readme import first_call_body

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
UNLIMITED = '{"standard": 1000000}'
DELAYS = "0.5,0.5,0.5"  # webhook retries within seconds
SETTLE_SECONDS = 60.0  # every call terminal, and delivered, within this of the restart
BATCHES = 3
BATCH_SIZE = 200


class Crashable:
    """A ``callwright serve`` on a fixed port and data directory that can be killed and started
    again; every process it started is cleaned up at the end, and the embedded PostgreSQL stopped."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.env = base_env(host="127.0.0.1", port=str(self.port), data_dir=str(workdir / "var"),
                            rate_limit_tiers=UNLIMITED, webhook_allow_private="1", webhook_allow_http="1",
                            webhook_timeout_seconds="2", webhook_retry_delays=DELAYS)
        self.env.pop("ANTHROPIC_API_KEY", None)
        self.servers: list[ServeProcess] = [start(self.env, self.port, workdir, 0)]

    @property
    def current(self) -> ServeProcess:
        return self.servers[-1]

    def crash_and_restart(self) -> float:
        """SIGKILL, then a new server on the same port and data: the monotonic time it was ready."""
        self.current.crash()
        self.servers.append(start(self.env, self.port, self.workdir, len(self.servers)))
        return time.monotonic()

    def logs(self) -> str:
        return "\n".join(f"--- serve-{n}.log ---\n{server.output()[-3000:]}" for n, server in enumerate(self.servers))

    def close(self) -> None:
        for server in self.servers:
            server.cleanup()
        self.current.stop_postgres()


@pytest.fixture
def service() -> Iterator[Crashable]:
    workdir = Path(tempfile.mkdtemp(prefix="callwright-faults-crash-"))
    service = None
    try:
        service = Crashable(workdir)
        yield service
    finally:
        if service is not None:
            service.close()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def hook() -> Iterator[Receiver]:
    receiver = Receiver()  # answers 200 to everything
    yield receiver
    receiver.close()


def tenant_with_endpoint(service: Crashable, hook: Receiver, email: str) -> tuple[dict[str, str], str]:
    headers = bearer(approved_key(service.current, email))
    with service.current.client() as http:
        created = http.post("/v1/webhooks", json={"url": hook.url}, headers=headers)
    assert created.status_code == 201, created.text
    return headers, str(created.json()["id"])


def listed_calls(http: httpx.Client, headers: dict[str, str]) -> tuple[dict[str, str], int]:
    """Every call of the tenant in ``GET /v1/calls`` (id → status), and how many rows the pages held."""
    listed = list(rows(http, "/v1/calls", headers))
    return {row["call_id"]: row["status"] for row in listed}, len(listed)


def counts(server: ServeProcess, headers: dict[str, str]) -> dict[str, int]:
    """How many calls the list holds in each status, now (for the notes: what the kill interrupted)."""
    with server.client() as http:
        return {status: http.get("/v1/calls", params={"status": status, "limit": 1}, headers=headers).json()["total"]
                for status in ("queued", "in_progress", "completed", "failed")}


def received_call_ids(hook: Receiver) -> set[str]:
    found = set()
    for request in list(hook.received):
        try:
            found.add(json.loads(request.body)["data"]["call_id"])
        except (ValueError, KeyError, TypeError):
            pass
    return found


def listed_delivery_call_ids(http: httpx.Client, headers: dict[str, str], endpoint_id: str) -> set[str]:
    return {row["call_id"] for row in rows(http, f"/v1/webhooks/{endpoint_id}/deliveries", headers, limit=100)}


def check_nothing_lost_or_twice(http: httpx.Client, headers: dict[str, str], acknowledged: set[str]) -> None:
    """The list is exactly the acknowledged calls (the list follows the log: give it 10 s), and
    each of them reads back."""
    deadline = time.monotonic() + 10.0
    while True:
        statuses, row_count = listed_calls(http, headers)
        if set(statuses) == acknowledged or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    missing, unknown = acknowledged - set(statuses), set(statuses) - acknowledged
    assert not missing, f"{len(missing)} acknowledged calls are not listed: {sorted(missing)[:20]}"
    assert not unknown, f"{len(unknown)} listed calls no client was told of (created twice?): {sorted(unknown)[:20]}"
    assert row_count == len(statuses), f"the list has {row_count} rows for {len(statuses)} calls"
    unreadable = [(call_id, status) for call_id in sorted(acknowledged)
                  if (status := http.get(f"/v1/calls/{call_id}", headers=headers).status_code) != 200]
    assert not unreadable, unreadable[:20]


def check_all_settle(http: httpx.Client, headers: dict[str, str], hook: Receiver, endpoint_id: str,
                     restarted: float, crashed_at: datetime, notes: list[str]) -> None:
    """Within ``SETTLE_SECONDS`` of the restart every call is terminal and every terminal call has
    at least one delivery (received by the hook, or at least listed under the endpoint)."""
    deadline = restarted + SETTLE_SECONDS
    while True:
        statuses, _ = listed_calls(http, headers)
        stuck = {call_id: status for call_id, status in statuses.items() if status not in TERMINAL}
        terminal = {call_id for call_id, status in statuses.items() if status in TERMINAL}
        undelivered = terminal - received_call_ids(hook)
        if undelivered:
            undelivered -= listed_delivery_call_ids(http, headers, endpoint_id)
        if (not stuck and not undelivered) or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    waited = time.monotonic() - restarted
    notes.append(f"settle check ended {waited:.1f} s after the restart: {len(statuses)} calls, "
                 f"{Counter(statuses.values())}, {len(stuck)} not terminal, {len(undelivered)} terminal undelivered")
    problems = []
    if stuck:
        problems.append(f"{len(stuck)} of {len(statuses)} calls not terminal {waited:.0f} s after the restart "
                        f"(killed at {crashed_at.isoformat()}):")
        for call_id in sorted(stuck)[:30]:
            record = http.get(f"/v1/calls/{call_id}", headers=headers).json()
            problems.append("  " + ", ".join(f"{name}={record.get(name)}" for name in (
                "call_id", "status", "created_at", "started_at", "ended_at", "error_code")))
    if undelivered:
        problems.append(f"{len(undelivered)} terminal calls without any webhook delivery: {sorted(undelivered)[:30]}")
    assert not problems, "\n".join(problems + notes)


def test_sigkill_during_keyed_creates(service: Crashable, hook: Receiver) -> None:
    headers, endpoint_id = tenant_with_endpoint(service, hook, "keyed-crash@example.com")
    body = first_call_body()
    notes: list[str] = []
    load = Load(service.current.base_url, headers, body, clients=4).start()
    try:
        time.sleep(3.0)
        notes.append(f"just before the kill the list held {counts(service.current, headers)}")
        crashed_at = datetime.now(timezone.utc)
        killed = time.monotonic()
        restarted = service.crash_and_restart()
        notes.append(f"killed at {crashed_at.isoformat()}; ready again {restarted - killed:.1f} s later")
        time.sleep(4.0)
    finally:
        load.stop()

    statuses = Counter((a.status, a.code) for a in load.answers)
    in_flight = [a for a in load.answers if a.status == 0 and a.at <= killed <= a.at + a.seconds]
    notes.append(f"load answers: {dict(statuses)}; {len(in_flight)} creates were in flight at the kill")
    assert {status for status, _ in statuses} <= {0, 201, 503}, notes
    assert any(a.status == 201 and a.at < killed for a in load.answers), "nothing was created before the kill"
    assert any(a.status == 201 and a.at > restarted for a in load.answers), "nothing was created after the restart"

    by_key: dict[str, set[str]] = {}
    for answer in load.answers:
        if answer.status == 201:
            by_key.setdefault(answer.key, set()).add(answer.call_id)
    # A client's last key may have had no answer yet when the load stopped (or its answer was lost
    # in the kill): send it again, as the client would, until it is answered.
    unsettled = {a.key for a in load.answers} - set(by_key)
    replayed = 0
    with service.current.client() as http:
        for key in sorted(unsettled):
            for _ in range(20):
                answer = http.post("/v1/calls", json=body, headers={**headers, "Idempotency-Key": key})
                if answer.status_code != 503:
                    break
                time.sleep(0.5)
            assert answer.status_code == 201, (key, answer.status_code, answer.text)
            replayed += answer.headers.get("idempotent-replayed") == "true"
            by_key[key] = {answer.json()["call_id"]}
        notes.append(f"{len(by_key)} keys acknowledged; {len(unsettled)} settled after the load, "
                     f"{replayed} of them replays of a create whose answer was lost")

        assert all(len(ids) == 1 for ids in by_key.values()), {k: v for k, v in by_key.items() if len(v) > 1}
        acknowledged = {call_id for ids in by_key.values() for call_id in ids}
        assert len(acknowledged) == len(by_key), "two keys were answered with the same call"
        check_nothing_lost_or_twice(http, headers, acknowledged)
        check_all_settle(http, headers, hook, endpoint_id, restarted, crashed_at, notes)
    print("\n".join(notes))


def destinations(at: datetime, count: int) -> list[str]:
    """``count`` distinct valid London numbers, inside call hours at ``at``."""
    numbers = []
    for n in range(10_000):
        number = f"+4420718{n:05d}"
        try:
            dialing_rules.check_call_hours(dialing_rules.parse_destination(number), "prior_express", at)
        except DialingRuleError:
            continue
        numbers.append(number)
        if len(numbers) == count:
            return numbers
    raise AssertionError(f"fewer than {count} valid London numbers")


def batch_body(n: int) -> dict[str, Any]:
    call = first_call_body()
    at = datetime.fromisoformat(call["simulation"]["at"].replace("Z", "+00:00"))
    return {"objective": f"{call['objective']} (batch {n})", "consent_type": call["consent_type"],
            "mode": "simulated", "outcome_schema": call["outcome_schema"], "simulation": call["simulation"],
            "items": [{"to": number} for number in destinations(at, BATCH_SIZE)]}


def test_sigkill_during_batches(service: Crashable, hook: Receiver) -> None:
    headers, endpoint_id = tenant_with_endpoint(service, hook, "batch-crash@example.com")
    rng = random.Random(20261125)
    bodies = [batch_body(n) for n in range(BATCHES)]
    keys = [f"faults-batch-{n}" for n in range(BATCHES)]
    first: dict[int, httpx.Response | Exception] = {}
    notes: list[str] = []

    def send(n: int) -> None:
        try:
            with httpx.Client(base_url=service.current.base_url, timeout=30, trust_env=False) as client:
                first[n] = client.post("/v1/calls/batch", json=bodies[n], headers={**headers, "Idempotency-Key": keys[n]})
        except httpx.TransportError as exc:
            first[n] = exc

    for n in range(BATCHES - 1):  # answered: their calls run while the last batch is sent
        send(n)
        assert isinstance(first[n], httpx.Response) and first[n].status_code == 207, first[n]
        notes.append(f"batch {n} answered in {first[n].elapsed.total_seconds():.2f} s")
    notes.append(f"as the last batch was sent the list held {counts(service.current, headers)}")
    last = threading.Thread(target=send, args=(BATCHES - 1,))
    last.start()
    time.sleep(rng.uniform(0.0, 0.06))  # a batch is answered in about 0.1 s: its answer is often lost
    crashed_at = datetime.now(timezone.utc)
    killed = time.monotonic()
    restarted = service.crash_and_restart()
    last.join(timeout=30)
    notes.append(f"killed at {crashed_at.isoformat()}; ready again {restarted - killed:.1f} s later; last batch's "
                 f"first answer: {getattr(first.get(BATCHES - 1), 'status_code', first.get(BATCHES - 1))!r}")

    acknowledged: set[str] = set()
    with service.current.client() as http:
        for n in range(BATCHES):
            original = first.get(n)
            answered = isinstance(original, httpx.Response) and original.status_code == 207
            if answered:
                result = original.json()  # type: ignore[union-attr]
            else:  # its answer was lost: send it again with its key
                retry = http.post("/v1/calls/batch", json=bodies[n], headers={**headers, "Idempotency-Key": keys[n]})
                assert retry.status_code == 207, retry.text
                notes.append(f"batch {n} sent again: replayed={retry.headers.get('idempotent-replayed') == 'true'}")
                result = retry.json()
            assert result["accepted"] == BATCH_SIZE and result["rejected"] == 0, result
            ids = [item["call_id"] for item in result["items"]]
            assert len(set(ids)) == BATCH_SIZE and all(ids)
            if answered:  # the same key answers the same calls after the restart
                again = http.post("/v1/calls/batch", json=bodies[n], headers={**headers, "Idempotency-Key": keys[n]})
                assert again.status_code == 207 and again.headers.get("idempotent-replayed") == "true", again.text
                assert [item["call_id"] for item in again.json()["items"]] == ids
            acknowledged |= set(ids)

        assert len(acknowledged) == BATCHES * BATCH_SIZE
        check_nothing_lost_or_twice(http, headers, acknowledged)
        check_all_settle(http, headers, hook, endpoint_id, restarted, crashed_at, notes)
    print("\n".join(notes))
