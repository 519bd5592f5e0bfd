"""The ``keypad`` block of a flow (SPEC.md Flow: touch-tone digits, masked by default; ending modes
``terminator``, ``fixed-length``, ``timeout``): the graph's defaults and a question's own block,
merged into one spec with every key explicit. ``fixed_length`` is read as ``fixed-length``, and what
is stored or answered uses the spec's spelling (``Respelled``). Pure: stdlib only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.flows.problems import quoted

TERMINATOR, FIXED_LENGTH, TIMEOUT = "terminator", "fixed-length", "timeout"
ENDING_MODES = (TERMINATOR, FIXED_LENGTH, TIMEOUT)  # as SPEC.md Flow spells them
ALIASES: Mapping[str, str] = {"fixed_length": FIXED_LENGTH}  # other spellings accepted, read as the spec's
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
        faults.append(f"{where} ends at a fixed length ({FIXED_LENGTH}) and needs a length from 1 to {MAX_LENGTH}")
    if faults:
        return None, faults
    spec = {key: values[key] for key in KEYPAD_KEYS}
    spec["terminators"] = list(spec["terminators"])
    return spec, []


def describe(spec: Mapping[str, Any]) -> str:
    """How the caller finishes entering digits, for the agent's prompt (``spec`` as ``merged`` gives
    it; a flow's defaults over the built-in ones may leave the length unset)."""
    mode = ending_mode(spec["ending_mode"])
    if mode == TERMINATOR:
        return "they finish by pressing " + " or ".join(spec["terminators"])
    if mode == FIXED_LENGTH:
        return f"exactly {spec['length']} digits" if spec.get("length") else "a set number of digits"
    return f"they finish by pausing {spec['timeout_s']} seconds"


def ending_mode(value: Any) -> str | None:
    """An ending mode in the spec's spelling (an alias read as the mode it names); None when it is none."""
    mode = ALIASES.get(value, value) if isinstance(value, str) else None
    return mode if mode in ENDING_MODES else None


class Respelled:
    """What a flow keeps (a draft's ``graph_json``, a published graph and artifact) with the
    ``ending_mode`` of its keypad blocks in the spec's spelling; everything else, valid or not, as it
    is. New objects; what is given is left alone."""

    @staticmethod
    def graph(graph: Any) -> Any:
        """A draft's ``graph_json`` or a compiled graph: the keypad block beside the nodes and each node's."""
        if not isinstance(graph, Mapping):
            return graph
        respelled = dict(graph)
        if "keypad" in respelled:
            respelled["keypad"] = _respelled_block(respelled["keypad"])
        if isinstance(respelled.get("nodes"), list):
            respelled["nodes"] = [{**node, "keypad": _respelled_block(node["keypad"])}
                                  if isinstance(node, Mapping) and "keypad" in node else node
                                  for node in respelled["nodes"]]
        return respelled

    @staticmethod
    def tools(tools: Any) -> Any:
        """A compiled artifact's ``tools`` with ``collect_digits``' keypad settings respelled."""
        if not isinstance(tools, list):
            return tools
        return [{**tool, "fields": {name: _respelled_block(spec) for name, spec in tool["fields"].items()}}
                if isinstance(tool, Mapping) and isinstance(tool.get("fields"), Mapping) else tool for tool in tools]

    @classmethod
    def compiled(cls, compiled: Mapping[str, Any]) -> dict[str, Any]:
        """A compiled artifact with its ``tools`` respelled."""
        return {**compiled, "tools": cls.tools(compiled["tools"])}


def _respelled_block(block: Any) -> Any:
    mode = block.get("ending_mode") if isinstance(block, Mapping) else None
    if isinstance(mode, str) and mode in ALIASES:
        return {**block, "ending_mode": ALIASES[mode]}
    return block


def _ending_mode(value: Any) -> tuple[Any, str | None]:
    mode = ending_mode(value)
    if mode is not None:
        return mode, None
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
