"""The ``keypad`` block of a flow (SPEC.md Flow: touch-tone digits, masked by default): the graph's
defaults and a question's own block, merged into one spec with every key explicit. Pure: stdlib only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.flows.problems import quoted

TERMINATOR, FIXED_LENGTH, TIMEOUT = "terminator", "fixed_length", "timeout"
ENDING_MODES = (TERMINATOR, FIXED_LENGTH, TIMEOUT)
KEYPAD_KEYS = ("ending_mode", "terminators", "length", "timeout_s", "masked")
KEYS = "0123456789*#"
MAX_LENGTH = 32
MAX_TIMEOUT_S = 30
DEFAULTS: Mapping[str, Any] = {"terminators": ("#",), "length": None, "timeout_s": 5, "masked": True}


def read_block(raw: Any, where: str) -> tuple[dict[str, Any], list[str]]:
    """The valid keys of a keypad block, and a message for each fault (``where`` names the block)."""
    if not isinstance(raw, Mapping):
        return {}, [f"{where} must be an object with keys {', '.join(KEYPAD_KEYS)}"]
    faults: list[str] = []
    if unknown := [key for key in raw if key not in KEYPAD_KEYS]:
        faults.append(f"{where} has unknown keys {quoted(unknown)}; allowed: {', '.join(KEYPAD_KEYS)}")
    valid: dict[str, Any] = {}
    for key in KEYPAD_KEYS:
        if key in raw:
            value, fault = _CHECKS[key](raw[key])
            if fault is None:
                valid[key] = value
            else:
                faults.append(f"{where} {key} {fault}")
    return valid, faults


def merged(defaults: Mapping[str, Any], own: Mapping[str, Any], where: str) -> tuple[dict[str, Any] | None, list[str]]:
    """A question's spec: its own valid keys over the graph's, over the built-in defaults."""
    values = {**DEFAULTS, **defaults, **own}
    faults: list[str] = []
    if "ending_mode" not in values:
        faults.append(f"{where} needs an ending_mode, one of {', '.join(ENDING_MODES)}")
    elif values["ending_mode"] == FIXED_LENGTH and values["length"] is None:
        faults.append(f"{where} ends at a fixed_length and needs a length from 1 to {MAX_LENGTH}")
    if faults:
        return None, faults
    spec = {key: values[key] for key in KEYPAD_KEYS}
    spec["terminators"] = list(spec["terminators"])
    return spec, []


def describe(spec: Mapping[str, Any]) -> str:
    """How the caller finishes entering digits, for the agent's prompt."""
    if spec["ending_mode"] == TERMINATOR:
        return "they finish by pressing " + " or ".join(spec["terminators"])
    if spec["ending_mode"] == FIXED_LENGTH:
        return f"exactly {spec['length']} digits"
    return f"they finish by pausing {spec['timeout_s']} seconds"


def _ending_mode(value: Any) -> tuple[Any, str | None]:
    if isinstance(value, str) and value in ENDING_MODES:
        return value, None
    return None, f"must be one of {', '.join(ENDING_MODES)}"


def _terminators(value: Any) -> tuple[Any, str | None]:
    fault = f"must be a non-empty list of distinct single keys from {KEYS!r}"
    if not isinstance(value, list | tuple) or not value:
        return None, fault
    if any(not isinstance(key, str) or len(key) != 1 or key not in KEYS for key in value):
        return None, fault
    if len(set(value)) != len(value):
        return None, fault
    return tuple(value), None


def _bounded(limit: int) -> Any:
    def check(value: Any) -> tuple[Any, str | None]:
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= limit:
            return value, None
        return None, f"must be a whole number from 1 to {limit}"

    return check


def _masked(value: Any) -> tuple[Any, str | None]:
    return (value, None) if isinstance(value, bool) else (None, "must be true or false")


_CHECKS = {"ending_mode": _ending_mode, "terminators": _terminators, "length": _bounded(MAX_LENGTH),
           "timeout_s": _bounded(MAX_TIMEOUT_S), "masked": _masked}
