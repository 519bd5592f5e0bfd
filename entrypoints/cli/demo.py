"""``callwright demo``: one simulated call end to end, in memory, with the configured agent
(scripted offline unless ANTHROPIC_API_KEY is set). The destination is picked inside call hours."""

from __future__ import annotations

import json
import secrets
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from application.calling import runner
from application.calling.create import CallRequest, prepare_call
from application.principal import API_KEY, Principal
from domain.calls import dialing_rules
from domain.calls.call import Call
from domain.errors import DialingRuleError
from entrypoints.cli.style import heading

if TYPE_CHECKING:
    from entrypoints.bootstrap import Container

# Example numbers across the world's time zones: one of them is always inside 08:00-21:00.
CANDIDATES = ("+442071838750", "+61292374000", "+81335508000", "+912261234567", "+12125550123", "+14155550123",
              "+5511987654321", "+493012345678")
OUTCOME_SCHEMA = {
    "confirmed": {"type": "boolean", "description": "whether the appointment is still on"},
    "preferred_time": {"type": "datetime", "optional": True},
    "contact_method": {"type": "enum", "values": ["phone", "email", "sms"]},
}
FACTS = {"confirmed": True, "preferred_time": "2026-12-01T15:30:00+00:00", "contact_method": "sms"}


def reachable_destination(now: datetime) -> str | None:
    for number in CANDIDATES:
        try:
            dialing_rules.check_call_hours(dialing_rules.parse_destination(number), "prior_express", now)
        except DialingRuleError:
            continue
        return number
    return None


def run_demo() -> None:
    from entrypoints.bootstrap import bootstrap_memory
    from entrypoints.logging import configure
    from entrypoints.settings import Settings

    configure("warning", "console")
    # A throw-away data directory and key: the demo must not create ./var wherever it runs.
    with tempfile.TemporaryDirectory(prefix="callwright-demo-") as scratch:
        settings = Settings.from_env(data_dir=Path(scratch), secret_key=secrets.token_urlsafe(32))
        container = bootstrap_memory(settings)
        try:
            _run(container)
        finally:
            container.close()


def _run(container: Container) -> None:
    now = datetime.now(timezone.utc)
    to = reachable_destination(now)
    if to is None:
        typer.echo("error: no demo destination is inside call hours right now", err=True)
        raise typer.Exit(1)
    principal = Principal(kind=API_KEY, tenant_id="ten_" + "0" * 32, user_id="usr_" + "0" * 32,
                          verification_status="approved", tier="standard", key_id="key_demo")
    request = CallRequest(to=to, objective="Confirm tomorrow's dental appointment and how to send the reminder.",
                          outcome_schema=OUTCOME_SCHEMA, consent_type="prior_express", mode="simulated",
                          simulation={"facts": FACTS, "persona": "A busy but friendly patient"})
    calling = container.calling
    call = prepare_call(calling, principal, request, now)
    calling.commit(call)
    heading(f"simulated call {call.call_id} to {to} ({calling.ports.brain.name} agent)")
    claimed = runner.claim(calling, call.call_id)
    if claimed is not None:
        runner.run(calling, claimed)
    done = calling.find(Call, call.id)
    assert done is not None
    for line in done.transcript.splitlines():
        typer.echo(f"  {line}")
    heading(f"[{done.status}]")
    typer.echo(json.dumps({"outcome": done.outcome, "confidence": done.confidence,
                           "duration_seconds": done.duration_seconds, "cost_total": str(done.cost_total),
                           "error_code": done.error_code}, indent=2))
