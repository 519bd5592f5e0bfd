"""TwiML documents for the instructions the live-call use cases give the carrier, built with the
``twilio`` library's ``VoiceResponse`` (its escaping and attribute spelling, not ours)."""

from __future__ import annotations

from twilio.twiml.voice_response import VoiceResponse

from application.calling.instructions import ConnectVoice, Dial, Gather, Hangup, Instruction, Record, Say

MEDIA_TYPE = "application/xml"


def _connect(response: VoiceResponse, instruction: ConnectVoice) -> None:
    connect = response.connect()
    if instruction.transport == "relay":
        socket = connect.conversation_relay(url=instruction.socket_url, language=instruction.language,
                                            voice=instruction.voice, dtmf_detection=True, interruptible=True)
    else:
        socket = connect.stream(url=instruction.socket_url)
    for name, value in instruction.parameters.items():
        socket.parameter(name=name, value=value)


def _add(response: VoiceResponse, instruction: Instruction) -> None:
    if isinstance(instruction, ConnectVoice):
        _connect(response, instruction)
    elif isinstance(instruction, Dial):
        recording = ({"record": "record-from-answer-dual", "recording_status_callback": instruction.recording_url,
                      "recording_status_callback_event": "completed"} if instruction.recording_url else {})
        whisper = {"url": instruction.whisper_url, "method": "POST"} if instruction.whisper_url else {}
        response.dial(action=instruction.action_url, method="POST", timeout=instruction.ring_seconds,
                      **recording).number(instruction.number, **whisper)
    elif isinstance(instruction, Gather):
        gather = response.gather(input="dtmf", num_digits=1, timeout=instruction.wait_seconds,
                                 action=instruction.action_url, method="POST", action_on_empty_result=True)
        gather.say(instruction.prompt)
    elif isinstance(instruction, Record):
        response.record(action=instruction.action_url, method="POST", max_length=instruction.max_seconds,
                        play_beep=True, transcribe=True, transcribe_callback=instruction.transcript_url)
    elif isinstance(instruction, Say):
        response.say(instruction.text)
    elif isinstance(instruction, Hangup):
        response.hangup()
    else:
        raise TypeError(f"no TwiML for {type(instruction).__name__}")


def render(*instructions: Instruction) -> str:
    response = VoiceResponse()
    for instruction in instructions:
        _add(response, instruction)
    return str(response.to_xml())
