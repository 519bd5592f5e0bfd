"""The scripted speech engine of the ``stream`` transport: offline, deterministic, instant.

It stands where a speech-to-text and text-to-speech service would: an utterance travels as its
UTF-8 bytes used as μ-law sample bytes, packed into 20 ms frames (160 samples at 8 kHz) and padded
with μ-law silence (``0xFF``, which UTF-8 never contains); an utterance ends after
``END_OF_UTTERANCE_FRAMES`` silent frames. A test carrier that speaks this way is understood
exactly, and the agent's replies come back in the same form. Real speech engines plug in behind
the same ``SpeechEngine`` port.
"""

from __future__ import annotations

FRAME_BYTES = 160  # 20 ms of μ-law at 8 kHz
SILENCE_BYTE = 0xFF
SILENCE = bytes([SILENCE_BYTE]) * FRAME_BYTES
END_OF_UTTERANCE_FRAMES = 5  # 100 ms of silence ends an utterance


def encode_utterance(text: str) -> list[bytes]:
    """The frames that say ``text``: its bytes, padded to whole frames (no trailing silence)."""
    data = text.encode("utf-8")
    frames = [data[i:i + FRAME_BYTES] for i in range(0, len(data), FRAME_BYTES)]
    if frames and len(frames[-1]) < FRAME_BYTES:
        frames[-1] = frames[-1] + bytes([SILENCE_BYTE]) * (FRAME_BYTES - len(frames[-1]))
    return frames


def is_silent(frame: bytes) -> bool:
    return frame.count(SILENCE_BYTE) == len(frame)


class UtteranceDecoder:
    """Feed inbound frames; ``feed`` returns a finished utterance once enough silence follows it."""

    def __init__(self, end_frames: int = END_OF_UTTERANCE_FRAMES) -> None:
        self.end_frames = end_frames
        self._buffer = bytearray()
        self._silent = 0

    @property
    def speaking(self) -> bool:
        """Speech has arrived that has not ended yet (barge-in detection)."""
        return bool(self._buffer)

    def feed(self, frame: bytes) -> str | None:
        if is_silent(frame):
            if not self._buffer:
                return None
            self._silent += 1
            if self._silent < self.end_frames:
                return None
            text = self._buffer.decode("utf-8", errors="replace")
            self._buffer.clear()
            self._silent = 0
            return text
        self._silent = 0
        self._buffer.extend(b for b in frame if b != SILENCE_BYTE)
        return None

    def flush(self) -> str | None:
        if not self._buffer:
            return None
        text = self._buffer.decode("utf-8", errors="replace")
        self._buffer.clear()
        self._silent = 0
        return text


class LoopbackSpeech:
    """The ``SpeechEngine`` port over this encoding (profile ``speech: "scripted"``)."""

    name = "scripted"
    instant = True  # no I/O, a few bytes per frame: may run on the event loop

    def listener(self) -> UtteranceDecoder:
        return UtteranceDecoder()

    def speak(self, text: str) -> list[bytes]:
        return encode_utterance(text)
