"""The OpenAPI document against the service itself: a schemathesis run (``st run``, bounded
examples per operation, a fixed seed) on one real ``callwright serve`` with its embedded
PostgreSQL finds no 5xx and no answer the document contradicts (status code, content type,
headers, body schema).

Everything the server reaches stays on loopback: the carrier is the fake one (numbers bought on
its managed account too), webhook URLs and push endpoints in generated bodies become a loopback
receiver (``openapi_fuzz_hooks.py``), e-mail goes to the file outbox and the agent is the scripted
one. The key is an operator's (``callwright admin create-admin``: every scope, and the admin
routes), never revoked or rotated by the run. A little data is seeded first (a completed simulated
call with its webhook delivery, two numbers, a template, a flow, a suppression, a spare key) and
the hooks offer those records' ids as path parameters beside generated ones.

The figures (operations, test cases, answers, failures, time) are printed and written to
``build/schemathesis-summary.txt``, st's own output to ``build/schemathesis-output.txt``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.service import PASSWORD, ServeProcess, bearer, offline_server, run_cli, use_carrier
from tests.fakes.receiver import Receiver
from tests.fakes.twilio import FakeTwilio
from tests.support.call_requests import call_body

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "build" / "schemathesis-summary.txt"
MAX_EXAMPLES = 15
SEED = 20260501
RUN_TIMEOUT = 240  # below pytest-timeout's 300 s, so a stuck run fails with its own message
CHECKS = ("not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_headers_conformance", "response_schema_conformance")
# Left out of the run, each for its reason (none: the hooks keep the run's own key from being
# revoked or rotated, and the key is an operator's, so the admin routes are tested too).
EXCLUDED_OPERATIONS: set[str] = set()
AT = "2026-12-01T10:00:00Z"  # inside London's call hours
CALLER = "+14155550100"
MANAGED_SID, MANAGED_TOKEN = "AC" + "f" * 32, "managed-token"


@dataclass
class Target:
    server: ServeProcess
    key: str
    run: dict[str, Any]  # OPENAPI_FUZZ for the hooks


def _admin_key(server: ServeProcess) -> str:
    """An operator's key (all scopes, and the admin routes answer it): ``callwright admin create-admin``."""
    done = run_cli(server.env, "admin", "create-admin", "--email", "fuzz-operator@example.com", "--password", PASSWORD)
    assert done.returncode == 0, done.stderr
    return next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("secret:"))


def _created(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code in (200, 201), response.text
    return response.json()  # type: ignore[no-any-return]


def _seed(http: httpx.Client, receiver: Receiver) -> dict[str, str]:
    """One record of each kind the paths name; their ids by path parameter name."""
    me = _created(http.get("/auth/me"))
    endpoint = _created(http.post("/v1/webhooks", json={"url": receiver.url}))
    number = _created(http.post("/v1/numbers/byo", json={"e164": CALLER}))
    _created(http.post("/v1/numbers", json={"area_code": "415", "use_case": "support"}))
    template = _created(http.post("/v1/templates", json={
        "name": "Confirm", "objective": "Confirm the appointment", "outcome_schema": {"ok": {"type": "boolean"}}}))
    flow = _created(http.post("/v1/flows", json={
        "name": "Bye", "graph_json": {"start": "bye", "nodes": [{"id": "bye", "type": "end"}]}}))
    suppressed = "+442071838751"
    _created(http.post("/v1/suppressions", json={"e164": suppressed}))
    spare = _created(http.post("/auth/api-keys", json={"name": "spare"}))
    call_id = _created(http.post("/v1/calls", json=call_body(simulation={"facts": {"confirmed": True}, "at": AT})))[
        "call_id"]
    deadline = time.monotonic() + 30
    while not (deliveries := http.get(f"/v1/webhooks/{endpoint['id']}/deliveries").json()["data"]):
        assert time.monotonic() < deadline, "the seeded call's webhook was never delivered"
        time.sleep(0.1)
    return {"call_id": call_id, "endpoint_id": endpoint["id"], "delivery_id": deliveries[0]["delivery_id"],
            "number_id": number["id"], "template_id": template["id"], "flow_id": flow["id"], "e164": suppressed,
            "key_id": spare["key_id"], "user_id": me["user_id"], "provider": "carrier", "own_key": me["auth"]["key_id"]}


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    fake = FakeTwilio().start()
    receiver = Receiver()
    try:
        with offline_server("callwright-fuzz-", rate_limit_tiers='{"standard": 1000000}',
                            twilio_api_base_url=fake.base_url, webhook_allow_private="1", webhook_allow_http="1",
                            managed_account_sid=MANAGED_SID, managed_auth_token=MANAGED_TOKEN) as server:
            fake.add_account(sid=MANAGED_SID, auth_token=MANAGED_TOKEN, friendly_name="callwright managed")
            key = _admin_key(server)
            use_carrier(server, bearer(key), fake.add_account(numbers=[(CALLER, "Front desk")]), CALLER)
            with httpx.Client(base_url=server.base_url, headers=bearer(key), timeout=15, trust_env=False) as http:
                seeds = _seed(http, receiver)
            own_key = seeds.pop("own_key")
            yield Target(server, key, {"receiver": receiver.url, "own_key": own_key, "spare_key": seeds["key_id"],
                                       "seeds": seeds})
    finally:
        fake.close()
        receiver.close()


def _run(target: Target, workdir: Path) -> subprocess.CompletedProcess[str]:
    config = workdir / "schemathesis.toml"
    config.write_text("[cache]\nenabled = false\n")  # every run starts from nothing a previous one saw
    args = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run",
            f"{target.server.base_url}/schema/openapi.json",
            "--header", f"Authorization: Bearer {target.key}", "--checks", ",".join(CHECKS),
            "--max-examples", str(MAX_EXAMPLES), "--seed", str(SEED), "--generation-deterministic", "--no-shrink",
            "--continue-on-failure", "--workers", "1", "--request-timeout", "30",
            "--report", "json", "--report-json-path", str(workdir / "report.json"), "--no-color"]
    for operation_id in sorted(EXCLUDED_OPERATIONS):
        args += ["--exclude-operation-id", operation_id]
    run = {**target.run, "tally": str(workdir / "tally.txt")}
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.e2e.openapi_fuzz_hooks", "OPENAPI_FUZZ": json.dumps(run),
           "NO_COLOR": "1"}
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          stdin=subprocess.DEVNULL)


def _answers(tally: Path) -> dict[str, Counter[str]]:
    """Per operation ("METHOD /path"), how many answers of each class (2xx, 4xx, 5xx) to its own
    method; those to the other methods the coverage phase tries count as "other"."""
    found: dict[str, Counter[str]] = defaultdict(Counter)
    for line in tally.read_text().splitlines() if tally.exists() else []:
        method, path, sent, status = line.split(" ")
        found[f"{method} {path}"][f"{status[0]}xx" if sent == method else "other"] += 1
    return found


def _summary(figures: dict[str, Any], answers: dict[str, Counter[str]], seconds: float) -> str:
    operations, cases = figures["operations"], figures["test_cases"]
    total = sum(answers.values(), Counter())
    never_2xx = sorted(name for name, counts in answers.items() if not counts["2xx"])
    lines = [f"schemathesis {figures['schemathesis_version']}, seed {figures['seed']}, max examples {MAX_EXAMPLES} "
             f"per operation (examples and fuzzing phases; coverage and stateful phases add theirs), {seconds:.0f} s",
             f"operations: {operations['tested']} tested of {operations['selected']} selected "
             f"({operations['total']} in the document)",
             f"test cases: {cases['generated']} generated, {cases['with_failures']} with failures",
             f"answers: {', '.join(f'{n} {c}' for c, n in sorted(total.items()))}",
             f"failures: {sum(f['count'] for f in figures['failures'])} unique, errors: {len(figures['errors'])}"]
    lines += [f"  {f['code']} {f['title']}: {', '.join(f['operations'])}" for f in figures["failures"]]
    lines += [f"  error: {error}" for error in figures["errors"]]
    lines += [f"operations that never answered 2xx ({len(never_2xx)}): {', '.join(never_2xx)}"]
    return "\n".join(lines) + "\n"


def _everything(http: httpx.Client, path: str) -> list[dict[str, Any]]:
    found, cursor = [], None
    while True:
        page = http.get(path, params={"limit": 100, **({"cursor": cursor} if cursor else {})}).json()
        found += page["data"]
        if not (cursor := page.get("next_cursor")):
            return found


def test_no_operation_answers_5xx_or_against_the_document(target: Target, tmp_path: Path) -> None:
    started = time.monotonic()
    done = _run(target, tmp_path)
    seconds = time.monotonic() - started
    report = tmp_path / "report.json"
    assert report.exists(), f"st run wrote no report (exit {done.returncode}):\n{done.stdout[-5000:]}\n{done.stderr[-5000:]}"
    figures, answers = json.loads(report.read_text()), _answers(tmp_path / "tally.txt")
    summary = _summary(figures, answers, seconds)
    SUMMARY.parent.mkdir(exist_ok=True)
    SUMMARY.write_text(summary)
    SUMMARY.with_name("schemathesis-output.txt").write_text(done.stdout + done.stderr)
    print(summary)
    assert (figures["failures"], figures["errors"], done.returncode) == ([], [], 0), \
        f"{summary}\n{done.stdout[-30000:]}\n{done.stderr[-5000:]}\n{target.server.output()[-5000:]}"
    assert figures["complete"] and figures["stop_reason"] == "completed", summary
    assert figures["operations"]["tested"] == figures["operations"]["selected"] == \
        figures["operations"]["total"] - len(EXCLUDED_OPERATIONS), summary
    # Not a run of refusals: the key worked, and most operations were reached past their checks.
    # (logout answers 401 to anything but a session token, and the run holds only an API key)
    assert set(figures["warnings"]["missing_auth"]) <= {"POST /auth/logout"}, summary
    assert sum(1 for counts in answers.values() if counts["2xx"]) >= 0.75 * figures["operations"]["tested"], summary
    # Nothing the run registered sends anywhere but the loopback receiver.
    with httpx.Client(base_url=target.server.base_url, headers=bearer(target.key), trust_env=False) as http:
        assert {e["url"] for e in _everything(http, "/v1/webhooks")} == {target.run["receiver"]}
        assert {s["endpoint"] for s in _everything(http, "/v1/push/subscriptions")} <= {target.run["receiver"]}
