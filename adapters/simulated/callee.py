"""The simulated callee of ``mode=simulated`` calls: answers from its ``facts``, admits what it
does not know, and hangs up when the agent says goodbye. Deterministic."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from application.calling.ports import KeypadPress

UNKNOWN = "Sorry, I don't know that."
KEYPAD_KEYS = "0123456789*#"
GOODBYE = re.compile(r"\b(goodbye|bye)\b", re.IGNORECASE)


def spoken(value: Any) -> str:
    if isinstance(value, bool):
        return "Yes." if value else "No."
    if isinstance(value, (list, tuple)):
        return ", ".join(str(item) for item in value) if value else "None."
    return str(value)


class SimulatedCallee:
    """``questions``: a flow's question steps by their text ({text: {field, keypad}}): a fact asked
    by a keypad step is pressed, digit by digit, rather than said."""

    def __init__(self, facts: dict[str, Any] | None, persona: str | None = None,
                 questions: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self._facts = dict(facts or {})
        self.persona = persona
        # Longest first: a question whose text contains another's is matched as itself.
        self._questions = sorted((questions or {}).items(), key=lambda item: len(item[0]), reverse=True)

    def reply(self, agent_said: str) -> str | KeypadPress | None:
        if GOODBYE.search(agent_said):
            return None
        for text, step in self._questions:
            if text in agent_said:
                return self._answer(step)
        asked = agent_said.lower()
        # The longest matching field name wins ("call back time" before "time").
        for name in sorted(self._facts, key=len, reverse=True):
            if name.replace("_", " ").lower() in asked or name.lower() in asked:
                return spoken(self._facts[name])
        return UNKNOWN

    def _answer(self, step: Mapping[str, Any]) -> str | KeypadPress:
        field = step["field"]
        if field not in self._facts:
            return UNKNOWN
        keypad = step.get("keypad")
        if keypad:
            digits = "".join(ch for ch in str(self._facts[field]) if ch in KEYPAD_KEYS)
            return KeypadPress(field=field, digits=digits, masked=bool(keypad.get("masked", True)))
        return spoken(self._facts[field])
