"""The simulated callee of ``mode=simulated`` calls: answers from its ``facts``, admits what it
does not know, and hangs up when the agent says goodbye. Deterministic."""

from __future__ import annotations

import re
from typing import Any

UNKNOWN = "Sorry, I don't know that."
GOODBYE = re.compile(r"\b(goodbye|bye)\b", re.IGNORECASE)


def spoken(value: Any) -> str:
    if isinstance(value, bool):
        return "Yes." if value else "No."
    if isinstance(value, (list, tuple)):
        return ", ".join(str(item) for item in value) if value else "None."
    return str(value)


class SimulatedCallee:
    def __init__(self, facts: dict[str, Any] | None, persona: str | None = None) -> None:
        self._facts = dict(facts or {})
        self.persona = persona

    def reply(self, agent_said: str) -> str | None:
        if GOODBYE.search(agent_said):
            return None
        asked = agent_said.lower()
        # The longest matching field name wins ("call back time" before "time").
        for name in sorted(self._facts, key=len, reverse=True):
            if name.replace("_", " ").lower() in asked or name.lower() in asked:
                return spoken(self._facts[name])
        return UNKNOWN
