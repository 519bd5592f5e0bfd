"""A scripted fake of ``POST /v1/messages`` on 127.0.0.1: JSON and SSE streaming answers in the
shapes the SDK parses, every request recorded, and the history rules of the real API checked
(alternating roles, each ``tool_use`` answered by a ``tool_result`` first thing in the next turn)."""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_KEY = "sk-ant-fake-" + "k" * 32


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict[str, Any]
    id: str = field(default_factory=lambda: _id("toolu"))


@dataclass(frozen=True)
class Reply:
    """One assistant message: text first, then the tool calls."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    input_tokens: int = 20
    output_tokens: int = 10
    stop_reason: str | None = None  # derived when None: tool_use if any tool is called, else end_turn

    def content(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": self.text}] if self.text else []
        blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in self.tool_calls]
        return blocks

    @property
    def final_stop_reason(self) -> str:
        return self.stop_reason or ("tool_use" if self.tool_calls else "end_turn")


@dataclass(frozen=True)
class ErrorReply:
    status: int = 529
    type: str = "overloaded_error"
    message: str = "Overloaded"
    in_stream: bool = False  # as an SSE ``error`` event after ``message_start`` on a 200 answer


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-case names
    body: dict[str, Any]


def history_problems(body: dict[str, Any]) -> list[str]:
    """The checks of the real API this fake repeats, so a test sees an invalid history fail."""
    problems = [f"{key}: Field required" for key in ("model", "max_tokens", "messages") if key not in body]
    messages = body.get("messages") or []
    owed: set[str] = set()
    for index, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        expected = "user" if index % 2 == 0 else "assistant"
        if role != expected:
            problems.append(f"messages.{index}: roles must alternate, starting with user (got {role})")
        if not blocks and index != len(messages) - 1:
            problems.append(f"messages.{index}: all messages must have non-empty content")
        if any(b.get("type") == "text" and not b.get("text") for b in blocks):
            problems.append(f"messages.{index}: text content blocks must be non-empty")
        if role == "user":
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            leading = [b.get("tool_use_id") for b in blocks[:len(results)] if b.get("type") == "tool_result"]
            if set(results) - owed:
                problems.append(f"messages.{index}: tool_result blocks must answer a tool_use of the previous message")
            if owed and (set(leading) != owed or len(leading) != len(results)):
                problems.append(f"messages.{index}: tool_use ids were found without tool_result blocks immediately after")
            owed = set()
        else:
            owed = {b.get("id") for b in blocks if b.get("type") == "tool_use"}
    choice = body.get("tool_choice") or {}
    if choice.get("type") == "tool" and choice.get("name") not in {t.get("name") for t in body.get("tools") or []}:
        problems.append("tool_choice.name: no tool of that name")
    return problems


class FakeAnthropic:
    def __init__(self, api_key: str = DEFAULT_KEY) -> None:
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Reply | ErrorReply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------------
    def queue(self, *replies: Reply | ErrorReply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def say(self, text: str, *, input_tokens: int = 20, output_tokens: int = 10) -> Reply:
        reply = Reply(text=text, input_tokens=input_tokens, output_tokens=output_tokens)
        self.queue(reply)
        return reply

    def call_tool(self, name: str, input: dict[str, Any], *, text: str | None = None,
                  input_tokens: int = 20, output_tokens: int = 10) -> ToolCall:
        call = ToolCall(name, input)
        self.queue(Reply(text=text, tool_calls=(call,), input_tokens=input_tokens, output_tokens=output_tokens))
        return call

    def fail(self, status: int = 529, type: str = "overloaded_error", message: str = "Overloaded",
             *, in_stream: bool = False) -> None:
        self.queue(ErrorReply(status, type, message, in_stream))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def _next(self) -> Reply | ErrorReply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        return ErrorReply(500, "api_error", "the fake has no scripted reply left")

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAnthropic:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-anthropic", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
        pass

    @property
    def fake(self) -> FakeAnthropic:
        return self.server.fake  # type: ignore[attr-defined]

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.fake.requests.append(RecordedRequest(self.path, headers, body))
        if self.path.split("?")[0] != "/v1/messages":
            return self._error(ErrorReply(404, "not_found_error", f"no route {self.path}"))
        presented = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if presented != self.fake.api_key:
            return self._error(ErrorReply(401, "authentication_error", "invalid x-api-key"))
        if "anthropic-version" not in headers:
            return self._error(ErrorReply(400, "invalid_request_error", "anthropic-version: header is required"))
        problems = history_problems(body)
        if problems:
            return self._error(ErrorReply(400, "invalid_request_error", "; ".join(problems)))
        reply = self.fake._next()
        if isinstance(reply, ErrorReply) and not (reply.in_stream and body.get("stream")):
            return self._error(reply)
        if body.get("stream"):
            return self._stream(body, reply)
        assert isinstance(reply, Reply)
        self._json(200, _message(body, reply, reply.content(), reply.final_stop_reason, reply.output_tokens))

    # -- answers ---------------------------------------------------------------------------------
    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", _id("req"))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, error: ErrorReply) -> None:
        # A short retry-after keeps SDK retries fast; an unscripted request is never retried.
        retry = {"x-should-retry": "false"} if error.message.startswith("the fake") else {"retry-after-ms": "1"}
        self._json(error.status, {"type": "error", "error": {"type": error.type, "message": error.message},
                                  "request_id": _id("req")}, retry)

    def _stream(self, body: dict[str, Any], reply: Reply | ErrorReply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", _id("req"))
        self.end_headers()
        input_tokens = reply.input_tokens if isinstance(reply, Reply) else 0
        self._event("message_start", {"type": "message_start",
                                      "message": _message(body, None, [], None, 1, input_tokens)})
        if isinstance(reply, ErrorReply):
            self._event("error", {"type": "error", "error": {"type": reply.type, "message": reply.message}})
            return self._end()
        for index, block in enumerate(reply.content()):
            if block["type"] == "text":
                self._event("content_block_start", {"type": "content_block_start", "index": index,
                                                    "content_block": {"type": "text", "text": ""}})
                if index == 0:
                    self._event("ping", {"type": "ping"})
                for piece in _pieces(block["text"]):
                    self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                        "delta": {"type": "text_delta", "text": piece}})
            else:
                start = {**block, "input": {}}
                self._event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
                for piece in ["", *_pieces(json.dumps(block["input"]))]:
                    self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                        "delta": {"type": "input_json_delta", "partial_json": piece}})
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})
        self._event("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": reply.final_stop_reason, "stop_sequence": None},
                                      "usage": {"output_tokens": reply.output_tokens}})
        self._event("message_stop", {"type": "message_stop"})
        self._end()

    def _event(self, name: str, data: dict[str, Any]) -> None:
        chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        self.wfile.write(f"{len(chunk):X}\r\n".encode() + chunk + b"\r\n")
        self.wfile.flush()

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _message(body: dict[str, Any], reply: Reply | None, content: list[dict[str, Any]], stop_reason: str | None,
             output_tokens: int, input_tokens: int | None = None) -> dict[str, Any]:
    return {
        "id": _id("msg"), "type": "message", "role": "assistant", "model": body.get("model", "unknown"),
        "content": content, "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens if input_tokens is not None else (reply.input_tokens if reply else 0),
                  "output_tokens": output_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def _pieces(text: str, size: int = 12) -> list[str]:
    """Deltas of a few characters, as the real stream sends them."""
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]
