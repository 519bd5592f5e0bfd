"""E-mail senders: a file outbox for local runs (``var/outbox``) and an in-memory one.

The log line names the file, never the body: bodies carry single-use tokens.
"""

from __future__ import annotations

import os
import threading
import uuid
from email.message import EmailMessage as MimeMessage
from pathlib import Path

import structlog

from application.ports import EmailMessage

log = structlog.get_logger(__name__)


class FileOutboxEmailSender:
    def __init__(self, directory: Path, sender: str = "callwright <no-reply@callwright.local>") -> None:
        self._directory = directory
        self._sender = sender

    def send(self, message: EmailMessage) -> None:
        self._directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        mime = MimeMessage()
        mime["From"] = self._sender
        mime["To"] = message.to
        mime["Subject"] = message.subject
        mime.set_content(message.body)
        path = self._directory / f"{uuid.uuid4().hex}.eml"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(bytes(mime))
        log.info("email.written", kind=message.kind, file=str(path))


class MemoryEmailSender:
    """Keeps messages in memory; used by tests and by the CLI when no outbox is wanted."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self._lock = threading.Lock()

    def send(self, message: EmailMessage) -> None:
        with self._lock:
            self.messages.append(message)

    def last_to(self, address: str, kind: str) -> EmailMessage | None:
        with self._lock:
            for message in reversed(self.messages):
                if message.to == address and message.kind == kind:
                    return message
        return None
