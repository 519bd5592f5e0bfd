"""Greeting audio kept in memory (the popo backend of unit tests, one process)."""

from __future__ import annotations

import threading


class MemoryGreetingAudio:
    def __init__(self) -> None:
        self._audio: dict[str, tuple[str, bytes]] = {}
        self._lock = threading.Lock()

    def put(self, number_id: str, sha256: str, audio: bytes) -> None:
        with self._lock:
            self._audio[number_id] = (sha256, audio)

    def get(self, number_id: str) -> tuple[str, bytes] | None:
        with self._lock:
            return self._audio.get(number_id)
