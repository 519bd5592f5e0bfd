"""A call as of an instant (issue 17 item 1) on PostgreSQL: for any valid life of a call, committed
one command at a time, the call replayed up to the last event recorded at or before an instant is
the record that was read back after the save that event belongs to, and before the first event
there is no call."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.postgres.database import DatabaseConfig
from adapters.scripted.brain import ScriptedBrain, ScriptedExtractor
from adapters.simulated.callee import SimulatedCallee
from application.calling.app import Calling, CallingPorts
from application.calling.history import call_as_of
from application.errors import NotFoundError
from application.principal import Principal
from domain.calls.call import Call
from domain.calls.call_rules import AGENT, CALLEE, CallStateError
from domain.calls.pricing import DEFAULT_PRICES
from tests.support.records import call_record
from tests.postgres import drop_schema, fresh_schema
from tests.support.calls import CARRIER_SID, NOW, queued_call
from tests.support.live_ports import unused_live_ports

TENANT = "ten_" + "a" * 32
PRINCIPAL = Principal(kind="api_key", tenant_id=TENANT, user_id="usr_" + "b" * 32, verification_status="approved",
                      tier="standard", key_id="key_x")
MICROSECOND = timedelta(microseconds=1)
WORDS = st.text(alphabet="abcdefghij XYZ.,?!é0123456789", max_size=24)
AMOUNTS = st.decimals(min_value=0, max_value=5, places=4)


@dataclass(frozen=True)
class Command:
    """One command of the aggregate, by name, with its arguments (``now`` comes at its turn)."""

    name: str
    args: tuple[Any, ...] = ()

    def apply(self, call: Call, now: datetime) -> None:
        getattr(call, self.name)(*self.args, now=now)


def _command(name: str, *args: st.SearchStrategy[Any]) -> st.SearchStrategy[Command]:
    return st.tuples(*args).map(lambda values: Command(name, values))


START = _command("start")
RENEW = _command("renew_lease")
TAKE_OVER = _command("take_over")
DIAL = _command("request_dial", st.booleans())
DIALED = _command("dialed", st.just(CARRIER_SID))
PROGRESSED = _command("carrier_progressed", st.sampled_from(["ringing", "in_progress"]))
VERDICT = _command("machine_verdict", st.sampled_from(["human", "human", "unknown", "machine_start", "fax", "no_answer"]))
SESSION = _command("open_session", st.just("relay"), st.text(alphabet="abc123", min_size=1, max_size=8))
TURN = _command("record_turn", st.sampled_from([AGENT, CALLEE]), WORDS)
KEYPAD = _command("record_keypad_entry", st.just("pin"), st.text(alphabet="0123456789", min_size=1, max_size=6))
CLOSE = _command("close_session", st.just("hangup"))
CARRIER_FINAL = _command("carrier_final", st.sampled_from(["completed", "completed", "busy", "no_answer"]),
                         st.integers(0, 600))
END = _command("end", st.integers(0, 900))
OUTCOME = _command("record_outcome", st.fixed_dictionaries({"confirmed": st.booleans()}), st.floats(0, 1),
                   st.just({"input_tokens": 3, "output_tokens": 2}))
PARTIAL = _command("record_partial_outcome", st.fixed_dictionaries({"confirmed": st.booleans()}))
COMPLETE = _command("complete", AMOUNTS, AMOUNTS)
FAIL = _command("fail", st.sampled_from(["cancelled", "timeout", "agent_unavailable"]), WORDS)
RECORDING = _command("attach_recording", st.just("https://recordings.example/r.mp3"), st.just("RE" + "1" * 32))

# The stages of a call's life in their usual order: a life starts with the first and picks some
# others, in this order, so that most of its commands are accepted; a few commands out of place
# test the refusals.
STAGES = {
    "live": [DIAL, DIALED, PROGRESSED, VERDICT, SESSION, TURN, TURN, KEYPAD, TURN, CLOSE, CARRIER_FINAL, END,
             st.one_of(OUTCOME, PARTIAL), st.one_of(COMPLETE, FAIL), RECORDING],
    "simulated": [START, VERDICT, TURN, RENEW, TURN, KEYPAD, TURN, TAKE_OVER, TURN, END, st.one_of(OUTCOME, PARTIAL),
                  st.one_of(COMPLETE, FAIL)],
}
ANY_COMMAND = st.one_of(*STAGES["live"], *STAGES["simulated"])


@st.composite
def lives(draw: st.DrawFn) -> tuple[str, list[tuple[Command, int]]]:
    """A mode and its commands, each with the seconds since the one before."""
    mode = draw(st.sampled_from(sorted(STAGES)))
    stages = STAGES[mode]
    picked = sorted([0, *draw(st.lists(st.integers(1, len(stages) - 1), min_size=2, max_size=16))])
    commands = [draw(stages[index]) for index in picked]
    for _ in range(draw(st.integers(0, 2))):
        commands.insert(draw(st.integers(0, len(commands))), draw(ANY_COMMAND))
    return mode, [(command, draw(st.integers(0, 20))) for command in commands]


@pytest.fixture(scope="module")
def calling(pg_server: DatabaseConfig) -> Iterator[Calling]:
    db = fresh_schema(pg_server)
    ports = CallingPorts(clock=lambda: NOW, brain=ScriptedBrain(), extractor=ScriptedExtractor(),
                         callee=SimulatedCallee, prices=DEFAULT_PRICES)
    app = Calling(db.eventsourcing_env(pool_size=2), ports=ports, live=unused_live_ports())
    try:
        yield app
    finally:
        app.close()
        drop_schema(db)


@dataclass(frozen=True)
class Save:
    versions: range  # the seqs this save recorded
    record: dict[str, Any]  # the call record read back after it


def _live(calling: Calling, mode: str, life: list[tuple[Command, int]]) -> tuple[Call, list[Save]]:
    """Commit the queued call, then each command that its state accepts, one save each."""
    call = queued_call(tenant_id=TENANT, mode=mode, simulation={"facts": {"confirmed": True}} if mode == "simulated"
                       else None)
    calling.commit(call)
    saves = [Save(range(1, call.version + 1), call_record(calling.repository.get(call.id)))]
    now = NOW
    for command, seconds in life:
        now += timedelta(seconds=seconds)
        current = calling.repository.get(call.id)
        before = current.version
        try:
            command.apply(current, now)
        except CallStateError:
            continue  # refused: nothing is saved
        if current.version == before:
            continue  # accepted but changed nothing (a duplicate or late fact)
        calling.commit(current)
        saves.append(Save(range(before + 1, current.version + 1), call_record(calling.repository.get(call.id))))
    return call, saves


def _timestamps(calling: Calling, call: Call) -> dict[int, datetime]:
    events = (calling.mapper.to_domain_event(stored) for stored in calling.recorder.select_events(call.id))
    return {event.originator_version: event.timestamp for event in events}


@given(life=lives())
@settings(max_examples=25, deadline=None)
def test_the_call_as_of_each_event_is_the_record_read_after_its_save(calling, life):
    call, saves = _live(calling, *life)
    recorded = _timestamps(calling, call)
    assert sorted(recorded) == list(range(1, saves[-1].versions[-1] + 1))

    for save in saves:
        last = recorded[save.versions[-1]]
        assert call_record(call_as_of(calling, PRINCIPAL, call.call_id, last)) == save.record
        for version in save.versions:  # inside one save, never an earlier save's state nor a later one's
            replayed = call_as_of(calling, PRINCIPAL, call.call_id, recorded[version])
            assert save.versions[0] <= replayed.call.version <= save.versions[-1]
    for previous, following in zip(saves, saves[1:]):
        just_before = recorded[following.versions[0]] - MICROSECOND
        assert call_record(call_as_of(calling, PRINCIPAL, call.call_id, just_before)) == previous.record
    far_later = datetime.now(timezone.utc) + timedelta(days=1)
    assert call_record(call_as_of(calling, PRINCIPAL, call.call_id, far_later)) == saves[-1].record
    with pytest.raises(NotFoundError):
        call_as_of(calling, PRINCIPAL, call.call_id, recorded[1] - MICROSECOND)


def test_a_call_of_another_tenant_is_not_found_at_any_instant(calling):
    call, _ = _live(calling, "simulated", [])
    stranger = Principal(kind="api_key", tenant_id="ten_" + "c" * 32, user_id="usr_" + "d" * 32,
                         verification_status="approved", tier="standard", key_id="key_y")
    with pytest.raises(NotFoundError):
        call_as_of(calling, stranger, call.call_id, datetime.now(timezone.utc))


def test_the_amounts_of_a_replayed_call_keep_four_places(calling):
    call, saves = _live(calling, "simulated", [
        (Command("start"), 1), (Command("end", (30,)), 30),
        (Command("record_outcome", ({"confirmed": True}, 0.9, {})), 1),
        (Command("complete", (Decimal("0.1"), Decimal("0.02"))), 1),
    ])
    record = call_record(call_as_of(calling, PRINCIPAL, call.call_id, datetime.now(timezone.utc)))
    assert record == saves[-1].record
    assert (record["status"], record["cost_total"]) == ("completed", "0.1200")
