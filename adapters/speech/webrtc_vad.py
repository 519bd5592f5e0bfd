"""Voice activity from WebRTC's detector (PyPI ``webrtcvad-wheels``): the ``VoiceActivity`` port
over 20 ms μ-law 8 kHz frames, decoded to 16-bit PCM first (the detector takes linear PCM only)."""

from __future__ import annotations

import warnings

import webrtcvad

from application.speech.ports import FRAME_BYTES, SAMPLE_RATE

with warnings.catch_warnings():
    # Deprecated since 3.11, removed in 3.13 (PyPI ``audioop-lts`` replaces it there).
    warnings.simplefilter("ignore", DeprecationWarning)
    import audioop


class FrameLengthError(ValueError):
    """A frame that is not 20 ms of μ-law at 8 kHz."""


class WebRtcVoiceActivity:
    """``mode`` 0–3: higher filters more non-speech out (3 is the most aggressive)."""

    def __init__(self, mode: int = 2) -> None:
        if mode not in (0, 1, 2, 3):
            raise ValueError(f"mode must be 0, 1, 2 or 3, not {mode!r}")
        self.mode = mode
        self._vad = webrtcvad.Vad(mode)

    def is_speech(self, frame: bytes) -> bool:
        if len(frame) != FRAME_BYTES:
            raise FrameLengthError(f"a frame must be {FRAME_BYTES} bytes (20 ms of μ-law at "
                                   f"{SAMPLE_RATE} Hz), not {len(frame)}")
        return bool(self._vad.is_speech(audioop.ulaw2lin(frame, 2), SAMPLE_RATE))
