"""TwiML documents for the instructions the live-call use cases give the carrier."""

from __future__ import annotations

from xml.sax.saxutils import quoteattr, escape

from application.calling.instructions import ConnectVoice, Dial, Hangup, Instruction, Say


def _params(parameters: dict[str, str]) -> str:
    return "".join(f"<Parameter name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in parameters.items())


def _verb(instruction: Instruction) -> str:
    if isinstance(instruction, ConnectVoice):
        if instruction.transport == "relay":
            attrs = (f" url={quoteattr(instruction.socket_url)} language={quoteattr(instruction.language)}"
                     f" voice={quoteattr(instruction.voice)} dtmfDetection=\"true\" interruptible=\"true\"")
            return f"<Connect><ConversationRelay{attrs}>{_params(instruction.parameters)}</ConversationRelay></Connect>"
        return f"<Connect><Stream url={quoteattr(instruction.socket_url)}>{_params(instruction.parameters)}</Stream></Connect>"
    if isinstance(instruction, Dial):
        return (f"<Dial action={quoteattr(instruction.action_url)} method=\"POST\" timeout=\"{instruction.ring_seconds}\">"
                f"<Number>{escape(instruction.number)}</Number></Dial>")
    if isinstance(instruction, Say):
        return f"<Say>{escape(instruction.text)}</Say>"
    if isinstance(instruction, Hangup):
        return "<Hangup/>"
    raise TypeError(f"no TwiML for {type(instruction).__name__}")


def render(*instructions: Instruction) -> str:
    body = "".join(_verb(i) for i in instructions)
    return f'<?xml version="1.0" encoding="UTF-8"?><Response>{body}</Response>'
