"""Voice routing settings: the tenant's (``PATCH /v1/tenants/me``), the operator's system defaults
(``PATCH /v1/admin/system-defaults``), and the lookup call creation reads them through.

The lookup is remembered by the accounts log head this process knows (``known_head``): this
process's own saves move it at once, and the HTTP server's watcher of the accounts log moves it
to every other process's changes within a poll (a fifth of a second; the full authentication path,
which reads ``head()``, too). So while no account changes, a call creation reads nothing; after a
change anywhere, the first creation of each tenant reads its tenant and the defaults once.
"""

from __future__ import annotations

from typing import Any

from application.accounts.app import Accounts
from application.errors import FieldError, NotFoundError
from application.principal import Principal
from domain import ids
from domain.accounts.system_defaults import SystemDefaults
from domain.accounts.tenant import Tenant
from domain.calls.engine_choice import VoiceDefaults, VoiceRouting, VoiceRoutingError, check_engine, weights_from

KEEP: Any = object()  # a PATCH field that was left out


def _field_error(loc: list[str | int], exc: VoiceRoutingError, value: Any) -> FieldError:
    return FieldError(loc, exc.message, code=exc.code, value=value)


# -- the tenant's settings ------------------------------------------------------------------------


def tenant_settings(accounts: Accounts, tenant_id: str) -> Tenant:
    tenant = accounts.find(Tenant, Tenant.create_id(tenant_id))
    if tenant is None:  # pragma: no cover - principals are read with their tenant
        raise NotFoundError(f"no tenant {tenant_id}", code="tenant_not_found")
    return tenant


def change_tenant_settings(accounts: Accounts, principal: Principal, *, voice_engine_default: Any = KEEP,
                           voice_ab_disabled: Any = KEEP) -> Tenant:
    """Change what was given (``voice_engine_default=None`` clears the tenant's default)."""
    now = accounts.ports.clock()

    def change(tenant: Tenant) -> None:
        engine = tenant.voice_engine_default if voice_engine_default is KEEP else voice_engine_default
        disabled = tenant.voice_ab_disabled if voice_ab_disabled is KEEP else voice_ab_disabled
        try:
            tenant.change_voice_settings(voice_engine_default=engine, voice_ab_disabled=disabled,
                                         by=principal.actor, now=now)
        except VoiceRoutingError as exc:
            raise _field_error(["body", "voice_engine_default"], exc, voice_engine_default) from exc

    return accounts.update(Tenant, Tenant.create_id(principal.tenant_id), change)


# -- the system defaults ----------------------------------------------------------------------------


def system_defaults(accounts: Accounts) -> SystemDefaults | None:
    """The operator's defaults as saved; ``None`` until first changed (``VoiceDefaults()`` applies)."""
    return accounts.find(SystemDefaults, SystemDefaults.create_id())


def change_system_defaults(accounts: Accounts, principal: Principal, *, voice_engine_default: Any = KEEP,
                           voice_ab_weights: Any = KEEP) -> SystemDefaults:
    """Change what was given; given weights replace all the weights. The caller checked the admin."""
    try:
        if voice_engine_default is not KEEP:
            check_engine(voice_engine_default)
    except VoiceRoutingError as exc:
        raise _field_error(["body", "voice_engine_default"], exc, voice_engine_default) from exc
    try:
        if voice_ab_weights is not KEEP:
            weights_from(voice_ab_weights)
    except VoiceRoutingError as exc:
        raise _field_error(["body", "voice_ab_weights"], exc, voice_ab_weights) from exc

    def attempt() -> SystemDefaults:
        now = accounts.ports.clock()
        defaults = system_defaults(accounts) or SystemDefaults(at=now)
        voice = defaults.voice
        changed = defaults.change_voice(
            voice_engine_default=voice.voice_engine_default if voice_engine_default is KEEP else voice_engine_default,
            voice_ab_weights=voice.weights_dict() if voice_ab_weights is KEEP else voice_ab_weights,
            by=principal.actor, now=now,
        )
        if changed:
            accounts.commit(defaults)  # a concurrent first change conflicts on the fixed id: retried
        return defaults

    return accounts.retry_on_conflict(attempt)


# -- the lookup of call creation ----------------------------------------------------------------------


def routing_for(accounts: Accounts, tenant_id: str) -> VoiceRouting:
    """What decides the engine of the tenant's next call, as of the head this process knows."""
    head = accounts.known_head
    remembered = accounts.lookups.get(("voice_routing", tenant_id), head)
    if remembered is not None:
        return remembered
    defaults = accounts.lookups.get(("voice_defaults",), head)
    if defaults is None:
        saved = system_defaults(accounts)
        defaults = saved.voice if saved is not None else VoiceDefaults()
        accounts.lookups.put(("voice_defaults",), head, defaults)
    tenant = None
    try:
        tenant = accounts.find(Tenant, Tenant.create_id(tenant_id))
    except ids.MalformedIdError:
        pass  # a made-up principal (the offline demo): no tenant settings
    routing = VoiceRouting(defaults=defaults,
                           tenant_default=tenant.voice_engine_default if tenant is not None else None,
                           ab_disabled=tenant.voice_ab_disabled if tenant is not None else False)
    accounts.lookups.put(("voice_routing", tenant_id), head, routing)
    return routing
