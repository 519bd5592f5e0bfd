"""Managed numbers' wiring: the service's carrier sub-account (``CALLWRIGHT_MANAGED_ACCOUNT_SID``
and ``_AUTH_TOKEN``) and the URLs its numbers send calls and texts to. Never logs the token."""

from __future__ import annotations

import structlog

from adapters.twilio.provisioning import TwilioProvisioner
from application.calling.live_ports import CALLBACK_PREFIX
from application.numbers.provisioning import ManagedNumbering
from application.providers.ports import AccountAccess
from entrypoints.settings import Settings

log = structlog.get_logger(__name__)

# Inbound calls are routed by the number dialled (controllers/carrier.py ``/inbound``); inbound
# texts will be served beside them (no route yet: the carrier's requests get 404 until then).
VOICE_PATH = f"{CALLBACK_PREFIX}/inbound"
SMS_PATH = f"{CALLBACK_PREFIX}/sms"


def managed_account(settings: Settings) -> AccountAccess | None:
    """The managed sub-account's access (its numbers' live calls, texts and purchases); None unless
    both settings are given."""
    sid, token = settings.managed_account_sid, settings.managed_auth_token
    return AccountAccess(account_sid=sid, auth_token=token) if sid and token else None


def managed_numbering(settings: Settings) -> ManagedNumbering | None:
    """None (POST /v1/numbers answers 503) unless both settings are given; one alone is warned about."""
    account = managed_account(settings)
    if account is None:
        if settings.managed_account_sid or settings.managed_auth_token:
            missing = ("CALLWRIGHT_MANAGED_AUTH_TOKEN" if settings.managed_account_sid
                       else "CALLWRIGHT_MANAGED_ACCOUNT_SID")
            log.warning("managed_numbers.misconfigured", missing=missing,
                        hint="managed numbers need both CALLWRIGHT_MANAGED_ACCOUNT_SID and "
                             "CALLWRIGHT_MANAGED_AUTH_TOKEN; they stay disabled")
        return None
    if not settings.public_base_url:
        log.warning("managed_numbers.public_base_url_unset", base_url=settings.base_url,
                    hint="numbers bought now send their calls and texts to this address; set "
                         "CALLWRIGHT_PUBLIC_BASE_URL to the https address the carrier reaches")
    return ManagedNumbering(
        provisioner=TwilioProvisioner(account.account_sid, account.auth_token, base_url=settings.twilio_api_base_url),
        voice_url=settings.base_url + VOICE_PATH, sms_url=settings.base_url + SMS_PATH)
