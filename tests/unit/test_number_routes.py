"""A number's routes (SPEC.md Number: routes): the shape ``check_routes`` accepts and every problem it
reports at once, destinations named by label, and the first matching route winning."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import InputProblem
from domain.numbers.routes import (KEYPAD_KEYS, MAX_ROUTES, ROUTE_ACTIONS, check_route_destinations, check_routes,
                                   first_match)

OWN = "+14155550100"
DESTINATIONS = [{"label": "Front desk", "e164": "+14155550101"}, {"label": "Sales", "e164": "+442071838750"}]


def checked(value: Any) -> tuple[Any, list[InputProblem]]:
    problems: list[InputProblem] = []
    return check_routes(value, OWN, problems), problems


def faults(value: Any) -> list[tuple[list[str | int], str]]:
    result, problems = checked(value)
    assert problems and result is None
    return [(loc, kind) for loc, _, kind, _ in problems]


# --- the shape -------------------------------------------------------------------------------


def test_routes_keep_their_order_and_a_transfer_keeps_its_stripped_destination():
    routes = [
        {"match": {"keypad": "2"}, "action": "transfer", "destination": "  Sales "},
        {"match": {"caller_prefix": "+44"}, "action": "voicemail"},
        {"action": "agent", "match": {"keypad": "#"}, "destination": None},
    ]
    assert checked(routes) == ([
        {"match": {"keypad": "2"}, "action": "transfer", "destination": "Sales"},
        {"match": {"caller_prefix": "+44"}, "action": "voicemail"},
        {"match": {"keypad": "#"}, "action": "agent"},
    ], [])
    assert checked([]) == ([], [])


@pytest.mark.parametrize("value", [None, {"match": {"keypad": "1"}, "action": "agent"}, "x", 3])
def test_routes_must_be_a_list(value):
    assert faults(value) == [([], "list_type")]


def test_a_number_has_at_most_twenty_routes():
    route = {"match": {"keypad": "1"}, "action": "agent"}
    assert checked([route] * MAX_ROUTES)[1] == []
    result, problems = checked([route] * (MAX_ROUTES + 1))
    assert result is None and problems == [([], "a number has at most 20 routes", "too_long", 21)]


@pytest.mark.parametrize("item", [None, "keypad 1", ["match", "action"], 1])
def test_a_route_is_an_object(item):
    assert faults([{"match": {"keypad": "1"}, "action": "agent"}, item]) == [([1], "dict_type")]


def test_unknown_fields_of_a_route_and_of_its_match_are_refused():
    assert faults([{"match": {"keypad": "1", "when": "always"}, "action": "agent", "priority": 1}]) == [
        ([0, "priority"], "extra_forbidden"), ([0, "match", "when"], "unknown_match")]


def test_match_and_action_are_required():
    assert faults([{}]) == [([0, "match"], "missing"), ([0, "action"], "missing")]


@pytest.mark.parametrize("match", [{}, {"caller_prefix": "+44", "keypad": "1"}, {"digits": "1"}])
def test_a_match_has_exactly_one_kind(match):
    assert ([0, "match"], "match_kind") in faults([{"match": match, "action": "agent"}])


@pytest.mark.parametrize("match", ["+44", ["+44"], None])
def test_a_match_is_an_object(match):
    assert faults([{"match": match, "action": "agent"}]) == [([0, "match"], "dict_type")]


@pytest.mark.parametrize("prefix", ["+1", "+44", "+442071", "+" + "9" * 15])
def test_a_caller_prefix_is_plus_and_up_to_15_digits(prefix):
    assert checked([{"match": {"caller_prefix": prefix}, "action": "voicemail"}])[1] == []


@pytest.mark.parametrize("prefix", ["44", "+", "+0", "+04", "+" + "9" * 16, "+44 20", "+4a", "+\u0664\u0664", 44,
                                    None, ""])
def test_a_bad_caller_prefix_is_refused(prefix):
    result, problems = checked([{"match": {"caller_prefix": prefix}, "action": "voicemail"}])
    assert result is None
    assert problems == [([0, "match", "caller_prefix"], "must be + then 1 to 15 digits, the first not 0, e.g. +44",
                         "caller_prefix", prefix)]


@pytest.mark.parametrize("key", list(KEYPAD_KEYS))
def test_every_keypad_key_can_be_matched(key):
    assert checked([{"match": {"keypad": key}, "action": "agent"}]) == (
        [{"match": {"keypad": key}, "action": "agent"}], [])


@pytest.mark.parametrize("key", [2, "12", "", "a", "A", "+", " 1", "\u0662", None, ["1"]])
def test_a_bad_keypad_key_is_refused(key):
    assert faults([{"match": {"keypad": key}, "action": "agent"}]) == [([0, "match", "keypad"], "keypad")]


@pytest.mark.parametrize("action", ["Transfer", "hangup", "message", "", None, 1])
def test_an_action_is_transfer_voicemail_or_agent(action):
    result, problems = checked([{"match": {"keypad": "1"}, "action": action}])
    assert result is None
    assert problems == [([0, "action"], "must be one of transfer, voicemail, agent", "enum", action)]


def test_a_transfer_needs_a_destination():
    assert faults([{"match": {"keypad": "1"}, "action": "transfer"}]) == [([0, "destination"], "missing")]
    assert faults([{"match": {"keypad": "1"}, "action": "transfer", "destination": None}]) == [
        ([0, "destination"], "missing")]


@pytest.mark.parametrize("action", ["voicemail", "agent"])
def test_only_a_transfer_has_a_destination(action):
    assert faults([{"match": {"keypad": "1"}, "action": action, "destination": "Sales"}]) == [
        ([0, "destination"], "destination_not_allowed")]


@pytest.mark.parametrize("label", ["", "   ", "x" * 81, 5, ["Sales"]])
def test_a_destination_is_a_label_of_1_to_80_characters(label):
    assert faults([{"match": {"keypad": "1"}, "action": "transfer", "destination": label}]) == [
        ([0, "destination"], "label")]
    assert checked([{"match": {"keypad": "1"}, "action": "transfer", "destination": "x" * 80}])[1] == []


def test_every_problem_is_reported_at_once():
    routes = [
        {"match": {"keypad": "1"}, "action": "agent"},
        {"match": {"caller_prefix": "44"}, "action": "transfer", "destination": "Sales"},
        {"match": {"keypad": "1"}, "action": "voicemail", "destination": "Sales"},
        {"match": {"keypad": "22"}, "action": "callback"},
    ]
    assert faults(routes) == [([1, "match", "caller_prefix"], "caller_prefix"), ([2, "destination"], "destination_not_allowed"),
                              ([3, "match", "keypad"], "keypad"), ([3, "action"], "enum")]


def test_type_codes_are_snake_case_and_messages_are_sentences():
    _, problems = checked([{}, {"match": {"keypad": 1, "caller_prefix": 4, "x": 1}, "action": "transfer", "y": 2}, "z"])
    assert len(problems) == 9
    for _, message, kind, _ in problems:
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", kind)
        assert message and message[0].islower() and not message.endswith(".")


# --- generated routes ------------------------------------------------------------------------

PREFIXES = st.from_regex(r"\+[1-9][0-9]{0,14}", fullmatch=True)
MATCHES = st.one_of(st.builds(lambda p: {"caller_prefix": p}, PREFIXES),
                    st.builds(lambda k: {"keypad": k}, st.sampled_from(KEYPAD_KEYS)))
LABELS = st.sampled_from(["Front desk", " Sales", "Sales ", "Nights", "front desk"])


@st.composite
def routes(draw: st.DrawFn) -> dict[str, Any]:
    action = draw(st.sampled_from(ROUTE_ACTIONS))
    route: dict[str, Any] = {"match": draw(MATCHES), "action": action}
    if action == "transfer":
        route["destination"] = draw(LABELS)
    elif draw(st.booleans()):
        route["destination"] = None
    return route


@settings(max_examples=200)
@given(st.lists(routes(), max_size=MAX_ROUTES))
def test_property_valid_routes_pass_and_checking_again_changes_nothing(value):
    result, problems = checked(value)
    assert problems == []
    assert len(result) == len(value)
    for given_route, route in zip(value, result, strict=True):
        assert route["match"] == given_route["match"] and route["action"] == given_route["action"]
        label = given_route["destination"].strip() if route["action"] == "transfer" else None
        assert route.get("destination") == label
    assert checked(result) == (result, [])


@settings(max_examples=150)
@given(st.lists(routes(), min_size=1, max_size=MAX_ROUTES), st.data())
def test_property_a_fault_in_each_of_several_routes_gives_one_problem_each(value, data):
    broken = [dict(route) for route in value]
    expected = []
    for index in data.draw(st.lists(st.integers(0, len(value) - 1), min_size=1, unique=True)):
        fault = data.draw(st.sampled_from(["keypad", "action", "extra"]))
        if fault == "keypad":
            broken[index]["match"] = {"keypad": "10"}
            expected.append(([index, "match", "keypad"], "keypad"))
        elif fault == "action":
            broken[index]["action"] = "hold"
            expected.append(([index, "action"], "enum"))
        else:
            broken[index]["note"] = "x"
            expected.append(([index, "note"], "extra_forbidden"))
    assert sorted(faults(broken)) == sorted(expected)


# --- destinations by label -------------------------------------------------------------------


def test_a_transfer_must_name_a_destination_by_its_label():
    value, problems = checked([
        {"match": {"keypad": "1"}, "action": "transfer", "destination": "Front desk"},
        {"match": {"keypad": "2"}, "action": "transfer", "destination": "sales"},  # labels are case-sensitive
        {"match": {"keypad": "3"}, "action": "voicemail"},
        {"match": {"keypad": "4"}, "action": "transfer", "destination": " Sales "},
        {"match": {"keypad": "5"}, "action": "transfer", "destination": "Billing"},
    ])
    assert problems == []
    check_route_destinations(value, DESTINATIONS, problems)
    assert [(loc, kind, bad) for loc, _, kind, bad in problems] == [
        ([1, "destination"], "unknown_destination", "sales"), ([4, "destination"], "unknown_destination", "Billing")]
    assert "Front desk, Sales" in problems[0][1]


def test_without_destinations_every_transfer_route_is_unknown_and_the_others_are_fine():
    value, _ = checked([{"match": {"keypad": "1"}, "action": "transfer", "destination": "Sales"},
                        {"match": {"keypad": "2"}, "action": "agent"}])
    problems: list[InputProblem] = []
    check_route_destinations(value, [], problems)
    assert [(loc, kind) for loc, _, kind, _ in problems] == [([0, "destination"], "unknown_destination")]
    assert "none yet" in problems[0][1]


def test_a_label_stored_with_spaces_still_matches():
    problems: list[InputProblem] = []
    check_route_destinations([{"match": {"keypad": "1"}, "action": "transfer", "destination": "Sales"}],
                             [{"label": " Sales ", "e164": "+442071838750"}], problems)
    assert problems == []


# --- the first match wins --------------------------------------------------------------------

ROUTES = [
    {"match": {"caller_prefix": "+44"}, "action": "voicemail"},
    {"match": {"keypad": "2"}, "action": "transfer", "destination": "Sales"},
    {"match": {"caller_prefix": "+4420"}, "action": "agent"},  # shadowed by the first
    {"match": {"caller_prefix": "+1"}, "action": "agent"},
    {"match": {"keypad": "2"}, "action": "voicemail"},  # shadowed by the second
]


@pytest.mark.parametrize("caller,keypad,index", [
    ("+442071838750", None, 0), ("+442071838750", "2", 0), ("+14155550123", "2", 1), ("+14155550123", None, 3),
    ("+33142685300", "2", 1), ("+33142685300", "9", None), (None, "2", 1), (None, None, None), ("+4", None, None),
])
def test_the_first_route_whose_match_holds_wins(caller, keypad, index):
    assert first_match(ROUTES, caller=caller, keypad=keypad) is (None if index is None else ROUTES[index])


def test_no_routes_match_nothing():
    assert first_match([], caller="+14155550123", keypad="1") is None
    assert first_match(None, caller="+14155550123", keypad="1") is None


@settings(max_examples=300)
@given(st.lists(routes(), max_size=8), st.one_of(st.none(), PREFIXES.map(lambda p: (p + "5550123")[:16])),
       st.one_of(st.none(), st.sampled_from(KEYPAD_KEYS)))
def test_property_first_match_is_the_lowest_index_whose_match_holds(value, caller, keypad):
    normalized, _ = checked(value)

    def holds(route: dict[str, Any]) -> bool:
        match = route["match"]
        if "caller_prefix" in match:
            return caller is not None and caller[:len(match["caller_prefix"])] == match["caller_prefix"]
        return keypad is not None and keypad == match["keypad"]

    winners = [route for route in normalized if holds(route)]
    assert first_match(normalized, caller=caller, keypad=keypad) is (winners[0] if winners else None)
