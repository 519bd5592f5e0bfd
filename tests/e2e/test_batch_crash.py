"""A server killed in the middle of a 200-item batch (ARCHITECTURE.md §9, issue acceptance): after
a restart, a retry with the same ``Idempotency-Key`` leaves every item accepted exactly once or
rejected with a reason; no call is lost or duplicated. The batch is one atomic save, so the crash
leaves either all of it or none of it."""

from __future__ import annotations

import random
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest

from domain.calls import dialing_rules
from domain.errors import DialingRuleError
from entrypoints.cli.demo import CANDIDATES
from tests.e2e.service import approved_key, base_env, bearer, free_port, start

pytestmark = pytest.mark.e2e
TRIALS = 10


def destinations(now: datetime, count: int = 200) -> list[str]:
    """``count`` distinct valid numbers of one region that is inside call hours now."""
    for candidate in CANDIDATES:
        numbers = []
        for i in range(10_000):
            number = candidate[:-4] + f"{i:04d}"
            try:
                dialing_rules.check_call_hours(dialing_rules.parse_destination(number), "prior_express", now)
            except DialingRuleError:
                if not numbers and i > 50:
                    break
                continue
            numbers.append(number)
            if len(numbers) == count:
                return numbers
    raise AssertionError("no region is inside call hours with enough valid numbers")


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="callwright-e2e-crash-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def total_calls(http: httpx.Client, headers: dict[str, str]) -> int:
    return http.get("/v1/calls", headers=headers, params={"limit": 1}).json()["total"]


def test_a_batch_interrupted_by_a_crash_is_applied_exactly_once_after_a_retry(workdir: Path) -> None:
    port = free_port()
    env = base_env(host="127.0.0.1", port=str(port), data_dir=str(workdir / "var"),
                   rate_limit_tiers='{"standard": 1000000}')
    env.pop("ANTHROPIC_API_KEY", None)
    server = start(env, port, workdir, 0)
    servers = [server]
    rng = random.Random(20261122)
    try:
        headers = bearer(approved_key(server, "crash@example.com"))
        numbers = destinations(datetime.now(timezone.utc))
        expected_total = 0
        outcomes = {"before_commit": 0, "after_commit": 0}
        for trial in range(TRIALS):
            body = {
                "objective": f"Crash trial {trial}", "consent_type": "prior_express", "mode": "simulated",
                "outcome_schema": {"ok": {"type": "boolean"}}, "simulation": {"answered_by": "fax"},  # each call ends at once: this is about creation
                "items": [{"to": number} for number in numbers],
            }
            key = {"Idempotency-Key": f"crash-trial-{trial}"}
            first: dict[str, object] = {}

            def send() -> None:
                try:
                    with httpx.Client(base_url=server.base_url, timeout=30, trust_env=False) as client:
                        first["answer"] = client.post("/v1/calls/batch", headers={**headers, **key}, json=body)
                except httpx.TransportError as exc:
                    first["error"] = exc

            sender = threading.Thread(target=send)
            sender.start()
            time.sleep(rng.uniform(0.0, 0.4))
            server.crash()
            sender.join(timeout=30)
            server = start(env, port, workdir, trial + 1)
            servers.append(server)
            with server.client() as http:
                retry = http.post("/v1/calls/batch", headers={**headers, **key}, json=body)
                assert retry.status_code == 207, retry.text
                result = retry.json()
                assert result["accepted"] == 200 and result["rejected"] == 0
                ids = [item["call_id"] for item in result["items"]]
                assert len(set(ids)) == 200 and all(ids)
                answer = first.get("answer")
                if isinstance(answer, httpx.Response) and answer.status_code == 207:
                    assert [i["call_id"] for i in answer.json()["items"]] == ids  # the retry replayed it
                    outcomes["after_commit"] += 1
                elif retry.headers.get("idempotent-replayed") == "true":
                    outcomes["after_commit"] += 1
                else:
                    outcomes["before_commit"] += 1
                expected_total += 200
                deadline = time.monotonic() + 10
                while total_calls(http, headers) != expected_total and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert total_calls(http, headers) == expected_total  # nothing lost, nothing twice
                for call_id in rng.sample(ids, 3):
                    assert http.get(f"/v1/calls/{call_id}", headers=headers).status_code == 200
        assert sum(outcomes.values()) == TRIALS
    finally:
        for each in servers:
            each.cleanup()
        servers[-1].stop_postgres()
