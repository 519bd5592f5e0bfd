"""Provider credentials (SPEC.md Providers): verify with the carrier then store sealed, choose the
caller number, show ``{status, last4}``. Only the carrier (Twilio) has routes in this slice; other
providers' credentials could be stored under their own name but calls never route through them."""

from __future__ import annotations

import re

from application.calling.app import Calling
from application.errors import NotFoundError, UpstreamUnavailableError, ValidationFailedError
from application.principal import Principal
from application.providers.ports import Carrier, CarrierRefusedError, CarrierUnreachableError
from application.ports import SecretBox
from domain.errors import NumberNotInAccountError
from domain.providers.credential import NOT_CONFIGURED, TWILIO, ProviderCredential

# Names accepted by GET /v1/providers/{provider}: the carrier is Twilio.
PROVIDER_NAMES = {"carrier": TWILIO, TWILIO: TWILIO}
_ACCOUNT_SID = re.compile(r"^AC[0-9a-fA-F]{32}$")


def credential_of(calling: Calling, tenant_id: str, provider: str = TWILIO) -> ProviderCredential | None:
    return calling.find(ProviderCredential, ProviderCredential.create_id(tenant_id, provider))


def verify(calling: Calling, principal: Principal, carrier: Carrier, box: SecretBox, *, account_sid: str,
           auth_token: str) -> ProviderCredential:
    """Ask the carrier first; only credentials it accepted are stored (token sealed)."""
    if not _ACCOUNT_SID.match(account_sid):
        raise ValidationFailedError([(["body", "account_sid"], "account_sid must look like AC followed by 32 hex digits",
                                      "invalid_account_sid", account_sid)])
    try:
        account = carrier.verify(account_sid, auth_token)
    except CarrierRefusedError as exc:
        value = account_sid if exc.field == "account_sid" else None  # never echo the token
        raise ValidationFailedError([(["body", exc.field], exc.message, exc.code, value)]) from exc
    except CarrierUnreachableError as exc:
        raise UpstreamUnavailableError(f"the carrier could not be reached to verify the credentials: {exc}; "
                                       "nothing was stored, try again", code="carrier_unreachable") from exc
    facts = {"account_sid": account_sid, "sealed_token": box.seal(auth_token), "last4": auth_token[-4:],
             "account_name": account.name,
             "numbers": [{"number": number, "friendly": friendly} for number, friendly in account.numbers]}

    def attempt() -> ProviderCredential:
        now = calling.ports.clock()
        credential = credential_of(calling, principal.tenant_id)
        if credential is None:
            credential = ProviderCredential(tenant_id=principal.tenant_id, provider=TWILIO, by=principal.actor,
                                            at=now, **facts)
        else:
            credential.reverify(by=principal.actor, at=now, **facts)
        calling.commit(credential)
        return credential

    return calling.retry_on_conflict(attempt)


def select_number(calling: Calling, principal: Principal, e164: str) -> ProviderCredential:
    def attempt() -> ProviderCredential:
        credential = credential_of(calling, principal.tenant_id)
        if credential is None or not credential.verified:
            raise ValidationFailedError([(["body", "e164"], "verify carrier credentials first "
                                          "(POST /v1/providers/carrier/verify)", "carrier_not_configured", e164)])
        try:
            credential.select_number(e164, by=principal.actor, at=calling.ports.clock())
        except NumberNotInAccountError as exc:
            raise ValidationFailedError([(["body", "e164"], exc.message, exc.code, e164)]) from exc
        calling.commit(credential)
        return credential

    return calling.retry_on_conflict(attempt)


def status(calling: Calling, tenant_id: str, provider: str) -> tuple[str, str | None]:
    """``(status, last4)`` of the stored credential; ``not_configured`` when there is none."""
    name = PROVIDER_NAMES.get(provider)
    if name is None:
        raise NotFoundError(f"no provider {provider!r}; known: {', '.join(sorted(PROVIDER_NAMES))}",
                            code="provider_not_found")
    credential = credential_of(calling, tenant_id, name)
    if credential is None:
        return NOT_CONFIGURED, None
    return credential.status, credential.last4

