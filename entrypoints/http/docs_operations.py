"""Operation ids of the OpenAPI document: ``<resource>_<method>``, the names of the client's methods
(``client.calls.export_csv`` is ``calls_export_csv``), so a generated client reads like the
hand-written one (clients/python/callwright_client/resources.py). One table; a route missing
from it keeps its own id (its decorator's ``operation_id``, else the framework's
``<method>:<path>``, which a contract test refuses)."""

from __future__ import annotations

from litestar.openapi.spec import OpenAPI

from domain.analytics.reports import REPORTS
from entrypoints.http.docs import METHODS

OPERATION_IDS: dict[tuple[str, str], str] = {
    # calls
    ("POST", "/v1/calls"): "calls_create",
    ("POST", "/v1/calls/batch"): "calls_batch",
    ("GET", "/v1/calls"): "calls_list",
    ("GET", "/v1/calls/{call_id}"): "calls_get",
    ("GET", "/v1/calls/export.csv"): "calls_export_csv",
    ("POST", "/v1/calls/{call_id}/cancel"): "calls_cancel",
    ("GET", "/v1/calls/{call_id}/events"): "calls_events",
    # analytics: analytics_volume_by_status, analytics_volume_by_status_csv, …
    **{key: value for name in REPORTS for key, value in (
        (("GET", f"/v1/analytics/{name}"), f"analytics_{name.replace('-', '_')}"),
        (("GET", f"/v1/analytics/{name}.csv"), f"analytics_{name.replace('-', '_')}_csv"))},
    # templates
    ("GET", "/v1/templates"): "templates_list",
    ("POST", "/v1/templates"): "templates_create",
    ("GET", "/v1/templates/{template_id}"): "templates_get",
    ("DELETE", "/v1/templates/{template_id}"): "templates_delete",
    # flows
    ("GET", "/v1/flows"): "flows_list",
    ("POST", "/v1/flows"): "flows_create",
    ("GET", "/v1/flows/{flow_id}"): "flows_get",
    ("PATCH", "/v1/flows/{flow_id}"): "flows_update",
    ("POST", "/v1/flows/{flow_id}/preview"): "flows_preview",
    ("POST", "/v1/flows/{flow_id}/publish"): "flows_publish",
    # numbers
    ("GET", "/v1/numbers"): "numbers_list",
    ("POST", "/v1/numbers"): "numbers_create",
    ("GET", "/v1/numbers/{number_id}"): "numbers_get",
    ("PATCH", "/v1/numbers/{number_id}"): "numbers_update",
    ("DELETE", "/v1/numbers/{number_id}"): "numbers_release",
    ("POST", "/v1/numbers/byo"): "numbers_register_byo",
    ("DELETE", "/v1/numbers/byo/{number_id}"): "numbers_disconnect_byo",
    ("POST", "/v1/numbers/{number_id}/sms/preview"): "numbers_preview_sms",
    # webhooks
    ("GET", "/v1/webhooks"): "webhooks_list",
    ("POST", "/v1/webhooks"): "webhooks_create",
    ("GET", "/v1/webhooks/{endpoint_id}"): "webhooks_get",
    ("PATCH", "/v1/webhooks/{endpoint_id}"): "webhooks_update",
    ("DELETE", "/v1/webhooks/{endpoint_id}"): "webhooks_delete",
    ("POST", "/v1/webhooks/{endpoint_id}/rotate-secret"): "webhooks_rotate_secret",
    ("GET", "/v1/webhooks/{endpoint_id}/deliveries"): "webhooks_deliveries",
    ("POST", "/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}/retry"): "webhooks_retry",
    # suppressions
    ("GET", "/v1/suppressions"): "suppressions_list",
    ("POST", "/v1/suppressions"): "suppressions_add",
    ("DELETE", "/v1/suppressions/{e164}"): "suppressions_remove",
    # providers
    ("POST", "/v1/providers/carrier/verify"): "providers_verify_carrier",
    ("POST", "/v1/providers/select-number"): "providers_select_number",
    ("GET", "/v1/providers/{provider}"): "providers_get",
    # audit
    ("GET", "/v1/audit-events"): "audit_events_list",
    ("GET", "/v1/audit-events/head"): "audit_events_head",
    ("GET", "/v1/audit-events/export.jsonl"): "audit_events_export_jsonl",
    # API keys
    ("GET", "/auth/api-keys"): "api_keys_list",
    ("POST", "/auth/api-keys"): "api_keys_create",
    ("GET", "/auth/api-keys/{key_id}"): "api_keys_get",
    ("DELETE", "/auth/api-keys/{key_id}"): "api_keys_revoke",
    ("POST", "/auth/api-keys/{key_id}/rotate"): "api_keys_rotate",
    ("GET", "/auth/api-keys/{key_id}/events"): "api_keys_events",
    # auth
    ("POST", "/auth/signup"): "auth_signup",
    ("POST", "/auth/login"): "auth_login",
    ("POST", "/auth/logout"): "auth_logout",
    ("GET", "/auth/me"): "auth_me",
    ("POST", "/auth/verify-email"): "auth_verify_email",
    ("POST", "/auth/resend-verification"): "auth_resend_verification",
    ("POST", "/auth/forgot-password"): "auth_forgot_password",
    ("POST", "/auth/reset-password"): "auth_reset_password",
    # tenants
    ("GET", "/v1/tenants/me"): "tenants_get_settings",
    ("PATCH", "/v1/tenants/me"): "tenants_update_settings",
    # admin
    ("GET", "/v1/admin/users/{user_id}"): "admin_get_user",
    ("POST", "/v1/admin/users/{user_id}/approve"): "admin_approve_user",
    ("GET", "/v1/admin/system-defaults"): "admin_get_system_defaults",
    ("PATCH", "/v1/admin/system-defaults"): "admin_update_system_defaults",
    ("GET", "/v1/admin/voice-model-stats"): "admin_voice_model_stats",
    # health
    ("GET", "/healthz"): "health_check",
    ("GET", "/readyz"): "health_ready",
}


def name_operations(openapi: OpenAPI) -> None:
    for path, item in (openapi.paths or {}).items():
        for method in METHODS:
            operation = getattr(item, method)
            if operation is not None and (name := OPERATION_IDS.get((method.upper(), path))) is not None:
                operation.operation_id = name
