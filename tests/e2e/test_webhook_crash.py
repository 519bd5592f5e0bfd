"""The server killed (SIGKILL) while a delivery is under way, 10 times: after each restart the
schedule resumes, and no delivery ever gets more than 4 automatic attempts (issue acceptance).
The retry delays are shortened through settings so that a schedule fits in a few seconds."""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.service import ServeProcess, approved_key, base_env, bearer, free_port, start
from tests.fakes.receiver import Answer, Receiver

pytestmark = pytest.mark.e2e
TRIALS = 10
DELAYS = "0.5,0.5,0.5"


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="callwright-e2e-webhooks-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_killing_the_dispatcher_between_attempts_never_exceeds_four_attempts(workdir: Path) -> None:
    port = free_port()
    env = base_env(host="127.0.0.1", port=str(port), data_dir=str(workdir / "var"),
                   rate_limit_tiers='{"standard": 1000000}', webhook_allow_private="1", webhook_allow_http="1",
                   webhook_timeout_seconds="0.5", webhook_retry_delays=DELAYS)
    env.pop("ANTHROPIC_API_KEY", None)
    hook = Receiver(default=Answer(status=500))
    server = start(env, port, workdir, 0)
    servers: list[ServeProcess] = [server]
    rng = random.Random(20261122)
    try:
        headers = bearer(approved_key(server, "hooks@example.com"))
        with server.client() as http:
            endpoint = http.post("/v1/webhooks", json={"url": hook.url}, headers=headers).json()
        call = {"objective": "Webhook crash trial", "consent_type": "emergency", "mode": "simulated",
                "to": "+442071838750", "outcome_schema": {"ok": {"type": "boolean"}},
                "simulation": {"answered_by": "fax"}}  # ends at once: this is about the deliveries

        for trial in range(TRIALS):
            with server.client() as http:
                assert http.post("/v1/calls", json=call, headers=headers).status_code == 201
            time.sleep(rng.uniform(0.05, 1.6))  # somewhere in the schedule: before, during or between attempts
            server.crash()
            server = start(env, port, workdir, trial + 1)
            servers.append(server)

        with server.client() as http:
            deadline = time.monotonic() + 60
            while True:
                page = http.get(f"/v1/webhooks/{endpoint['id']}/deliveries", params={"limit": 100},
                                headers=headers).json()
                finished = [d for d in page["data"] if d["status"] == "permanently_failed"]
                if len(finished) == TRIALS or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        assert page["total"] == TRIALS and len(finished) == TRIALS, page
        for delivery in page["data"]:
            assert len(delivery["attempts"]) == 4, delivery  # lost attempts (killed mid-send) count too
            sent = [r for r in hook.received if r.headers["X-Service-Delivery-Id"] == delivery["delivery_uuid"]]
            assert len(sent) <= 4, (delivery, len(sent))
    finally:
        hook.close()
        for each in servers:
            each.cleanup()
        servers[-1].stop_postgres()
