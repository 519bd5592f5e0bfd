"""The REST endpoints the ``twilio`` SDK calls (2010-04-01 API), served on 127.0.0.1.

HTTP basic auth with the account SID and auth token, Twilio's JSON error shape, the list page
shape the SDK's paging reads (``incoming_phone_numbers``, ``next_page_uri``, ``page``,
``page_size``), calls create/fetch/update and messages create; every request is recorded.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

API = "/2010-04-01"
_ACCOUNT = re.compile(rf"^{API}/Accounts/(?P<sid>AC[0-9a-f]{{32}}|[^/]+)(?P<rest>/.*)?\.json$")


@dataclass
class FakeAccount:
    sid: str
    auth_token: str
    friendly_name: str = "Fake account"
    status: str = "active"
    numbers: list[tuple[str, str]] = field(default_factory=list)  # (e164, friendly name)


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    form: dict[str, list[str]]  # repeated keys kept
    account_sid: str | None  # from basic auth


def new_sid(prefix: str) -> str:
    return prefix + uuid.uuid4().hex


def _error(status: int, code: int, message: str) -> dict[str, Any]:
    return {"code": code, "message": message, "more_info": f"https://www.twilio.com/docs/errors/{code}",
            "status": status}


class FakeTwilio:
    """``base_url`` is ``http://127.0.0.1:<port>``; ``add_account`` configures who may sign in."""

    def __init__(self) -> None:
        self.accounts: dict[str, FakeAccount] = {}
        self.received: list[Received] = []
        self.calls: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # --- configuration -----------------------------------------------------------------------

    def add_account(self, *, friendly_name: str = "Fake account", numbers: list[tuple[str, str]] | None = None,
                    sid: str | None = None, auth_token: str | None = None, status: str = "active") -> FakeAccount:
        account = FakeAccount(sid=sid or new_sid("AC"), auth_token=auth_token or uuid.uuid4().hex,
                              friendly_name=friendly_name, status=status, numbers=list(numbers or []))
        with self._lock:
            self.accounts[account.sid] = account
        return account

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def requests_to(self, path_suffix: str, method: str | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.path.endswith(path_suffix) and method in (None, r.method)]

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self, port: int = 0) -> FakeTwilio:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                fake._handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                fake._handle(self, "POST")

            def do_DELETE(self) -> None:  # noqa: N802
                fake._handle(self, "DELETE")

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-twilio", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeTwilio:
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.stop()

    # --- requests ------------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        split = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length).decode() if length else ""
        form = parse_qs(raw, keep_blank_values=True)
        query = parse_qs(split.query, keep_blank_values=True)
        user = self._authenticated(handler.headers.get("Authorization"))
        with self._lock:
            self.received.append(Received(method, split.path, query, form, user.sid if user else None))
        status, body = self._route(method, split.path, query, form, user)
        payload = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def _authenticated(self, header: str | None) -> FakeAccount | None:
        if not header or not header.startswith("Basic "):
            return None
        try:
            sid, _, token = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return None
        with self._lock:
            account = self.accounts.get(sid)
        return account if account is not None and account.auth_token == token else None

    def _route(self, method: str, path: str, query: dict[str, list[str]], form: dict[str, list[str]],
               user: FakeAccount | None) -> tuple[int, dict[str, Any]]:
        if user is None:
            return 401, _error(401, 20003, "Authenticate")
        match = _ACCOUNT.match(path)
        if match is None:
            return 404, _error(404, 20404, f"The requested resource {path} was not found")
        sid, rest = match["sid"], match["rest"] or ""
        with self._lock:
            account = self.accounts.get(sid)
        # A main account may act on its sub-accounts; here every account stands alone.
        if account is None or account.sid != user.sid:
            return 404, _error(404, 20404, f"The requested resource {path} was not found")
        if method == "GET" and rest == "":
            return 200, self._account_json(account)
        if method == "GET" and rest == "/IncomingPhoneNumbers":
            return 200, self._numbers_page(account, path, query)
        if rest == "/Calls" and method == "POST":
            return self._create_call(account, form)
        call = re.fullmatch(r"/Calls/(CA[0-9a-f]{32})", rest)
        if call and method in ("GET", "POST"):
            return self._call(account, call[1], form if method == "POST" else None)
        if rest == "/Messages" and method == "POST":
            return self._create_message(account, form)
        return 404, _error(404, 20404, f"The requested resource {path} was not found")

    @staticmethod
    def _account_json(account: FakeAccount) -> dict[str, Any]:
        return {"sid": account.sid, "friendly_name": account.friendly_name, "status": account.status,
                "type": "Full", "owner_account_sid": account.sid, "auth_token": account.auth_token,
                "uri": f"{API}/Accounts/{account.sid}.json",
                "date_created": "Mon, 02 Nov 2026 10:00:00 +0000", "date_updated": "Mon, 02 Nov 2026 10:00:00 +0000"}

    @staticmethod
    def _numbers_page(account: FakeAccount, path: str, query: dict[str, list[str]]) -> dict[str, Any]:
        size = max(1, min(1000, int(query.get("PageSize", ["50"])[0])))
        page = max(0, int(query.get("Page", ["0"])[0]))
        wanted = query.get("PhoneNumber", [None])[0]
        numbers = [n for n in account.numbers if wanted in (None, n[0])]
        chunk = numbers[page * size:(page + 1) * size]
        records = [{"sid": "PN" + uuid.uuid5(uuid.NAMESPACE_URL, e164).hex, "account_sid": account.sid,
                    "phone_number": e164, "friendly_name": friendly,
                    "capabilities": {"voice": True, "sms": True, "mms": False, "fax": False}}
                   for e164, friendly in chunk]

        def uri(number: int) -> str:
            return f"{path}?{urlencode({'PageSize': size, 'Page': number})}"

        more = (page + 1) * size < len(numbers)
        return {"incoming_phone_numbers": records, "page": page, "page_size": size, "start": page * size,
                "end": page * size + max(0, len(chunk) - 1), "uri": uri(page), "first_page_uri": uri(0),
                "next_page_uri": uri(page + 1) if more else None,
                "previous_page_uri": uri(page - 1) if page > 0 else None}

    def _create_call(self, account: FakeAccount, form: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        first = {key: values[0] for key, values in form.items()}
        missing = [key for key in ("To", "From") if not first.get(key)]
        if missing:
            return 400, _error(400, 21201, f"No '{missing[0]}' number is specified")
        if not (first.get("Url") or first.get("Twiml") or first.get("ApplicationSid")):
            return 400, _error(400, 21205, "Url parameter is required")
        if first["From"] not in {e164 for e164, _ in account.numbers}:
            return 400, _error(400, 21210, "The source phone number provided is not yet verified for your account")
        sid = new_sid("CA")
        record = {"sid": sid, "account_sid": account.sid, "to": first["To"], "from": first["From"], "status": "queued",
                  "direction": "outbound-api", "duration": None, "answered_by": None,
                  "uri": f"{API}/Accounts/{account.sid}/Calls/{sid}.json", "parameters": form}
        with self._lock:
            self.calls[sid] = record
        return 201, self._public(record)

    def _call(self, account: FakeAccount, sid: str, update: dict[str, list[str]] | None) -> tuple[int, dict[str, Any]]:
        with self._lock:
            record = self.calls.get(sid)
            if record is None or record["account_sid"] != account.sid:
                return 404, _error(404, 20404, f"The requested resource /Calls/{sid}.json was not found")
            if update:
                status = update.get("Status", [None])[0]
                if status in ("canceled", "completed"):
                    record["status"] = status
                record.setdefault("updates", []).append(update)
            return 200, self._public(record)

    def _create_message(self, account: FakeAccount, form: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        first = {key: values[0] for key, values in form.items()}
        if not first.get("To"):
            return 400, _error(400, 21604, "A 'To' phone number is required")
        if not (first.get("Body") or first.get("MediaUrl")):
            return 400, _error(400, 21602, "Message body is required")
        sid = new_sid("SM")
        record = {"sid": sid, "account_sid": account.sid, "to": first["To"], "from": first.get("From"),
                  "body": first.get("Body"), "status": "queued", "direction": "outbound-api",
                  "uri": f"{API}/Accounts/{account.sid}/Messages/{sid}.json"}
        with self._lock:
            self.messages[sid] = record
        return 201, record

    @staticmethod
    def _public(record: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in record.items() if k not in ("parameters", "updates")}
