"""``TwilioCarrier``: the ``Carrier`` port over the ``twilio`` SDK (2010-04-01 REST API).

``base_url`` (``CALLWRIGHT_TWILIO_API_BASE_URL``) points every ``*.twilio.com`` request at another
server, through the SDK's documented injection point, a custom ``http_client`` (its ``edge`` and
``region`` settings cannot name localhost). Never logs or raises with the auth token.
"""

from __future__ import annotations

import re
from datetime import datetime

import requests
from twilio.base.exceptions import TwilioException, TwilioRestException
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client

from adapters.twilio.words import answered_by, call_status
from application.providers.ports import (
    AccountAccess,
    CarrierAccount,
    CarrierCall,
    CarrierRefusedError,
    CarrierUnreachableError,
    DialRequest,
)

TIMEOUT_SECONDS = 10.0
MAX_NUMBERS = 1000
_TWILIO_HOST = re.compile(r"^https://[a-z0-9.-]+\.twilio\.com(?=/|$)")
_INACTIVE = ("suspended", "closed")


class RebasedHttpClient(TwilioHttpClient):
    """The SDK's own HTTP client with ``https://<product>.twilio.com`` replaced by ``base_url``."""

    def __init__(self, base_url: str, *, timeout: float) -> None:
        super().__init__(pool_connections=True, timeout=timeout)
        self.base_url = base_url.rstrip("/")
        if self.session is not None:
            self.session.trust_env = False  # a fake on loopback: no proxies from the environment

    def request(self, method: str, url: str, *args: object, **kwargs: object):  # type: ignore[no-untyped-def,override]
        return super().request(method, _TWILIO_HOST.sub(self.base_url, url, count=1), *args, **kwargs)


class TwilioCarrier:
    def __init__(self, base_url: str | None = None, *, timeout: float = TIMEOUT_SECONDS) -> None:
        self.base_url = base_url
        self.timeout = timeout

    def client(self, account_sid: str, auth_token: str) -> Client:
        http = (RebasedHttpClient(self.base_url, timeout=self.timeout) if self.base_url
                else TwilioHttpClient(timeout=self.timeout))
        # environment={}: no TWILIO_* variable (edge, region, credentials) changes where this goes.
        return Client(account_sid, auth_token, http_client=http, environment={})

    def verify(self, account_sid: str, auth_token: str) -> CarrierAccount:
        account = self.client(account_sid, auth_token).api.v2010.accounts(account_sid)
        try:
            fetched = account.fetch()
            if fetched.status in _INACTIVE:
                raise CarrierRefusedError(f"the carrier account is {fetched.status}", code="carrier_account_inactive",
                                          field="account_sid")
            numbers = [(n.phone_number, n.friendly_name or n.phone_number)
                       for n in account.incoming_phone_numbers.list(limit=MAX_NUMBERS, page_size=100)]
        except TwilioRestException as exc:
            raise _refusal(exc) from None
        except requests.Timeout:
            raise CarrierUnreachableError(f"no answer within {self.timeout:g} s") from None
        except requests.RequestException as exc:
            raise CarrierUnreachableError(f"connection failed ({type(exc).__name__})") from None
        except TwilioException:  # a list page that was not a 200
            raise CarrierUnreachableError("the carrier answered a page of numbers with an error") from None
        return CarrierAccount(name=fetched.friendly_name or account_sid, numbers=numbers)

    # -- live calls -------------------------------------------------------------------------------

    def dial(self, account: AccountAccess, request: DialRequest) -> str:
        options: dict[str, object] = {
            "to": request.to, "from_": request.from_number, "url": request.twiml_url, "method": "POST",
            "status_callback": request.status_url, "status_callback_method": "POST",
            "status_callback_event": ["initiated", "ringing", "answered", "completed"],
            "timeout": request.ring_seconds,
        }
        if request.amd_url:
            options.update(machine_detection="DetectMessageEnd", async_amd="true",
                           async_amd_status_callback=request.amd_url, async_amd_status_callback_method="POST")
        if request.recording_url:
            options.update(record=True, recording_status_callback=request.recording_url,
                           recording_status_callback_method="POST", recording_status_callback_event=["completed"])
        call = self._calls(account, lambda c: c.calls.create(**options))
        return str(call.sid)

    def hang_up(self, account: AccountAccess, carrier_sid: str) -> None:
        self._calls(account, lambda c: c.calls(carrier_sid).update(status="completed"))

    def redirect(self, account: AccountAccess, carrier_sid: str, url: str) -> None:
        self._calls(account, lambda c: c.calls(carrier_sid).update(url=url, method="POST"))

    def start_recording(self, account: AccountAccess, carrier_sid: str, callback_url: str) -> None:
        self._calls(account, lambda c: c.calls(carrier_sid).recordings.create(
            recording_status_callback=callback_url, recording_status_callback_event=["completed"],
            recording_status_callback_method="POST"))

    def fetch_call(self, account: AccountAccess, carrier_sid: str) -> CarrierCall | None:
        try:
            return _carrier_call(self._calls(account, lambda c: c.calls(carrier_sid).fetch()))
        except CarrierRefusedError as exc:
            if exc.code == "carrier_not_found":
                return None
            raise

    def find_call(self, account: AccountAccess, to: str, from_number: str, since: datetime) -> list[CarrierCall]:
        found = self._calls(account, lambda c: c.calls.list(to=to, from_=from_number,
                                                            start_time_after=since.date(), limit=50))
        return [_carrier_call(call) for call in reversed(found)]

    def send_sms(self, account: AccountAccess, *, from_number: str, to: str, body: str) -> str:
        message = self._calls(account, lambda c: c.messages.create(to=to, from_=from_number, body=body))
        return str(message.sid)

    def _calls(self, account: AccountAccess, action):  # type: ignore[no-untyped-def]
        api = self.client(account.account_sid, account.auth_token).api.v2010.accounts(account.account_sid)
        try:
            return action(api)
        except TwilioRestException as exc:
            if exc.status == 404:
                raise CarrierRefusedError("the carrier knows no such call", code="carrier_not_found") from None
            if exc.status == 429 or exc.status >= 500:
                raise CarrierUnreachableError(f"the carrier answered {exc.status}") from None
            raise CarrierRefusedError(f"the carrier refused (HTTP {exc.status}, code {exc.code})",
                                      code=f"carrier_error_{exc.code}" if exc.code else "carrier_refused") from None
        except requests.Timeout:
            raise CarrierUnreachableError(f"no answer within {self.timeout:g} s") from None
        except requests.RequestException as exc:
            raise CarrierUnreachableError(f"connection failed ({type(exc).__name__})") from None
        except TwilioException as exc:
            raise CarrierUnreachableError(f"unexpected carrier answer ({type(exc).__name__})") from None


def _carrier_call(call) -> CarrierCall:  # type: ignore[no-untyped-def]
    """The SDK's call record in the service's words (an undocumented status stays ``unknown``: not final)."""
    duration = getattr(call, "duration", None)
    verdict = getattr(call, "answered_by", None)
    return CarrierCall(sid=str(call.sid), status=call_status(str(call.status)),
                       duration_seconds=int(duration) if duration not in (None, "") else None,
                       answered_by=answered_by(verdict) if verdict else None)


def _refusal(exc: TwilioRestException) -> Exception:
    if exc.status == 401:
        return CarrierRefusedError("the carrier did not accept this account SID and auth token",
                                   code="carrier_auth_failed")
    if exc.status == 404:
        return CarrierRefusedError("the carrier knows no such account for these credentials",
                                   code="carrier_account_not_found", field="account_sid")
    if exc.status == 429 or exc.status >= 500:
        return CarrierUnreachableError(f"the carrier answered {exc.status}")
    return CarrierRefusedError(f"the carrier refused the credentials (HTTP {exc.status}, code {exc.code})",
                               code="carrier_refused")
