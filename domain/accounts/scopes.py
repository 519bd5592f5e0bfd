"""API key scopes (SPEC.md Authentication §5). ``None`` on a key means every scope."""

from __future__ import annotations

from collections.abc import Iterable

CALLS_CREATE = "calls:create"
CALLS_READ = "calls:read"
WEBHOOKS_READ = "webhooks:read"
WEBHOOKS_WRITE = "webhooks:write"
NUMBERS_WRITE = "numbers:write"
PROVIDERS_WRITE = "providers:write"
# Additive scope for the audit trail (the spec leaves scopes of other routes open).
AUDIT_READ = "audit:read"
# Additive scope for the tenant's own settings, /v1/tenants/me (voice engine default, A/B switch).
TENANTS_WRITE = "tenants:write"
# Additive scopes for templates (docs/templates.md): reading them, and defining or deleting them.
TEMPLATES_READ = "templates:read"
TEMPLATES_WRITE = "templates:write"
# Additive scopes for flows (docs/flows.md): reading and previewing them, and drafting or publishing them.
FLOWS_READ = "flows:read"
FLOWS_WRITE = "flows:write"
# Additive scopes for Web Push (docs/push.md): listing the devices, and subscribing, unsubscribing
# and acknowledging notifications. The VAPID public key needs none.
PUSH_READ = "push:read"
PUSH_WRITE = "push:write"

ALL_SCOPES: tuple[str, ...] = (
    CALLS_CREATE,
    CALLS_READ,
    WEBHOOKS_READ,
    WEBHOOKS_WRITE,
    NUMBERS_WRITE,
    PROVIDERS_WRITE,
    AUDIT_READ,
    TENANTS_WRITE,
    TEMPLATES_READ,
    TEMPLATES_WRITE,
    FLOWS_READ,
    FLOWS_WRITE,
    PUSH_READ,
    PUSH_WRITE,
)


def unknown_scopes(scopes: Iterable[str]) -> list[str]:
    return [s for s in scopes if s not in ALL_SCOPES]


def allows(granted: tuple[str, ...] | None, required: str) -> bool:
    return granted is None or required in granted


def is_subset(requested: tuple[str, ...] | None, granted: tuple[str, ...] | None) -> bool:
    """A key may only mint keys that can do no more than itself."""
    if granted is None:
        return True
    if requested is None:
        return False
    return set(requested) <= set(granted)
