"""Who may start a webhook attempt (entrypoints/workers/webhook_slots.py, docs/decisions.md 33):
an endpoint's concurrency shrinks while it gets no answer and grows back, an endpoint that keeps
timing out is backed off, and a tenant holds at most its share of the slots. Pure: no database,
no network, the clock is a number."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from entrypoints.workers.webhook_slots import (
    ANSWERED,
    FAILED,
    MAX_COOL_DOWN,
    NEUTRAL,
    TIMED_OUT,
    EndpointHealth,
    WebhookSlots,
)

A, B = "ten_a", "ten_b"


def fill(slots: WebhookSlots, tenant: str, endpoint: str, now: float = 0.0) -> list:
    """Admit attempts of one endpoint until refused; the tickets."""
    tickets = []
    while (ticket := slots.admit(tenant, endpoint, now)) is not None:
        tickets.append(ticket)
    return tickets


# --- an endpoint's concurrency -----------------------------------------------------------------------


def test_an_endpoint_starts_at_its_ceiling_halves_on_each_attempt_without_answer_and_grows_by_one_per_answer():
    health = EndpointHealth(8)
    assert health.allowed(0.0) == 8
    health.no_answer(timed_out=False, probe=False, now=0.0)
    assert health.limit == 4
    health.no_answer(timed_out=True, probe=False, now=0.0)
    health.no_answer(timed_out=False, probe=False, now=0.0)
    health.no_answer(timed_out=False, probe=False, now=0.0)
    assert health.limit == 1  # never below one
    for expected in (2, 3, 4):
        health.answered()
        assert health.limit == expected
    for _ in range(10):
        health.answered()
    assert health.limit == 8 and health.pristine


def test_three_timeouts_in_a_row_back_an_endpoint_off_then_one_probe_at_a_time():
    slots = WebhookSlots(64, 8)
    tickets = fill(slots, A, "slow")
    assert len(tickets) == 8
    for ticket in tickets[:3]:
        slots.done(ticket, TIMED_OUT, now=10.0)
    assert slots.cooling("slow", 10.5)
    assert slots.admit(A, "slow", 10.5) is None  # nothing during the cool-down, though 5 slots are free of 8
    for ticket in tickets[3:]:  # started before the back-off: their timeouts do not lengthen it
        slots.done(ticket, TIMED_OUT, now=10.9)
    assert slots.health("slow").cool_until == 11.0
    probe = slots.admit(A, "slow", 11.0)
    assert probe is not None and probe.probe
    assert slots.admit(A, "slow", 11.0) is None  # at most one probe in flight
    slots.done(probe, TIMED_OUT, now=12.0)
    assert slots.health("slow").cool_down == 2.0 and slots.cooling("slow", 13.9)
    assert not slots.cooling("slow", 14.0)


def test_the_cool_down_doubles_up_to_thirty_seconds_and_an_answer_ends_the_back_off():
    slots = WebhookSlots(64, 8)
    now = 0.0
    for ticket in fill(slots, A, "slow"):
        slots.done(ticket, TIMED_OUT, now)
    assert slots.health("slow").cool_down == 1.0
    lengths = []
    for _ in range(8):
        now = slots.health("slow").cool_until
        probe = slots.admit(A, "slow", now)
        slots.done(probe, TIMED_OUT, now)
        lengths.append(slots.health("slow").cool_down)
    assert lengths == [2.0, 4.0, 8.0, 16.0, MAX_COOL_DOWN, MAX_COOL_DOWN, MAX_COOL_DOWN, MAX_COOL_DOWN]
    probe = slots.admit(A, "slow", slots.health("slow").cool_until)
    slots.done(probe, ANSWERED, now)
    health = slots.health("slow")
    assert not health.backed_off and health.timeouts == 0 and health.limit == 2  # grows back one per answer
    assert len(fill(slots, A, "slow", now)) == 2


def test_failures_without_timeout_shrink_an_endpoint_but_never_back_it_off():
    slots = WebhookSlots(64, 8)
    for _ in range(6):
        slots.done(slots.admit(A, "refusing", 0.0), FAILED, 0.0)
    assert slots.health("refusing").limit == 1 and not slots.health("refusing").backed_off


def test_an_attempt_that_sent_nothing_leaves_its_endpoint_as_it_was():
    slots = WebhookSlots(64, 8)
    slots.done(slots.admit(A, "e", 0.0), NEUTRAL, 0.0)
    assert slots.health("e").pristine and slots.in_flight == 0


def test_an_answer_in_between_resets_the_timeouts_in_a_row():
    slots = WebhookSlots(64, 8)
    for result in (TIMED_OUT, TIMED_OUT, ANSWERED, TIMED_OUT, TIMED_OUT):
        slots.done(slots.admit(A, "flaky", 0.0), result, 0.0)
    assert not slots.health("flaky").backed_off and slots.health("flaky").timeouts == 2


# --- tenants' shares ---------------------------------------------------------------------------------


def test_a_lone_tenant_leaves_a_reserve_free_for_a_tenant_that_has_none():
    slots = WebhookSlots(64, 8)
    slots.begin_round([A])
    held = [t for n in range(20) for t in fill(slots, A, f"slow-{n}")]
    assert len(held) == 64 - slots.reserve and slots.reserve == 8
    slots.begin_round([A, B])
    assert slots.admit(B, "fast", 0.0) is not None  # B's first attempt never waits for A's to end
    assert slots.admit(A, "slow-0", 0.0) is None  # A is over its share now that B has work


def test_two_tenants_with_work_split_the_slots_and_a_floor_holds_with_many():
    slots = WebhookSlots(64, 8)
    assert slots.begin_round([A, B]) == 28
    assert slots.begin_round([f"ten_{n}" for n in range(100)]) == slots.tenant_floor
    slots.begin_round([A, B])
    assert len([t for n in range(10) for t in fill(slots, A, f"e-{n}")]) == 28


def test_twenty_timing_out_endpoints_end_up_holding_one_slot_each_at_most():
    slots = WebhookSlots(64, 8)
    now = 0.0
    for _ in range(6):  # rounds: start what may start, then everything times out
        slots.begin_round([A])
        held = [t for n in range(20) for t in fill(slots, A, f"slow-{n}", now)]
        now += 1.0
        for ticket in held:
            slots.done(ticket, TIMED_OUT, now)
    slots.begin_round([A])
    assert len([t for n in range(20) for t in fill(slots, A, f"slow-{n}", now + 60)]) <= 20


def test_tenants_take_turns_in_a_round_the_one_with_fewest_in_flight_first():
    slots = WebhookSlots(64, 8)
    slots.admit(A, "a0", 0.0)
    candidates = [(n, "a0", A) for n in range(3)] + [(10 + n, "b0", B) for n in range(2)]
    assert [c[0] for c in slots.in_turns(candidates)] == [10, 0, 11, 1, 2]


# --- properties ---------------------------------------------------------------------------------------

steps = st.lists(st.tuples(st.sampled_from([A, B, "ten_c"]), st.integers(0, 4),
                           st.sampled_from([ANSWERED, TIMED_OUT, FAILED, NEUTRAL, None]),
                           st.floats(0, 5)), max_size=200)


@given(steps)
def test_limits_always_hold_and_every_slot_comes_back(script):
    slots = WebhookSlots(16, 4, tenant_floor=2)
    held, now = [], 0.0
    for tenant, endpoint, result, pause in script:
        now += pause
        if result is None or not held:
            slots.begin_round([tenant])
            ticket = slots.admit(tenant, f"{tenant}-{endpoint}", now)
            if ticket is not None:
                held.append(ticket)
        else:
            slots.done(held.pop(0), result, now)
        assert slots.in_flight == len(held) <= 16
        per_endpoint = {t.endpoint_id for t in held}
        for name in per_endpoint:
            assert sum(t.endpoint_id == name for t in held) <= 4
        assert sum(t.probe for t in held if slots.health(t.endpoint_id).backed_off) <= len(per_endpoint)
    for ticket in held:
        slots.done(ticket, NEUTRAL, now)
    assert slots.in_flight == 0 and all(slots.held_by(t) == 0 for t in (A, B, "ten_c"))
