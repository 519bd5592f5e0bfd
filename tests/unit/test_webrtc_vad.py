"""The WebRTC voice activity adapter (issue 32) on generated μ-law audio: silence is not speech, a
voiced, syllable-like signal (a 150 Hz harmonic series, amplitude-modulated at 4 Hz) mostly is, and
a frame that is not 20 ms at 8 kHz is refused."""

from __future__ import annotations

import array
import math
import subprocess
import sys
import warnings
from functools import lru_cache
from pathlib import Path

import pytest

from adapters.speech.webrtc_vad import FrameLengthError, WebRtcVoiceActivity

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import audioop

RATE = 8000
SILENT_FRAME = b"\xff" * 160  # μ-law silence


@lru_cache(maxsize=None)
def voiced(seconds: float, f0: float = 150.0) -> list[bytes]:
    """A vowel-like sound: harmonics of ``f0`` falling off as 1/k, louder around 450–750 Hz, in
    syllables at 4 Hz; μ-law encoded and cut into 20 ms frames."""
    samples = array.array("h")
    for i in range(int(seconds * RATE)):
        t = i / RATE
        wave = sum(math.sin(2 * math.pi * f0 * k * t) / k * (1.5 if 3 <= k <= 5 else 1.0) for k in range(1, 20))
        envelope = 0.55 + 0.45 * math.sin(2 * math.pi * 4 * t)
        samples.append(int(max(-32767, min(32767, wave * 6000 * envelope))))
    data = audioop.lin2ulaw(samples.tobytes(), 2)
    return [data[i:i + 160] for i in range(0, len(data), 160)]


def test_silence_is_not_speech() -> None:
    vad = WebRtcVoiceActivity()
    assert not any(vad.is_speech(SILENT_FRAME) for _ in range(50))


@pytest.mark.parametrize("mode", [0, 2, 3])
def test_a_voiced_signal_is_mostly_speech(mode: int) -> None:
    vad = WebRtcVoiceActivity(mode)
    frames = voiced(1.0)
    assert len(frames) == 50
    assert sum(vad.is_speech(frame) for frame in frames) >= 45


def test_speech_then_silence_is_told_apart() -> None:
    vad = WebRtcVoiceActivity()
    verdicts = [vad.is_speech(frame) for frame in voiced(0.6) + [SILENT_FRAME] * 30]
    assert sum(verdicts[:30]) >= 27
    assert not any(verdicts[-20:])  # the detector's hangover is over well within 200 ms


@pytest.mark.parametrize("length", [0, 80, 159, 161, 320])
def test_a_frame_of_the_wrong_length_is_refused(length: int) -> None:
    with pytest.raises(FrameLengthError, match="160 bytes"):
        WebRtcVoiceActivity().is_speech(b"\xff" * length)


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="mode"):
        WebRtcVoiceActivity(4)


def test_the_adapter_imports_cleanly_with_deprecation_warnings_as_errors() -> None:
    # ``audioop`` warns on import since 3.11; the adapter keeps that warning to itself.
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c",
                           "import adapters.speech.webrtc_vad"], capture_output=True, text=True, timeout=30,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
