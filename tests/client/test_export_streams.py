"""``calls.export_csv`` into an open binary stream (``sys.stdout.buffer``, a pipe, ``io.BytesIO``):
a stream that can seek is rewound for a retry; one that cannot is never written twice, so a body
cut off after its first bytes ends in ``APIConnectionError`` without a second request."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import httpx
import pytest

from callwright_client import APIConnectionError, AsyncClient, Client
from tests.client.support import LOOPBACK

CSV = b"call_id,created_at\ncll_1,2026\n"


class BrokenStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body cut off after its first bytes."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        yield b"call_id,created_at\ncll_0,"
        raise httpx.ReadError("connection reset mid-body")

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        yield b"call_id,created_at\ncll_0,"
        raise httpx.ReadError("connection reset mid-body")


class Pipe:
    """A write-only stream that cannot seek, like a pipe."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, chunk: bytes) -> int:
        self.chunks.append(chunk)
        return len(chunk)

    def seekable(self) -> bool:
        return False


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("callwright_client._sync.time.sleep", lambda seconds: None)

    async def instantly(seconds: float) -> None:
        return None

    monkeypatch.setattr("callwright_client._async.asyncio.sleep", instantly)


def answers(*responses: httpx.Response) -> tuple[list[httpx.Response], list[httpx.Request], Any]:
    left, seen = list(responses), []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return left.pop(0)

    return left, seen, handler


def test_the_csv_streams_into_an_open_stream_which_stays_open() -> None:
    _, seen, handler = answers(httpx.Response(200, content=CSV))
    sink = io.BytesIO(b"kept:")
    sink.seek(0, io.SEEK_END)
    with Client("sk_live_x", LOOPBACK, transport=httpx.MockTransport(handler)) as client:
        assert client.calls.export_csv(sink, status="completed") == len(CSV)
    assert sink.getvalue() == b"kept:" + CSV and not sink.closed
    assert seen[0].url.path == "/v1/calls/export.csv" and seen[0].url.params["status"] == "completed"


def test_a_seekable_stream_is_rewound_for_the_retry_of_a_cut_off_body() -> None:
    left, _, handler = answers(httpx.Response(200, stream=BrokenStream()), httpx.Response(200, content=CSV))
    sink = io.BytesIO(b"head|")
    sink.seek(0, io.SEEK_END)
    with Client("sk_live_x", LOOPBACK, transport=httpx.MockTransport(handler)) as client:
        assert client.calls.export_csv(sink) == len(CSV)
    assert sink.getvalue() == b"head|" + CSV and left == []


def test_a_stream_that_cannot_seek_is_never_written_twice() -> None:
    left, seen, handler = answers(httpx.Response(200, stream=BrokenStream()), httpx.Response(200, content=CSV))
    pipe = Pipe()
    with Client("sk_live_x", LOOPBACK, transport=httpx.MockTransport(handler)) as client, \
            pytest.raises(APIConnectionError) as raised:
        client.calls.export_csv(pipe)
    assert "ReadError" in str(raised.value) and len(seen) == 1 and len(left) == 1
    assert b"".join(pipe.chunks) == b"call_id,created_at\ncll_0,"


def test_a_stream_that_cannot_seek_still_waits_out_an_error_answer() -> None:
    _, seen, handler = answers(httpx.Response(503, json={"error": {"code": "unavailable", "message": "later"}}),
                               httpx.Response(200, content=CSV))
    pipe = Pipe()
    with Client("sk_live_x", LOOPBACK, transport=httpx.MockTransport(handler)) as client:
        assert client.calls.export_csv(pipe) == len(CSV)
    assert b"".join(pipe.chunks) == CSV and len(seen) == 2  # nothing was written before the retry


def test_the_async_client_writes_into_streams_alike() -> None:
    _, _, handler = answers(httpx.Response(200, content=CSV))
    _, seen_cut, cut_handler = answers(httpx.Response(200, stream=BrokenStream()), httpx.Response(200, content=CSV))

    async def scenario() -> tuple[int, io.BytesIO, BaseException]:
        sink, pipe = io.BytesIO(), Pipe()
        async with AsyncClient("sk_live_x", LOOPBACK, transport=httpx.MockTransport(handler)) as client:
            written = await client.calls.export_csv(sink)
        async with AsyncClient("sk_live_x", LOOPBACK, transport=httpx.MockTransport(cut_handler)) as client:
            with pytest.raises(APIConnectionError) as raised:
                await client.calls.export_csv(pipe)
        return written, sink, raised.value

    written, sink, error = asyncio.run(scenario())
    assert written == len(CSV) and sink.getvalue() == CSV
    assert isinstance(error, APIConnectionError) and len(seen_cut) == 1
