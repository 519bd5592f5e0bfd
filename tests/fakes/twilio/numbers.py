"""The fake carrier's number market (2010-04-01 API): ``AvailablePhoneNumbers/{Country}/Local``
searched by ``AreaCode``, ``IncomingPhoneNumbers`` bought (POST) and released (DELETE), in
Twilio's JSON shapes. Every area code has a few numbers on sale (``+1<NPA>55501<nn>``, fictional),
except those in ``sold_out`` (``999`` by default); a number some account holds is not on sale.
"""

from __future__ import annotations

import re
import threading
import uuid
from typing import Any, Protocol

from tests.fakes.twilio.simulator import rfc2822

API = "/2010-04-01"
POOL_SIZE = 5
_SEARCH = re.compile(r"/AvailablePhoneNumbers/(?P<country>[A-Z]{2})/Local")
_NUMBER = re.compile(r"/IncomingPhoneNumbers/(?P<sid>PN[0-9a-f]{32})")


class Account(Protocol):
    sid: str
    numbers: list[tuple[str, str]]


def number_sid(e164: str) -> str:
    """The sid the fake gives a number (the same in its IncomingPhoneNumbers list)."""
    return "PN" + uuid.uuid5(uuid.NAMESPACE_URL, e164).hex


def _error(status: int, code: int, message: str) -> dict[str, Any]:
    return {"code": code, "message": message, "more_info": f"https://www.twilio.com/docs/errors/{code}",
            "status": status}


def _friendly(e164: str) -> str:
    digits = e164[2:]
    return f"({digits[:3]}) {digits[3:6]}-{digits[6:]}"


class NumberMarket:
    def __init__(self, lock: threading.Lock, accounts: dict[str, Any]) -> None:
        self._lock = lock
        self._accounts = accounts
        self.sold_out: set[str] = {"999"}
        self.purchased: dict[str, dict[str, Any]] = {}  # sid -> the IncomingPhoneNumber resource
        self.released: list[dict[str, Any]] = []  # resources deleted, in order

    def route(self, account: Account, method: str, rest: str, query: dict[str, list[str]],
              form: dict[str, list[str]]) -> tuple[int, dict[str, Any]] | None:
        """The answer to a number-market request; None for any other request."""
        search = _SEARCH.fullmatch(rest)
        if search and method == "GET":
            return self._search(account, search["country"], query)
        if rest == "/IncomingPhoneNumbers" and method == "POST":
            return self._buy(account, {key: values[0] for key, values in form.items()})
        bought = _NUMBER.fullmatch(rest)
        if bought and method == "DELETE":
            return self._release(account, bought["sid"])
        return None

    def on_sale(self, area_code: str) -> list[str]:
        if area_code in self.sold_out or not re.fullmatch(r"[2-9][0-9]{2}", area_code):
            return []
        with self._lock:
            held = {e164 for account in self._accounts.values() for e164, _ in account.numbers}
        return [e164 for e164 in (f"+1{area_code}55501{n:02d}" for n in range(POOL_SIZE)) if e164 not in held]

    def _search(self, account: Account, country: str, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        if country not in ("US", "CA"):
            return 404, _error(404, 20404, f"The requested resource AvailablePhoneNumbers/{country} was not found")
        area_code = query.get("AreaCode", [""])[0]
        size = max(1, min(30, int(query.get("PageSize", ["30"])[0])))
        found = [{"friendly_name": _friendly(e164), "phone_number": e164, "lata": "722", "locality": "Fakeville",
                  "rate_center": "FAKEVILLE", "latitude": "37.780000", "longitude": "-122.400000", "region": "CA",
                  "postal_code": "94103", "iso_country": country, "address_requirements": "none", "beta": False,
                  "capabilities": {"voice": True, "SMS": True, "MMS": True}}
                 for e164 in (self.on_sale(area_code) if area_code else [])[:size]]
        uri = f"{API}/Accounts/{account.sid}/AvailablePhoneNumbers/{country}/Local.json"
        return 200, {"available_phone_numbers": found, "uri": uri + (f"?AreaCode={area_code}" if area_code else "")}

    def _buy(self, account: Account, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        e164 = form.get("PhoneNumber", "")
        if not e164:
            return 400, _error(400, 21421, "PhoneNumber is required")
        if e164 not in self.on_sale(e164[2:5] if e164.startswith("+1") else ""):
            return 400, _error(400, 21422, f"Phone number {e164} is not available")
        sid, now = number_sid(e164), rfc2822()
        resource = {
            "sid": sid, "account_sid": account.sid, "phone_number": e164,
            "friendly_name": form.get("FriendlyName") or _friendly(e164),
            "voice_url": form.get("VoiceUrl"), "voice_method": form.get("VoiceMethod", "POST"),
            "sms_url": form.get("SmsUrl", ""), "sms_method": form.get("SmsMethod", "POST"),
            "status_callback": form.get("StatusCallback", ""), "status_callback_method": "POST",
            "voice_fallback_url": None, "sms_fallback_url": "", "voice_application_sid": None,
            "sms_application_sid": "", "trunk_sid": None, "address_requirements": "none", "beta": False,
            "capabilities": {"voice": True, "sms": True, "mms": True, "fax": False}, "origin": "twilio",
            "status": "in-use", "emergency_status": "Inactive", "api_version": "2010-04-01",
            "date_created": now, "date_updated": now,
            "uri": f"{API}/Accounts/{account.sid}/IncomingPhoneNumbers/{sid}.json"}
        with self._lock:
            account.numbers.append((e164, resource["friendly_name"]))
            self.purchased[sid] = resource
        return 201, resource

    def _release(self, account: Account, sid: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            held = [(e164, name) for e164, name in account.numbers if number_sid(e164) == sid]
            if not held:
                return 404, _error(404, 20404, f"The requested resource /IncomingPhoneNumbers/{sid}.json was not found")
            account.numbers.remove(held[0])
            self.released.append(self.purchased.pop(sid, {"sid": sid, "phone_number": held[0][0]}))
        return 204, {}
