"""The server killed (SIGKILL) right after it saved ``DialRequested``, while the carrier's answer to
the dial is still on its way, 10 times (issue 5 acceptance): after each restart the call is never
dialled a second time, and every call settles — from the carrier's record of it when the carrier
created it, else as ``dispatch_unknown``. The reconciler's wait is shortened through settings."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.service import ServeProcess, approved_key, base_env, bearer, free_port, start, use_carrier
from tests.fakes.twilio import FakeTwilio, Scenario

pytestmark = pytest.mark.e2e
TRIALS = 10
CALLER = "+14155550100"


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="callwright-e2e-dial-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_killing_the_dialer_after_dial_requested_never_dials_twice(workdir: Path) -> None:
    fake = FakeTwilio().start()
    fake.create_delay = 1.0
    port = free_port()
    env = base_env(host="127.0.0.1", port=str(port), data_dir=str(workdir / "var"),
                   public_base_url=f"http://127.0.0.1:{port}", twilio_api_base_url=fake.base_url,
                   rate_limit_tiers='{"standard": 1000000}', reconcile_after_seconds="1")
    env.pop("ANTHROPIC_API_KEY", None)
    server = start(env, port, workdir, 0)
    servers: list[ServeProcess] = [server]
    calls: dict[str, tuple[str, bool]] = {}  # call id -> (destination, did the carrier create it)
    try:
        account = fake.add_account(numbers=[(CALLER, "Front desk")])
        headers = bearer(approved_key(server, "dial@example.com"))
        use_carrier(server, headers, account, CALLER)

        for trial in range(TRIALS):
            to = f"+4420718387{20 + trial}"
            fake.lose_creates = trial % 3 == 2  # some dials never reach the carrier's books
            fake.script(to, Scenario(result="no-answer"))
            with server.client() as http:
                created = http.post("/v1/calls", headers=headers, json={
                    "to": to, "objective": "Crash trial", "outcome_schema": {"ok": {"type": "boolean"}},
                    "consent_type": "emergency", "mode": "live", "voice_engine": "alpha_25"})
                assert created.status_code == 201, created.text
            calls[created.json()["call_id"]] = (to, not fake.lose_creates)
            deadline = time.monotonic() + 10
            while fake.dials_to(to) == 0:  # DialRequested is saved before the request is sent
                assert time.monotonic() < deadline, server.output()[-2000:]
                time.sleep(0.005)
            server.crash()
            server = start(env, port, workdir, trial + 1)
            servers.append(server)

        with server.client() as http:
            deadline = time.monotonic() + 60
            while True:
                records = {call_id: http.get(f"/v1/calls/{call_id}", headers=headers).json() for call_id in calls}
                if all(r["status"] in ("completed", "failed") for r in records.values()) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        for call_id, (to, created_by_carrier) in calls.items():
            record = records[call_id]
            assert fake.dials_to(to) == 1, (to, fake.dials_to(to))
            assert record["status"] == "failed", record
            assert record["error_code"] == ("no_answer" if created_by_carrier else "dispatch_unknown"), record
    finally:
        fake.close()
        for each in servers:
            each.cleanup()
        servers[-1].stop_postgres()
