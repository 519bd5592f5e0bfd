"""``TwilioProvisioner``: the ``NumberProvisioner`` port on the service's managed Twilio
sub-account (AvailablePhoneNumbers Local by area code, IncomingPhoneNumbers create, list by friendly
name and delete).

Goes where ``TwilioCarrier`` goes (``CALLWRIGHT_TWILIO_API_BASE_URL``); never logs or raises with
the auth token.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import requests
from twilio.base.exceptions import TwilioException, TwilioRestException

from adapters.twilio.carrier import TIMEOUT_SECONDS, TwilioCarrier
from application.providers.ports import CarrierRefusedError, CarrierUnreachableError

T = TypeVar("T")
COUNTRY = "US"  # area codes are North American (NANP)
SEARCH_LIMIT = 5
# Twilio's answers to a purchase of a number no longer on sale (21422: not available, 21452: no
# numbers in the area code, 21421: invalid for purchase).
_SOLD = {21421, 21422, 21452}


class TwilioProvisioner:
    def __init__(self, account_sid: str, auth_token: str, *, base_url: str | None = None,
                 timeout: float = TIMEOUT_SECONDS) -> None:
        self.account_sid = account_sid
        self._auth_token = auth_token
        self._carrier = TwilioCarrier(base_url, timeout=timeout)

    def __repr__(self) -> str:
        return f"TwilioProvisioner(account_sid={self.account_sid!r})"

    def search(self, area_code: str) -> list[str]:
        found = self._on_account(lambda account: account.available_phone_numbers(COUNTRY).local.list(
            area_code=int(area_code), voice_enabled=True, sms_enabled=True, limit=SEARCH_LIMIT))
        return [str(n.phone_number) for n in found if n.phone_number]

    def purchase(self, e164: str, voice_url: str, sms_url: str, *, tag: str | None = None) -> str:
        named = {"friendly_name": tag} if tag is not None else {}
        bought = self._on_account(lambda account: account.incoming_phone_numbers.create(
            phone_number=e164, voice_url=voice_url, voice_method="POST", sms_url=sms_url, sms_method="POST", **named))
        return str(bought.sid)

    def tagged(self, tag: str) -> list[tuple[str, str]]:
        found = self._on_account(lambda account: account.incoming_phone_numbers.list(friendly_name=tag, limit=20))
        return [(str(n.phone_number), str(n.sid)) for n in found if n.phone_number and n.friendly_name == tag]

    def release(self, provider_sid: str) -> None:
        try:
            self._on_account(lambda account: account.incoming_phone_numbers(provider_sid).delete())
        except CarrierRefusedError as exc:
            if exc.code != "carrier_not_found":  # already released: what was asked holds
                raise

    def _on_account(self, action: Callable[[Any], T]) -> T:
        client = self._carrier.client(self.account_sid, self._auth_token)
        try:
            return action(client.api.v2010.accounts(self.account_sid))
        except TwilioRestException as exc:
            raise _refusal(exc.status, exc.code) from None
        except requests.Timeout:
            raise CarrierUnreachableError(f"no answer within {self._carrier.timeout:g} s") from None
        except requests.RequestException as exc:
            raise CarrierUnreachableError(f"connection failed ({type(exc).__name__})") from None
        except TwilioException as exc:  # a list page that was not a 200 carries the response
            response = exc.args[1] if len(exc.args) > 1 else None
            if isinstance(getattr(response, "status_code", None), int):
                raise _refusal(response.status_code, _error_code(response.text)) from None
            raise CarrierUnreachableError(f"unexpected carrier answer ({type(exc).__name__})") from None


def _error_code(text: str) -> int | None:
    try:
        code = json.loads(text).get("code")
    except (ValueError, AttributeError):
        return None
    return code if isinstance(code, int) else None


def _refusal(status: int, code: int | None) -> Exception:
    if status == 429 or status >= 500:
        return CarrierUnreachableError(f"the carrier answered {status}")
    if status == 401:
        return CarrierRefusedError("the carrier did not accept the managed account's credentials",
                                   code="carrier_auth_failed")
    if code in _SOLD:
        return CarrierRefusedError("the number is no longer available", code="carrier_number_unavailable")
    if status == 404:
        return CarrierRefusedError("the carrier knows no such resource", code="carrier_not_found")
    return CarrierRefusedError(f"HTTP {status}, code {code}", code=f"carrier_error_{code}" if code else "carrier_refused")
