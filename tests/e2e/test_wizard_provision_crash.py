"""The server killed (SIGKILL) while a wizard provision's purchase is on its way to the carrier
(issue 19 item 2): the provision and its purchase claim were saved before the request, so the
retry with the same Idempotency-Key after a restart never buys a second number. Twice: once the
carrier bought the number (its answer held back, then lost with the process), once the carrier
never got the request. The claim's lease is shortened through settings."""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from domain.wizard.configs import config_for
from tests.e2e.service import ServeProcess, approved_key, base_env, bearer, free_port, start
from tests.fakes.twilio import FakeTwilio

pytestmark = pytest.mark.e2e
MANAGED_SID, MANAGED_TOKEN = "AC" + "8d" * 16, "managed-token-" + "5" * 18
DESCRIPTION = "A family dental practice in Austin; patients call to book checkups and cleanings."
LEASE_SECONDS = 2


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="callwright-e2e-wizard-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def provision_body(area_code: str) -> dict[str, Any]:
    return {"business_name": "Acme Dental", "business_description": DESCRIPTION, "area_code": area_code,
            "config": config_for("dental", DESCRIPTION)}


def purchase_requests(fake: FakeTwilio) -> int:
    return len(fake.requests_to("/IncomingPhoneNumbers.json", "POST"))


def post_and_lose(server: ServeProcess, headers: dict[str, str], body: dict[str, Any]) -> threading.Thread:
    """Send the provision from a thread whose answer never comes: the server dies first."""
    def send() -> None:
        try:
            with server.client() as http:
                http.post("/v1/wizard/provision", json=body, headers=headers)
        except httpx.HTTPError:
            pass

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def retry_until_done(server: ServeProcess, headers: dict[str, str], body: dict[str, Any]) -> httpx.Response:
    """The client's retry: the same request and key, again after Retry-After while in progress."""
    deadline = time.monotonic() + 60
    with server.client() as http:
        while True:
            answer = http.post("/v1/wizard/provision", json=body, headers=headers)
            if answer.status_code != 409 or time.monotonic() > deadline:
                return answer
            assert answer.json()["error"]["code"] == "provision_in_progress", answer.text
            time.sleep(min(float(answer.headers["Retry-After"]), LEASE_SECONDS))


def test_killing_the_server_mid_purchase_never_buys_a_second_number(workdir: Path) -> None:
    fake = FakeTwilio().start()
    managed = fake.add_account(sid=MANAGED_SID, auth_token=MANAGED_TOKEN, friendly_name="callwright managed")
    fake.purchase_delay = 1.5  # the answer is late: the server is killed meanwhile
    port = free_port()
    env = base_env(host="127.0.0.1", port=str(port), data_dir=str(workdir / "var"),
                   public_base_url=f"http://127.0.0.1:{port}", twilio_api_base_url=fake.base_url,
                   managed_account_sid=MANAGED_SID, managed_auth_token=MANAGED_TOKEN,
                   wizard_purchase_lease_seconds=str(LEASE_SECONDS), rate_limit_tiers='{"standard": 1000000}')
    env.pop("ANTHROPIC_API_KEY", None)
    server = start(env, port, workdir, 0)
    servers: list[ServeProcess] = [server]
    try:
        owner = bearer(approved_key(server, "wizard@example.com"))
        for trial, carrier_buys in enumerate((True, False)):
            area_code = f"51{trial + 2}"
            body = provision_body(area_code)
            headers = {**owner, "Idempotency-Key": f"wizard-crash-{trial}"}
            fake.lose_purchases = not carrier_buys
            before = purchase_requests(fake)
            sender = post_and_lose(server, headers, body)
            deadline = time.monotonic() + 20
            while purchase_requests(fake) == before:  # the claim is saved before the request is sent
                assert time.monotonic() < deadline, server.output()[-3000:]
                time.sleep(0.005)
            server.crash()
            sender.join(timeout=10)
            fake.lose_purchases = False
            tagged_then = [n for n in managed.numbers if n[1].startswith("wzp_")]
            server = start(env, port, workdir, trial + 1)
            servers.append(server)

            done = retry_until_done(server, headers, body)

            assert done.status_code == 200, (done.text, server.output()[-3000:])
            number = done.json()["number"]
            mine = [n for n in managed.numbers if n[0] == number["e164"]]
            assert len(mine) == 1 and mine[0][1].startswith("wzp_")  # bought once, tagged with the provision
            assert len([n for n in managed.numbers if n[1] == mine[0][1]]) == 1
            assert len([n for n in managed.numbers if n[1].startswith("wzp_")]) == len(tagged_then) + (
                0 if carrier_buys else 1)
            assert purchase_requests(fake) == before + (1 if carrier_buys else 2)
            with server.client() as http:
                shown = http.get(f"/v1/numbers/{number['id']}", headers=owner).json()
                replay = http.post("/v1/wizard/provision", json=body, headers=headers)
            assert shown["greeting"] == body["config"]["greeting"] and shown["source"] == "managed"
            assert replay.json() == done.json() and replay.headers.get("Idempotent-Replayed") == "true"
            assert purchase_requests(fake) == before + (1 if carrier_buys else 2)
    finally:
        fake.close()
        for each in servers:
            each.cleanup()
        servers[-1].stop_postgres()
