"""The ``callwright`` client commands against one real ``callwright serve``: ``numbers``,
``webhooks``, ``keys`` and ``calls batch`` (plus create, watch, get, list, cancel and export), each
as a table by default and as the API's JSON alone with ``--json``; a missing key is exit 2, a
server that is down one line and exit 1, an API refusal ``error <status> <code>: <message>``."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.service import ServeProcess, approved_key, bearer, free_port, offline_server, run_cli, use_carrier
from tests.fakes.receiver import Receiver
from tests.fakes.twilio import FakeTwilio
from tests.support.call_requests import LONDON, LONDON_2, LONDON_3, call_body

pytestmark = pytest.mark.e2e

LINE = "+14155550170"
AT = "2026-12-01T10:00:00Z"  # inside London's call hours, whatever the hour the test runs
KEY_VARIABLES = ("CALLWRIGHT_API_KEY", "OPENPHN_API_KEY")


@dataclass
class World:
    server: ServeProcess
    env: dict[str, str]
    hook: Receiver
    number_id: str

    def cli(self, *args: str, key: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = self.env if key is None else {**self.env, "CALLWRIGHT_API_KEY": key}
        return run_cli(env, *args, cwd=cwd)

    def json(self, *args: str, key: str | None = None, cwd: Path | None = None) -> Any:
        """The command's ``--json`` answer: exit 0, stdout one JSON document and nothing else."""
        done = self.cli(*args, "--json", key=key, cwd=cwd)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return json.loads(done.stdout)


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    fake = FakeTwilio().start()
    hook = Receiver()
    try:
        with offline_server("callwright-cli-", rate_limit_tiers='{"standard": 1000000}',
                            twilio_api_base_url=fake.base_url, webhook_allow_private="1",
                            webhook_allow_http="1") as server:
            key = approved_key(server, "cli@example.com")
            use_carrier(server, bearer(key), fake.add_account(numbers=[(LINE, "Acme line")]), LINE)
            with server.client() as http:
                registered = http.post("/v1/numbers/byo", headers=bearer(key), json={"e164": LINE})
                assert registered.status_code == 201, registered.text
            env = {name: value for name, value in server.env.items() if name not in KEY_VARIABLES}
            env.update(CALLWRIGHT_API_KEY=key, CALLWRIGHT_BASE_URL=server.base_url)
            yield World(server, env, hook, registered.json()["id"])
    finally:
        hook.close()
        fake.close()


def shared_fields() -> dict[str, Any]:
    body = call_body()
    return {name: body[name] for name in ("objective", "outcome_schema", "consent_type", "mode")} | {
        "simulation": {**body["simulation"], "at": AT}}


def test_numbers_list_show_and_set(world: World) -> None:
    listed = world.json("numbers", "list")
    assert [(n["id"], n["e164"]) for n in listed] == [(world.number_id, LINE)]
    table = world.cli("numbers", "list")
    assert table.returncode == 0 and world.number_id in table.stdout and LINE in table.stdout

    changed = world.json("numbers", "set", world.number_id, "--greeting", "Hello from the command line",
                         "--recording", "--set", "transfer_max_attempts=2", "--set", 'persona="Brisk"')
    assert (changed["greeting"], changed["recording_enabled"], changed["transfer_max_attempts"],
            changed["persona"]) == ("Hello from the command line", True, 2, "Brisk")
    shown = world.json("numbers", "show", LINE)  # by E.164 as well as by id
    assert shown == world.json("numbers", "show", world.number_id)
    assert shown["greeting"] == "Hello from the command line" and shown["recording_enabled"] is True
    assert "Hello from the command line" in world.cli("numbers", "show", world.number_id).stdout

    refused = world.cli("numbers", "set", world.number_id, "--set", "transfer_max_attempts=0", "--no-recording")
    assert refused.returncode == 1 and refused.stdout == ""
    first, *problems = refused.stderr.splitlines()
    assert first.startswith("error 422 validation_error: ") and any("transfer_max_attempts" in p for p in problems)
    assert world.json("numbers", "show", world.number_id)["recording_enabled"] is True  # nothing was changed
    nothing = world.cli("numbers", "set", world.number_id)
    assert nothing.returncode == 2 and "nothing to change" in nothing.stderr


def test_keys_are_created_rotated_and_revoked(world: World) -> None:
    created = world.json("keys", "create", "--name", "reporting", "--scope", "calls:read")
    assert created["secret"].startswith("sk_") and created["scopes"] == ["calls:read"]
    assert world.cli("calls", "list", key=created["secret"]).returncode == 0

    listed = world.json("keys", "list")
    assert created["key_id"] in [k["key_id"] for k in listed] and all("secret" not in k for k in listed)
    table = world.cli("keys", "list")
    assert table.returncode == 0 and created["key_id"] in table.stdout and created["secret"] not in table.stdout

    rotated = world.json("keys", "rotate", created["key_id"])
    assert rotated["old_key_id"] == created["key_id"] and rotated["secret"] not in (created["secret"], None)
    revoked = world.json("keys", "revoke", rotated["key_id"])
    assert revoked["status"] == "revoked" and revoked["key_id"] == rotated["key_id"]

    refused = world.cli("calls", "list", key=rotated["secret"])
    assert refused.returncode == 1 and refused.stderr.startswith("error 401 ") and refused.stdout == ""
    shown_once = world.cli("keys", "create", "--name", "table")
    assert shown_once.returncode == 0 and shown_once.stdout.count("secret: sk_") == 1


def wait_for_delivery(world: World, endpoint_id: str, call_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        found = [d for d in world.json("webhooks", "deliveries", endpoint_id)
                 if d["call_id"] == call_id and d["status"] == "delivered"]
        if found or time.monotonic() > deadline:
            assert found, world.server.output()[-2000:]
            return found[0]
        time.sleep(0.2)


def test_a_batch_from_a_file_and_flags_and_its_webhook_deliveries(world: World, tmp_path: Path) -> None:
    endpoint = world.json("webhooks", "create", world.hook.url, "--event", "call.completed")
    assert endpoint["secret"].startswith("whsec_") and endpoint["events"] == ["call.completed"]
    assert endpoint["id"] in [e["id"] for e in world.json("webhooks", "list")]
    assert endpoint["id"] in world.cli("webhooks", "list").stdout

    (tmp_path / "shared.json").write_text(json.dumps(shared_fields()))
    (tmp_path / "rows.csv").write_text(f"to,metadata.crm_id\n{LONDON},A-1\n")
    done = world.json("calls", "batch", "shared.json", "--items", "rows.csv", "--to", LONDON_2, "--to", "+1",
                      cwd=tmp_path)
    assert (done["accepted"], done["rejected"]) == (2, 1)
    assert [item["to"] for item in done["items"]] == [LONDON, LONDON_2, "+1"]
    assert done["items"][2]["error"] and not done["items"][2].get("call_id")
    call_id = done["items"][0]["call_id"]

    ended = world.json("calls", "watch", call_id, "--interval", "0.1")
    assert ended["status"] == "completed" and ended["outcome"] == {"confirmed": True}
    assert world.json("calls", "get", call_id)["metadata"] == {"crm_id": "A-1"}

    delivery = wait_for_delivery(world, endpoint["id"], call_id)
    retried = world.json("webhooks", "retry", endpoint["id"], delivery["delivery_id"])
    assert retried["delivery_id"] == delivery["delivery_id"] and retried["retry_requested_at"]
    table = world.cli("webhooks", "deliveries", endpoint["id"])
    assert table.returncode == 0 and delivery["delivery_id"] in table.stdout

    by_table = world.cli("calls", "batch", "shared.json", "--to", LONDON_3, cwd=tmp_path)
    assert by_table.returncode == 0 and "1 accepted, 0 rejected" in by_table.stdout and LONDON_3 in by_table.stdout
    secret_once = world.cli("webhooks", "create", world.hook.url)
    assert secret_once.returncode == 0 and secret_once.stdout.count("secret: whsec_") == 1


def test_a_call_is_created_watched_listed_exported_and_refused_a_cancel(world: World, tmp_path: Path) -> None:
    (tmp_path / "call.json").write_text(json.dumps({**shared_fields(), "to": LONDON}))
    created = world.json("calls", "create", "call.json", "--idempotency-key", "cli-create-1", cwd=tmp_path)
    call_id = created["call_id"]
    assert created["status"] == "queued"
    again = world.json("calls", "create", "call.json", "--idempotency-key", "cli-create-1", cwd=tmp_path)
    assert again["call_id"] == call_id  # the same key: the first answer, no second call

    watched = world.cli("calls", "watch", call_id, "--interval", "0.1")
    assert watched.returncode == 0 and "[completed]" in watched.stdout and '"confirmed": true' in watched.stdout
    page = world.json("calls", "list", "--status", "completed", "--limit", "50")
    assert call_id in [row["call_id"] for row in page["data"]] and page["total"] >= 1
    assert call_id in world.cli("calls", "list", "--limit", "50").stdout
    assert world.json("calls", "get", call_id)["status"] == "completed"

    summary = world.json("calls", "export", "--status", "completed", "-o", "calls.csv", cwd=tmp_path)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "calls.csv").read_text(encoding="utf-8"))))
    assert summary["rows"] == len(rows) >= 1 and call_id in [row["call_id"] for row in rows]
    assert summary["path"] == str(tmp_path / "calls.csv")

    refused = world.cli("calls", "cancel", call_id)
    assert refused.returncode == 1 and refused.stderr.startswith("error 409 ") and len(refused.stderr.splitlines()) == 1


@pytest.mark.parametrize("command", [("numbers", "list"), ("webhooks", "list"), ("keys", "list"),
                                     ("calls", "batch", "--to", LONDON)])
def test_without_a_key_each_command_names_both_variables(world: World, command: tuple[str, ...]) -> None:
    env = {name: value for name, value in world.env.items() if name not in KEY_VARIABLES}
    done = run_cli(env, *command, "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert all(name in done.stderr for name in KEY_VARIABLES) and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", [("numbers", "show", "n1"), ("webhooks", "deliveries", "whe_1"),
                                     ("keys", "revoke", "key_1")])
def test_a_server_that_is_not_running_is_one_line(world: World, command: tuple[str, ...]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    done = run_cli({**world.env, "CALLWRIGHT_BASE_URL": url}, *command, "--json")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"cannot reach {url}: is callwright serve running?\n"
