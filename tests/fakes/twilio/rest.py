"""The REST endpoints the ``twilio`` SDK calls (2010-04-01 API), served on 127.0.0.1.

HTTP basic auth with the account SID and auth token, Twilio's JSON error shape, the list page
shape the SDK's paging reads (``incoming_phone_numbers``, ``calls``, ``next_page_uri``, ``page``,
``page_size``), calls create/list/fetch/update, a call's recording start (``Calls/{Sid}/Recordings``) and
messages create; every request is recorded. Numbers on sale,
bought and released: ``numbers.NumberMarket`` (``market``).
A created call whose TwiML URL is on loopback is played by ``simulator.CallSimulation``.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from email.utils import parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.fakes.twilio.numbers import NumberMarket
from tests.fakes.twilio.simulator import CallRecord, CallSimulation, Scenario, is_loopback, new_sid, rfc2822

API = "/2010-04-01"
_ACCOUNT = re.compile(rf"^{API}/Accounts/(?P<sid>AC[0-9a-f]{{32}}|[^/]+)(?P<rest>/.*)?\.json$")
_TIME_FILTER = re.compile(r"(?P<field>StartTime|EndTime)(?P<op>[<>]?)")
_PAGING = ("Page", "PageSize", "PageToken")


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


def _error(status: int, code: int, message: str) -> dict[str, Any]:
    return {"code": code, "message": message, "more_info": f"https://www.twilio.com/docs/errors/{code}",
            "status": status}


class FakeTwilio:
    """``base_url`` is ``http://127.0.0.1:<port>``; ``add_account`` configures who may sign in.

    ``calls`` holds the REST resources; ``records`` what each simulated call did. Calls whose TwiML
    URL is not on loopback are never simulated: they stay ``queued``, as REST resources only.
    """

    def __init__(self) -> None:
        self.accounts: dict[str, FakeAccount] = {}
        self.received: list[Received] = []
        self.calls: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        self.records: dict[str, CallRecord] = {}
        self.default_scenario = Scenario()
        self._scenarios: dict[str, list[Scenario]] = {}
        self._simulations: dict[str, CallSimulation] = {}
        self._lock = threading.Lock()
        self.market = NumberMarket(self._lock, self.accounts)
        self._changed = threading.Condition(self._lock)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # --- configuration -----------------------------------------------------------------------

    # Crash tests: hold each call-create answer this long; with ``lose_creates`` the carrier never
    # creates the call at all (the request was lost).
    create_delay: float = 0.0
    lose_creates: bool = False
    # The same for number purchases (IncomingPhoneNumbers create): the number is bought at once and
    # the answer held this long; with ``lose_purchases`` nothing is bought.
    purchase_delay: float = 0.0
    lose_purchases: bool = False
    # Messages: to these numbers the carrier refuses (21610, unsubscribed recipient); while
    # ``messages_down`` it answers 503.
    refuse_messages_to: frozenset[str] = frozenset()
    messages_down: bool = False

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

    # --- the call simulator --------------------------------------------------------------------

    def script(self, to: str, *scenarios: Scenario) -> None:
        """Successive calls to ``to`` play ``scenarios`` in order; the last one repeats."""
        with self._lock:
            self._scenarios[to] = list(scenarios)

    def place_inbound(self, account: FakeAccount | str, *, to: str, from_: str, voice_url: str,
                      scenario: Scenario | None = None, status_callback: str | None = None,
                      method: str = "POST") -> str:
        """A call from ``from_`` to the account's number ``to``: TwiML from ``voice_url``, no AMD.

        The caller plays ``scenario``, else what ``script(from_, ...)`` set, else the default.
        """
        account_sid = account if isinstance(account, str) else account.sid
        with self._lock:
            token = self.accounts[account_sid].auth_token
        sid = new_sid("CA")
        resource = self._call_resource(sid, account_sid, to, from_, "inbound", {})
        options = {"Url": [voice_url], "Method": [method]}
        if status_callback:
            options |= {"StatusCallback": [status_callback], "StatusCallbackEvent": ["completed"]}
        self._simulate(resource, token, options, scenario or self._scenario_for(from_))()
        return sid

    def wait_for_call(self, to: str, timeout: float = 10.0, index: int = 0) -> CallRecord:
        """The ``index``-th simulated call to ``to`` (in creation order), once it exists."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._records_to(to)) > index, timeout=timeout):
                raise TimeoutError(f"no call #{index} to {to} within {timeout} s")
            return self._records_to(to)[index]

    def wait_finished(self, sid: str, timeout: float = 10.0) -> CallRecord:
        with self._changed:
            self._changed.wait_for(lambda: sid in self.records, timeout=timeout)
            record = self.records.get(sid)
        if record is None or not record.finished.wait(timeout):
            status = record.status if record else "unknown"
            raise TimeoutError(f"call {sid} still {status} after {timeout} s; "
                               f"callbacks {[(c.kind, c.status) for c in record.callbacks] if record else []}, "
                               f"notes {record.notes if record else []}")
        return record

    def dials_to(self, e164: str) -> int:
        """How many create-call requests named ``e164``, whatever their outcome."""
        with self._lock:
            return sum(1 for r in self.received
                       if r.method == "POST" and r.path.endswith("/Calls.json") and r.form.get("To", [""])[0] == e164)

    def _records_to(self, to: str) -> list[CallRecord]:
        return [r for r in self.records.values() if r.to == to]

    def _scenario_for(self, to: str) -> Scenario:
        with self._lock:
            queue = self._scenarios.get(to)
            if not queue:
                return self.default_scenario
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def _simulate(self, resource: dict[str, Any], auth_token: str, options: dict[str, list[str]],
                  scenario: Scenario) -> Callable[[], None]:
        """Registers the call's simulation; the returned function starts it."""
        sid = resource["sid"]
        record = CallRecord(sid=sid, account_sid=resource["account_sid"], to=resource["to"], from_=resource["from"],
                            direction=resource["direction"], params=resource.get("parameters", {}), scenario=scenario)
        simulation = CallSimulation(record, auth_token, options, lambda **fields: self._sync_call(sid, fields))
        with self._changed:
            self.records[sid] = record
            self._simulations[sid] = simulation
            self._changed.notify_all()
        return simulation.thread.start

    def _sync_call(self, sid: str, fields: dict[str, Any]) -> None:
        with self._lock:
            self.calls[sid].update(fields, date_updated=rfc2822())

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
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fake-twilio",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops the REST API only (``start(port)`` brings it back); simulated calls go on."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def close(self, timeout: float = 5.0) -> None:
        """Hangs up every simulated call still live, waits for their final callbacks, then stops."""
        with self._lock:
            simulations = list(self._simulations.values())
        for simulation in simulations:
            simulation.hang_up()
        deadline = time.monotonic() + timeout
        for simulation in simulations:
            if simulation.thread.ident is not None:
                simulation.thread.join(max(0.0, deadline - time.monotonic()))
        self.stop()

    def __enter__(self) -> FakeTwilio:
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.close()

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
        afterwards: list[Callable[[], None]] = []  # a new call rings once its creator holds the answer
        creating = method == "POST" and split.path.endswith("/Calls.json")
        buying = method == "POST" and split.path.endswith("/IncomingPhoneNumbers.json")
        if (creating and self.lose_creates) or (buying and self.lose_purchases):
            status, body = 500, _error(500, 20500, "An internal server error has occurred")  # nothing created
        else:
            status, body = self._route(method, split.path, query, form, user, afterwards)
        if creating and self.create_delay:
            time.sleep(self.create_delay)  # the answer is late: a crash test kills the dialer meanwhile
        if buying and self.purchase_delay:
            time.sleep(self.purchase_delay)
        payload = b"" if status == 204 else json.dumps(body).encode()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
        finally:
            for then in afterwards:
                then()

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
               user: FakeAccount | None, afterwards: list[Callable[[], None]]) -> tuple[int, dict[str, Any]]:
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
            return self._create_call(account, form, afterwards)
        if rest == "/Calls" and method == "GET":
            return 200, self._calls_page(account, path, query)
        call = re.fullmatch(r"/Calls/(CA[0-9a-f]{32})", rest)
        if call and method in ("GET", "POST"):
            return self._call(account, call[1], form if method == "POST" else None)
        recordings = re.fullmatch(r"/Calls/(CA[0-9a-f]{32})/Recordings", rest)
        if recordings and method == "POST":
            return self._start_recording(account, recordings[1], form)
        if (market := self.market.route(account, method, rest, query, form)) is not None:
            return market
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
    def _page(key: str, records: list[dict[str, Any]], path: str, query: dict[str, list[str]]) -> dict[str, Any]:
        size = max(1, min(1000, int(query.get("PageSize", ["50"])[0])))
        page = max(0, int(query.get("Page", ["0"])[0]))
        chunk = records[page * size:(page + 1) * size]
        filters = {name: values[0] for name, values in query.items() if name not in _PAGING}

        def uri(number: int) -> str:
            return f"{path}?{urlencode({**filters, 'PageSize': size, 'Page': number})}"

        more = (page + 1) * size < len(records)
        return {key: chunk, "page": page, "page_size": size, "start": page * size,
                "end": page * size + max(0, len(chunk) - 1), "uri": uri(page), "first_page_uri": uri(0),
                "next_page_uri": uri(page + 1) if more else None,
                "previous_page_uri": uri(page - 1) if page > 0 else None}

    def _numbers_page(self, account: FakeAccount, path: str, query: dict[str, list[str]]) -> dict[str, Any]:
        wanted = query.get("PhoneNumber", [None])[0]
        named = query.get("FriendlyName", [None])[0]
        records = [{"sid": "PN" + uuid.uuid5(uuid.NAMESPACE_URL, e164).hex, "account_sid": account.sid,
                    "phone_number": e164, "friendly_name": friendly,
                    "capabilities": {"voice": True, "sms": True, "mms": False, "fax": False}}
                   for e164, friendly in account.numbers if wanted in (None, e164) and named in (None, friendly)]
        return self._page("incoming_phone_numbers", records, path, query)

    def _calls_page(self, account: FakeAccount, path: str, query: dict[str, list[str]]) -> dict[str, Any]:
        """Newest first, filtered by ``To``, ``From``, ``Status`` and ``StartTime``/``EndTime`` (``>``: on or
        after, ``<``: on or before; a date or an ISO 8601 time)."""
        exact = {"To": "to", "From": "from", "Status": "status", "ParentCallSid": "parent_call_sid"}
        with self._lock:
            calls = [self._public(c) for c in reversed(self.calls.values()) if c["account_sid"] == account.sid]
        for name, values in query.items():
            if name in exact:
                calls = [c for c in calls if c.get(exact[name]) == values[0]]
            elif match := _TIME_FILTER.fullmatch(name):
                calls = [c for c in calls if _time_matches(c, match["field"], match["op"], values[0])]
        return self._page("calls", calls, path, query)

    def _call_resource(self, sid: str, account_sid: str, to: str, from_: str, direction: str,
                       form: dict[str, list[str]]) -> dict[str, Any]:
        now = rfc2822()
        resource = {"sid": sid, "account_sid": account_sid, "to": to, "from": from_,
                    "status": "queued" if direction != "inbound" else "ringing", "direction": direction,
                    "duration": None, "answered_by": None, "start_time": None, "end_time": None,
                    "date_created": now, "date_updated": now, "parent_call_sid": None, "price": None,
                    "price_unit": "USD", "api_version": "2010-04-01",
                    "uri": f"{API}/Accounts/{account_sid}/Calls/{sid}.json", "parameters": form}
        with self._lock:
            self.calls[sid] = resource
        return resource

    def _create_call(self, account: FakeAccount, form: dict[str, list[str]],
                     afterwards: list[Callable[[], None]]) -> tuple[int, dict[str, Any]]:
        first = {key: values[0] for key, values in form.items()}
        missing = [key for key in ("To", "From") if not first.get(key)]
        if missing:
            return 400, _error(400, 21201, f"No '{missing[0]}' number is specified")
        if not (first.get("Url") or first.get("Twiml") or first.get("ApplicationSid")):
            return 400, _error(400, 21205, "Url parameter is required")
        if first["From"] not in {e164 for e164, _ in account.numbers}:
            return 400, _error(400, 21210, "The source phone number provided is not yet verified for your account")
        record = self._call_resource(new_sid("CA"), account.sid, first["To"], first["From"], "outbound-api", form)
        if is_loopback(first.get("Url")) or first.get("Twiml"):
            afterwards.append(self._simulate(record, account.auth_token, form, self._scenario_for(first["To"])))
        return 201, self._public(record)

    def _call(self, account: FakeAccount, sid: str, update: dict[str, list[str]] | None) -> tuple[int, dict[str, Any]]:
        with self._lock:
            record = self.calls.get(sid)
            if record is None or record["account_sid"] != account.sid:
                return 404, _error(404, 20404, f"The requested resource /Calls/{sid}.json was not found")
            simulation = self._simulations.get(sid)
            if update:
                record.setdefault("updates", []).append(update)
        status = (update or {}).get("Status", [None])[0]
        url = (update or {}).get("Url", [None])[0]
        if status in ("canceled", "completed"):
            final = simulation.hang_up() if simulation is not None else status
            with self._lock:
                record["status"] = final
        elif url and simulation is not None:
            simulation.redirect(url, (update or {}).get("Method", ["POST"])[0])
        with self._lock:
            return 200, self._public(record)

    def _start_recording(self, account: FakeAccount, sid: str,
                         form: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        """Starts recording a call in progress; its ``RecordingStatusCallback`` is posted when the call ends."""
        with self._lock:
            record = self.calls.get(sid)
            simulation = self._simulations.get(sid)
        if record is None or record["account_sid"] != account.sid:
            return 404, _error(404, 20404, f"The requested resource /Calls/{sid}/Recordings.json was not found")
        recording_sid = simulation.start_recording(form) if simulation is not None else None
        if recording_sid is None:
            return 400, _error(400, 21220, "Call is not in-progress. Cannot create recording.")
        now = rfc2822()
        return 201, {"sid": recording_sid, "account_sid": account.sid, "call_sid": sid, "conference_sid": None,
                     "status": "in-progress", "channels": 2 if form.get("RecordingChannels") == ["dual"] else 1,
                     "source": "StartCallRecordingAPI", "track": (form.get("RecordingTrack") or ["both"])[0],
                     "start_time": now, "date_created": now, "date_updated": now, "duration": None,
                     "price": None, "price_unit": "USD", "error_code": None, "encryption_details": None,
                     "api_version": "2010-04-01",
                     "uri": f"{API}/Accounts/{account.sid}/Calls/{sid}/Recordings/{recording_sid}.json"}

    def _create_message(self, account: FakeAccount, form: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        first = {key: values[0] for key, values in form.items()}
        if not first.get("To"):
            return 400, _error(400, 21604, "A 'To' phone number is required")
        if not (first.get("Body") or first.get("MediaUrl")):
            return 400, _error(400, 21602, "Message body is required")
        if self.messages_down:
            return 503, _error(503, 20500, "Service unavailable")
        if first["To"] in self.refuse_messages_to:
            return 400, _error(400, 21610, "Attempt to send to unsubscribed recipient")
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


def _time_matches(call: dict[str, Any], field_name: str, op: str, wanted: str) -> bool:
    stamp = (call["start_time"] or call["date_created"]) if field_name == "StartTime" else call["end_time"]
    if not stamp:
        return False
    moment = parsedate_to_datetime(stamp)
    try:
        if len(wanted) == 10 or not op:  # a date, or a day for an exact match: compare calendar days (UTC)
            actual: date | datetime = moment.astimezone(timezone.utc).date()
            bound: date | datetime = date.fromisoformat(wanted[:10])
        else:
            actual, bound = moment, datetime.fromisoformat(wanted.replace("Z", "+00:00"))
            if bound.tzinfo is None:
                bound = bound.replace(tzinfo=timezone.utc)
    except ValueError:
        return False
    return actual >= bound if op == ">" else actual <= bound if op == "<" else actual == bound
