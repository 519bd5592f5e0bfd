"""Where a download goes: a file named by a path (opened and rewritten on every attempt), or an
open binary stream of the caller's (``sys.stdout.buffer``, ``io.BytesIO``), rewound for a new
attempt when it can seek. A stream that cannot seek is never written twice: once a body was cut
off after its first bytes, the download ends in ``APIConnectionError`` instead of a retry."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Union

Target = Union[str, Path, "os.PathLike[str]", IO[bytes]]


class Sink:
    def __init__(self, target: Target) -> None:
        self.stream: Any = None if isinstance(target, (str, os.PathLike)) else target
        self.path = None if self.stream is not None else target
        self.start = self.stream.tell() if self.stream is not None and _seekable(self.stream) else None

    @property
    def rewritable(self) -> bool:
        """A cut-off body may be fetched again: the next attempt starts from the same place."""
        return self.path is not None or self.start is not None

    @contextmanager
    def attempt(self) -> Iterator[Any]:
        """The writable file of one attempt (a stream of the caller's stays open afterwards)."""
        if self.path is not None:
            with open(self.path, "wb") as out:
                yield out
            return
        if self.start is not None:
            self.stream.seek(self.start)
            self.stream.truncate()
        yield self.stream


def _seekable(stream: Any) -> bool:
    check = getattr(stream, "seekable", None)
    try:
        return bool(check and check())
    except (OSError, ValueError):
        return False
