"""A steady load of keyed ``POST /v1/calls`` from a few client threads, every answer written down
(when it came, its status, how long it took, its ``Retry-After``), and ``/readyz`` probed beside it."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass(frozen=True)
class Answer:
    at: float  # monotonic, when the request was sent
    status: int  # 0: no HTTP answer (the client's timeout or a transport error)
    seconds: float
    retry_after: str | None
    code: str | None
    key: str
    call_id: str = ""


@dataclass
class Load:
    base_url: str
    headers: dict[str, str]
    body: dict[str, Any]
    clients: int = 4
    pause: float = 0.02
    timeout: float = 10.0
    answers: list[Answer] = field(default_factory=list)
    readiness: list[Answer] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Load:
        self._threads = [threading.Thread(target=self._create, daemon=True) for _ in range(self.clients)]
        self._threads.append(threading.Thread(target=self._probe, daemon=True))
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self.timeout + 5)

    def accepted_keys(self) -> set[str]:
        return {a.key for a in self.answers if a.status == 201}

    def _send(self, http: httpx.Client, method: str, path: str, key: str, **kwargs: Any) -> Answer:
        started = time.monotonic()
        try:
            response = http.request(method, path, **kwargs)
        except httpx.HTTPError:
            return Answer(started, 0, time.monotonic() - started, None, None, key)
        code, call_id = None, ""
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code >= 400 and isinstance(body, dict):
            code = (body.get("error") or {}).get("code")
        elif isinstance(body, dict):
            call_id = str(body.get("call_id") or "")
        return Answer(started, response.status_code, time.monotonic() - started,
                      response.headers.get("retry-after"), code, key, call_id)

    def _create(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=self.timeout, trust_env=False) as http:
            key = uuid.uuid4().hex
            while not self._stop.is_set():
                answer = self._send(http, "POST", "/v1/calls", key, json=self.body,
                                    headers={**self.headers, "Idempotency-Key": key})
                with self._lock:
                    self.answers.append(answer)
                if answer.status in (201, 422, 409):
                    key = uuid.uuid4().hex  # an answer: the next call; otherwise retry with the same key
                time.sleep(self.pause)

    def _probe(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=self.timeout, trust_env=False) as http:
            while not self._stop.is_set():
                answer = self._send(http, "GET", "/readyz", "")
                with self._lock:
                    self.readiness.append(answer)
                time.sleep(0.25)


def rows(http: httpx.Client, path: str, headers: dict[str, str], *, limit: int = 200) -> Iterator[dict[str, Any]]:
    """Every row of a ``{data, next_cursor}`` list, page after page; a page that is not a 200
    fails the caller's check."""
    cursor = None
    while True:
        page = http.get(path, params={"limit": limit, **({"cursor": cursor} if cursor else {})}, headers=headers)
        assert page.status_code == 200, page.text
        body = page.json()
        yield from body["data"]
        cursor = body.get("next_cursor")
        if not cursor:
            return
