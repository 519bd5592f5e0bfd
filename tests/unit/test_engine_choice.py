"""The A/B routing rule of voice engines (domain/calls/engine_choice.py; ARCHITECTURE.md §8, SPEC.md
Tenant: ``voice_engine_default`` and the ``voice_ab_disabled`` kill switch)."""

from __future__ import annotations

import math
import random
import uuid
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import ids
from domain.calls.engine_choice import (
    DEFAULT_WEIGHTS,
    VoiceDefaults,
    VoiceRouting,
    VoiceRoutingError,
    ab_point,
    choose_engine,
    weighted_engine,
    weights_from,
)
from domain.calls.engines import CALL_ENGINES, ENGINES

_SEEDED = random.Random(20261102)
CALL_IDS = [ids.to_public(ids.CALL, uuid.UUID(int=_SEEDED.getrandbits(128))) for _ in range(6000)]

call_ids = st.uuids().map(lambda u: ids.to_public(ids.CALL, u))
engines = st.sampled_from(ENGINES)
weight_maps = st.dictionaries(engines, st.floats(min_value=0, max_value=1000, allow_nan=False), min_size=1).filter(
    lambda raw: any(w > 0 for w in raw.values()))
routings = st.builds(
    VoiceRouting,
    defaults=st.builds(VoiceDefaults, voice_engine_default=engines, voice_ab_weights=weight_maps.map(weights_from)),
    tenant_default=st.none() | engines,
    ab_disabled=st.booleans(),
)


@given(call_id=call_ids, routing=routings, requested=st.sampled_from(CALL_ENGINES))
def test_an_engine_named_on_the_request_always_wins(call_id, routing, requested):
    assert choose_engine(call_id, routing, requested) == requested


@given(call_id=call_ids, routing=routings)
def test_the_choice_is_a_function_of_the_call_id(call_id, routing):
    """A replay, another process or a later moment gives the same engine for the same call."""
    assert choose_engine(call_id, routing) == choose_engine(call_id, routing) == routing.engine_for(call_id)
    assert choose_engine(call_id, routing) in ENGINES


@given(call_id=call_ids, routing=routings.filter(lambda r: r.ab_disabled))
def test_with_ab_disabled_the_tenant_default_or_else_the_system_default_applies(call_id, routing):
    expected = routing.tenant_default or routing.defaults.voice_engine_default
    assert choose_engine(call_id, routing) == expected


@given(call_id=call_ids, routing=routings.filter(lambda r: not r.ab_disabled))
def test_with_ab_on_the_tenant_default_is_not_used_and_no_zero_weight_engine_is_chosen(call_id, routing):
    chosen = choose_engine(call_id, routing)
    assert dict(routing.defaults.voice_ab_weights)[chosen] > 0
    assert chosen == weighted_engine(ab_point(call_id), routing.defaults.voice_ab_weights)


@settings(max_examples=25, deadline=None)
@given(raw=weight_maps.filter(lambda raw: all(w == 0 or w >= 1 for w in raw.values())))
def test_shares_over_many_calls_follow_the_weights(raw):
    weights = weights_from(raw)
    routing = VoiceRouting(defaults=VoiceDefaults(voice_ab_weights=weights))
    counts = Counter(choose_engine(call_id, routing) for call_id in CALL_IDS)
    total = sum(weight for _, weight in weights)
    for name, weight in weights:
        expected = weight / total
        # 6,000 calls: a standard error of at most 0.0065, so 0.035 is more than five of them
        assert math.isclose(counts[name] / len(CALL_IDS), expected, abs_tol=0.035), (name, counts, weights)


def test_the_built_in_defaults_split_alpha_25_and_alpha_31_half_and_half():
    counts = Counter(choose_engine(call_id, VoiceRouting()) for call_id in CALL_IDS)
    assert set(counts) == {"alpha_25", "alpha_31"}
    assert abs(counts["alpha_25"] / len(CALL_IDS) - 0.5) < 0.03
    assert dict(DEFAULT_WEIGHTS) == {"alpha_25": 1.0, "alpha_31": 1.0, "beta_think_fast": 0.0}
    assert VoiceDefaults().voice_engine_default == "alpha_25"
    assert VoiceDefaults().weights_dict() == {"alpha_25": 1.0, "alpha_31": 1.0}


@given(call_id=st.text(max_size=80))
def test_the_point_of_a_call_lies_in_the_unit_interval(call_id):
    assert 0.0 <= ab_point(call_id) < 1.0


def test_the_ends_of_the_unit_interval_fall_on_the_first_and_last_positive_engines():
    weights = weights_from({"alpha_25": 0, "alpha_31": 3, "beta_think_fast": 1})
    assert weighted_engine(0.0, weights) == "alpha_31"
    assert weighted_engine(0.7499, weights) == "alpha_31"
    assert weighted_engine(0.75, weights) == "beta_think_fast"
    assert weighted_engine(math.nextafter(1.0, 0.0), weights) == "beta_think_fast"


@pytest.mark.parametrize(("raw", "code"), [
    ({"alpha_25": 0, "alpha_31": 0}, "no_positive_weight"),
    ({}, "no_positive_weight"),
    ({"gamma_9": 1}, "unknown_voice_engine"),
    ({"alpha_25": -1}, "invalid_weight"),
    ({"alpha_25": float("nan")}, "invalid_weight"),
    ({"alpha_25": float("inf")}, "invalid_weight"),
    ({"alpha_25": True}, "invalid_weight"),
])
def test_weights_that_cannot_split_calls_are_refused(raw, code):
    with pytest.raises(VoiceRoutingError) as refused:
        weights_from(raw)
    assert refused.value.code == code


def test_an_engine_left_out_of_the_weights_weighs_nothing():
    assert weights_from({"beta_think_fast": 2}) == (("alpha_25", 0.0), ("alpha_31", 0.0), ("beta_think_fast", 2.0))
