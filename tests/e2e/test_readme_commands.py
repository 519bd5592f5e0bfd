"""README.md's walk-through, command by command, against a real ``callwright serve``.

Every shell command of the "Walk-through" section (``curl`` and ``.venv/bin/callwright``) runs in
bash as written, with only what a reader fills in themselves filled in: the server's port, the key
the sign-up printed (``sk_live_…``), the call id a create printed (``cll_…``), ``request.json``
(the body shown above it), and for the phone line their carrier account's SID and token (a fake
carrier's on loopback), the template id, the number id, the SMS template id and the flow id the answers printed. Each must exit 0, and the answer shown under it in ``# …`` lines must be
in its output (fragments without ``…``; a read is retried while the call is still running).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e.service import ServeProcess, callwright_executable, offline_server
from tests.fakes.twilio import FakeTwilio
from tests.support.readme import README, first_call_body

pytestmark = pytest.mark.e2e

ELLIPSIS = "…"


@dataclass
class Step:
    command: str
    expected: list[str] = field(default_factory=list)  # fragments the output must contain


def walkthrough_steps() -> list[Step]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Walk-through"):]
    section = section[:section.index("\n## ", 1)]
    steps: list[Step] = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S):
        lines = block.splitlines()
        index = 0
        while index < len(lines):
            line = lines[index]
            index += 1
            if line.startswith("#"):
                heading = re.match(r"#\s*\d+\.", line) or line.startswith(("# the callee above", "#   "))
                if steps and not heading:
                    steps[-1].expected += fragments(line[1:])
                continue
            if not line.strip():
                continue
            command = line
            while command.endswith("\\") or command.count("'") % 2:  # continued, or inside a quoted body
                command += "\n" + lines[index]
                index += 1
            steps.append(Step(re.sub(r"\s+#\s[^'\"]*$", "", command)))
    return steps


def fragments(comment: str) -> list[str]:
    """The parts of an answer shown in a comment that carry no placeholder."""
    comment = comment.strip()
    if not comment.startswith(("{", '"')):
        return [part.strip() for part in comment.split(ELLIPSIS) if part.strip()]
    found = [*re.findall(r'"[a-z_]+":(?:"[^"]*"|[-0-9.]+|true|false|null)', comment),
             *re.findall(r'"[a-z_]+":\{[^{}]*\}', comment)]
    return [item for item in found if ELLIPSIS not in item]


README_NUMBER = "+14155550100"  # the number the walk-through registers: one of the fake carrier account's


@pytest.fixture
def carrier() -> Iterator[FakeTwilio]:
    """The carrier a reader has an account with (loopback only): the walk-through's phone line."""
    with FakeTwilio().start() as fake:
        yield fake


@pytest.fixture
def server(carrier: FakeTwilio) -> Iterator[ServeProcess]:
    with offline_server("callwright-e2e-readme-", twilio_api_base_url=carrier.base_url) as started:
        yield started


def test_the_readme_walkthrough_runs_as_written(server: ServeProcess, carrier: FakeTwilio, tmp_path: Path) -> None:
    account = carrier.add_account(numbers=[(README_NUMBER, "Front desk")])
    filled = {'"AC…"': f'"{account.sid}"', '"auth_token": "…"': f'"auth_token": "{account.auth_token}"'}
    steps = walkthrough_steps()
    assert len(steps) >= 10, [step.command for step in steps]
    port = server.base_url.rsplit(":", 1)[1]
    env = dict(server.env)
    venv = Path(callwright_executable()).parent.parent
    (tmp_path / ".venv").symlink_to(venv)  # the README runs commands from the checkout: .venv/bin/…
    (tmp_path / "request.json").write_text(json.dumps(first_call_body()))
    call_id = ""
    for step in steps:
        command = step.command.replace("localhost:8000", f"127.0.0.1:{port}")
        if command.startswith("export KEY="):
            continue  # set below from the sign-up's answer
        if call_id:
            command = command.replace("cll_…", call_id)
        for placeholder, value in filled.items():
            command = command.replace(placeholder, value)
        deadline = time.monotonic() + (20 if step.expected else 0)
        while True:
            done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=90, stdin=subprocess.DEVNULL)
            output = done.stdout.replace("\r", "")
            missing = [item for item in step.expected if item.lower() not in output.lower()]
            if done.returncode != 0 or not missing or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        assert not missing, f"{command}\nmissing {missing} in\n{output}"
        if "/auth/signup" in command:
            env["KEY"] = json.loads(output)["secret"]
        if command.startswith("export "):
            name, _, value = command[len("export "):].partition("=")
            env[name] = env["KEY"] if value == "$KEY" else value
        if "/v1/numbers/byo" in command:
            filled["5b4be5c9-…"] = json.loads(output)["id"]
        if command.startswith("curl -s -X POST") and "/v1/flows -H" in command:
            filled["flw_…"] = json.loads(output)["id"]
        if "/v1/templates" in command:
            filled["tpl_…"] = json.loads(output)["id"]
        if "sms_templates" in command:
            filled["smt_…"] = json.loads(output)["sms_templates"][0]["id"]
        found = re.findall(r"cll_[0-9a-f]{32}", output)
        call_id = found[0] if found and "calls list" not in command and "?status" not in command else call_id
    assert (tmp_path / "calls.csv").read_text().startswith("call_id,created_at,to")
