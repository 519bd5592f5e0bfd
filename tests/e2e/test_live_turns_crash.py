"""The server killed (SIGKILL) while live calls are mid-conversation over the media stream (issue 20
item 1 acceptance). A turn is spoken before its event is saved (decision 43), so a crash may lose
the unsaved tail of a conversation that is still live, and nothing else: after each restart every
call settled before the crash is as it was (status, outcome, transcript), every interrupted call
settles (the reconciler asks the carrier), and the turns it kept are a prefix of the conversation
as it was spoken, in order."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.service import ServeProcess, approved_key, base_env, bearer, free_port, start, use_carrier
from tests.fakes.twilio import FakeTwilio, Say, Scenario

pytestmark = pytest.mark.e2e
CALLER = "+14155550100"
TRIALS = 3
LIVE_PER_TRIAL = 3
FIELDS = [f"item_{i}" for i in range(8)]
SCHEMA = {name: {"type": "string"} for name in FIELDS}
ANSWERS = [Say(f"Answer number {i}") for i in range(len(FIELDS))]


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="callwright-e2e-turns-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def create(server: ServeProcess, headers: dict[str, str], to: str) -> str:
    with server.client() as http:
        created = http.post("/v1/calls", headers=headers, json={
            "to": to, "objective": "Collect eight answers", "outcome_schema": SCHEMA, "consent_type": "emergency",
            "mode": "live", "voice_engine": "alpha_31"})
    assert created.status_code == 201, created.text
    return str(created.json()["call_id"])


def records(server: ServeProcess, headers: dict[str, str], call_ids: list[str],
            timeout: float = 60) -> dict[str, dict[str, Any]]:
    """The calls once every one is terminal."""
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=server.base_url, timeout=15, trust_env=False) as http:
        while True:
            found = {c: http.get(f"/v1/calls/{c}", headers=headers).json() for c in call_ids}
            if all(r.get("status") in ("completed", "failed") for r in found.values()):
                return found
            assert time.monotonic() < deadline, ({c: r.get("status") for c, r in found.items()},
                                                 server.output()[-3000:])
            time.sleep(0.2)


def lines(record: dict[str, Any]) -> list[str]:
    return [line for line in (record.get("transcript") or "").splitlines() if line]


def test_killing_the_server_during_live_turns_loses_no_settled_call_and_keeps_turns_in_order(workdir: Path) -> None:
    fake = FakeTwilio().start()
    port = free_port()
    env = base_env(host="127.0.0.1", port=str(port), data_dir=str(workdir / "var"),
                   public_base_url=f"http://127.0.0.1:{port}", twilio_api_base_url=fake.base_url,
                   rate_limit_tiers='{"standard": 1000000}', voice_profiles='{"alpha_31": {"transport": "stream"}}',
                   reconcile_after_seconds="1", record_calls="0")
    env.pop("ANTHROPIC_API_KEY", None)
    server = start(env, port, workdir, 0)
    servers: list[ServeProcess] = [server]
    try:
        account = fake.add_account(numbers=[(CALLER, "Front desk")])
        headers = bearer(approved_key(server, "turns@example.com"))
        use_carrier(server, headers, account, CALLER)

        # The conversation as spoken when nothing goes wrong: every interrupted one must be a prefix of it.
        fake.script("+442071838600", Scenario(turns=list(ANSWERS)))
        control = create(server, headers, "+442071838600")
        settled = records(server, headers, [control])
        spoken = lines(settled[control])
        assert settled[control]["status"] == "completed", settled
        assert settled[control]["outcome"] == {name: f"Answer number {i}" for i, name in enumerate(FIELDS)}
        assert len(spoken) == 2 * len(FIELDS) + 1  # the greeting with the first question, then an answer and a reply each

        interrupted: list[str] = []
        for trial in range(TRIALS):
            live = []
            for index in range(LIVE_PER_TRIAL):
                to = f"+4420718386{trial}{index}"
                fake.script(to, Scenario(turns=list(ANSWERS), realtime=True))  # 20 ms a frame: seconds per call
                live.append((to, create(server, headers, to)))
            deadline = time.monotonic() + 30
            for to, _ in live:  # every call is mid-conversation: a few turns said, more to come
                record = fake.wait_for_call(to, timeout=30)
                while len(record.agent_said) < 3 + trial:
                    assert time.monotonic() < deadline and not record.finished.is_set(), (record.notes, server.output()[-3000:])
                    time.sleep(0.01)
            server.crash()
            server = start(env, port, workdir, trial + 1)
            servers.append(server)
            interrupted += [call_id for _, call_id in live]

        after = records(server, headers, [control, *interrupted], timeout=90)
        assert {k: after[control][k] for k in ("status", "outcome", "transcript")} == \
            {k: settled[control][k] for k in ("status", "outcome", "transcript")}
        for call_id in interrupted:
            kept = lines(after[call_id])
            assert kept == spoken[:len(kept)], (call_id, kept)  # in order, nothing out of place
            assert 1 <= len(kept) < len(spoken), after[call_id]  # the greeting was saved; the crash cut the rest
    finally:
        fake.close()
        for each in servers:
            each.cleanup()
        servers[-1].stop_postgres()
