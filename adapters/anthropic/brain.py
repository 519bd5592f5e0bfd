"""``AnthropicBrain``: the live agent. One streaming Messages API request per turn, with the
tools ``end_call`` and ``press_keys`` (and ``transfer_call``, a flow's ``collect_digits``, when they
apply); the session keeps a history the API accepts (every ``tool_use`` is answered by a
``tool_result`` at the start of the next user message)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import anthropic
import structlog

from adapters.anthropic.client import ModelAdapter, calling_model
from adapters.anthropic.prompts import CALL_ANSWERED, SILENCE, agent_system_prompt
from application.calling.ports import AgentTurn, CallBrief

END_CALL = "end_call"
PRESS_KEYS = "press_keys"
DEFAULT_MAX_TOKENS = 400  # a spoken turn is a sentence or two

TOOLS: list[dict[str, Any]] = [
    {
        "name": END_CALL,
        "description": "Hang up. Say goodbye in the same turn, before using this tool.",
        "input_schema": {
            "type": "object",
            "properties": {"reason": {"type": "string", "description": "Why the call ends, in a few words."}},
            "required": ["reason"],
        },
    },
    {
        "name": PRESS_KEYS,
        "description": "Press keys on the phone keypad, for example to choose an option in an automated menu.",
        "input_schema": {
            "type": "object",
            "properties": {"digits": {"type": "string", "pattern": "^[0-9*#]+$",
                                      "description": "The keys to press in order: 0-9, * and #."}},
            "required": ["digits"],
        },
    },
]

TRANSFER_CALL = "transfer_call"
TRANSFER_TOOL: dict[str, Any] = {
    "name": TRANSFER_CALL,
    "description": "Hand the call over to a person at the business (the number's transfer destinations). "
                   "Tell the caller you are transferring them in the same turn, before using this tool.",
    "input_schema": {
        "type": "object",
        "properties": {"brief": {"type": "string", "description": "What the person taking the call should know."}},
        "required": ["brief"],
    },
}

COLLECT_DIGITS = "collect_digits"


def collect_digits_tool(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A flow's keypad steps (compiled ``collect_digits``): the model opens the keypad for a field."""
    return {
        "name": COLLECT_DIGITS,
        "description": "Open the phone keypad for the caller to key in a field's digits, in the same turn as you "
                       "ask for them. You are told how many digits were keyed; never ask the caller to say them.",
        "input_schema": {"type": "object", "properties": {"field": {"type": "string", "enum": sorted(fields)}},
                         "required": ["field"]},
    }


_KEYPAD = re.compile(r"[0-9*#]+")

log = structlog.get_logger(__name__)


def _result(tool_use_id: str, text: str, *, error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}
    if error:
        block["is_error"] = True
    return block


class AnthropicSession:
    def __init__(self, client: anthropic.Anthropic, model: str, system: str, max_tokens: int,
                 tools: list[dict[str, Any]] | None = None, keypad_fields: Mapping[str, Any] | None = None) -> None:
        self._tools = tools if tools is not None else TOOLS
        self._keypad_fields = dict(keypad_fields or {})  # a flow's keypad steps: field -> keypad settings
        self.keypad_step: dict[str, Any] | None = None  # the one the model opened, until its digits come
        self._client = client
        self._model = model
        self._system = system
        self._max_tokens = max_tokens
        self._messages: list[dict[str, Any]] = []
        self._owed: list[dict[str, Any]] = []  # tool_result blocks for the last turn's tool calls
        self._usage = {"input_tokens": 0, "output_tokens": 0}

    @property
    def usage(self) -> dict[str, int]:
        return dict(self._usage)

    def respond(self, heard: str | None) -> AgentTurn:
        if self.keypad_step is not None and heard is not None:  # the digits stay out of the model's context
            heard = f"[The caller keyed in {len(heard)} digits for {self.keypad_step['field']}; they are recorded.]"
            self.keypad_step = None
        messages = self._with_user_turn(heard)
        with calling_model("agent_turn", self._model):
            with self._client.messages.stream(model=self._model, max_tokens=self._max_tokens, system=self._system,
                                              tools=self._tools, messages=messages) as stream:
                message = stream.get_final_message()
        self._usage["input_tokens"] += message.usage.input_tokens
        self._usage["output_tokens"] += message.usage.output_tokens
        turn, content, owed = self._read(message.content)
        # The history grows only once the request succeeded: a failed turn can be tried again.
        self._messages = [*messages, {"role": "assistant", "content": content}] if content else messages
        self._owed = owed
        log.info("agent.turn", model=self._model, stop_reason=message.stop_reason,
                 input_tokens=message.usage.input_tokens, output_tokens=message.usage.output_tokens,
                 tools=[block["name"] for block in content if block["type"] == "tool_use"])
        return turn

    def _with_user_turn(self, heard: str | None) -> list[dict[str, Any]]:
        if heard is None and not self._messages:
            text = CALL_ANSWERED
        else:
            text = (heard or "").strip() or SILENCE
        content = [*self._owed, {"type": "text", "text": text}]
        if self._messages and self._messages[-1]["role"] == "user":  # the model said nothing last turn
            last = self._messages[-1]
            return [*self._messages[:-1], {"role": "user", "content": [*last["content"], *content]}]
        return [*self._messages, {"role": "user", "content": content}]

    def _read(self, blocks: list[Any]) -> tuple[AgentTurn, list[dict[str, Any]], list[dict[str, Any]]]:
        said: list[str] = []
        keys = ""
        end = False
        transfer: str | None = None
        content: list[dict[str, Any]] = []
        owed: list[dict[str, Any]] = []
        for block in blocks:
            if block.type == "text":
                if block.text.strip():
                    said.append(block.text.strip())
                    content.append({"type": "text", "text": block.text})
            elif block.type == "tool_use":
                content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
                if block.name == END_CALL:
                    end = True
                    owed.append(_result(block.id, "The call is ending."))
                elif block.name == TRANSFER_CALL:
                    transfer = str(block.input.get("brief", ""))[:500]
                    owed.append(_result(block.id, "Transferring the call."))
                elif block.name == COLLECT_DIGITS and block.input.get("field") in self._keypad_fields:
                    field = str(block.input["field"])
                    self.keypad_step = {"field": field, "keypad": self._keypad_fields[field]}
                    owed.append(_result(block.id, f"The keypad is open for {field}."))
                elif block.name == PRESS_KEYS:
                    digits = "".join(str(block.input.get("digits", "")).split())
                    if _KEYPAD.fullmatch(digits):
                        keys += digits
                        owed.append(_result(block.id, f"Pressed {digits}."))
                    else:
                        owed.append(_result(block.id, "Nothing pressed: digits must use only 0-9, * and #.", error=True))
                else:
                    owed.append(_result(block.id, f"Unknown tool {block.name!r}.", error=True))
        turn = AgentTurn(say=" ".join(said) or None, press_keys=keys or None, end_call=end,
                         transfer=transfer is not None, transfer_brief=transfer or "")
        return turn, content, owed


class AnthropicBrain(ModelAdapter):
    name = "anthropic"
    default_max_tokens = DEFAULT_MAX_TOKENS

    def open(self, brief: CallBrief) -> AnthropicSession:
        today = brief.at or (self._clock() if self._clock is not None else None)
        compiled = {tool["name"]: tool for tool in (brief.flow or {}).get("tools", ())}
        keypad_fields = (compiled.get(COLLECT_DIGITS) or {}).get("fields") or {}
        tools = [*TOOLS, *([TRANSFER_TOOL] if brief.can_transfer else []),
                 *([collect_digits_tool(keypad_fields)] if keypad_fields else [])]
        return AnthropicSession(self._client, brief.model or self.model, agent_system_prompt(brief, today),
                                self._max_tokens, tools, keypad_fields)
