"""The values of the OpenAPI document's examples (docs_examples.py builds them): every request body
whole, the value of each answer field by name, and each download. One story throughout: Acme
Dental confirms tomorrow's appointment with a patient."""

from __future__ import annotations

from typing import Any

from entrypoints.http.schemas.wizard import ANSWER_EXAMPLES as WIZARD_ANSWERS
from entrypoints.http.schemas.wizard import REQUEST_EXAMPLES as WIZARD_REQUESTS

TIMESTAMP = "2026-03-08T14:30:00Z"
LATER = "2026-03-08T14:30:44Z"
CALL_ID = "cll_46ccef74c3fa4d6faf236adc582c43b0"
TENANT_ID = "ten_56c036b1351448f6a9f7e34e6791e750"
USER_ID = "usr_8d2f021f17514b20aae4df0e560b4152"
KEY_ID = "key_a7243e6100a8534caa9615ce52f49f61"
NUMBER_ID = "7c099ecf-fa26-449b-afb7-0c8248dfc735"
TEMPLATE_ID = "tpl_3359b93c340f47aca988a2f8af82c7c9"
FLOW_ID = "flw_0f57487e405f4de8ba8f894ee973d60e"
WEBHOOK_ID = "wh_5545d06505454ed1a635845cb538d5de"
SMS_TEMPLATE_ID = "smt_884360e246c04c55acc30e656207e1b3"
CALLEE, CALLER = "+442071838750", "+14155550100"
OUTCOME_SCHEMA = {"confirmed": {"type": "boolean", "description": "The patient will come"},
                  "arrival": {"type": "enum", "values": ["car", "bus", "on foot"], "optional": True}}
STORED_SCHEMA = {"confirmed": {"type": "boolean", "optional": False, "description": "The patient will come"},
                 "arrival": {"type": "enum", "optional": True, "values": ["car", "bus", "on foot"]}}
VOICEMAIL_SCHEMA = {"message": {"type": "string", "optional": False, "description": "What the caller said"},
                    "callback_number": {"type": "string", "optional": True}}
OBJECTIVE = "Confirm tomorrow's 3 pm appointment and ask how the patient will arrive"
GRAPH = {"start": "ask", "nodes": [
    {"id": "ask", "type": "question", "text": "Can you come tomorrow at 3 pm?", "field": "confirmed",
     "field_type": "boolean"},
    {"id": "bye", "type": "end", "text": "Thank you, see you tomorrow."}], "edges": [{"from": "ask", "to": "bye"}]}
SMS_TEMPLATE = {"name": "Directions", "body": "Hi, see you at 3 pm. Parking is behind the building.",
                "condition": {"field": "arrival", "op": "eq", "value": "car"}}
COMPILED = {"objective": 'Follow the call flow "Reminder" step by step and collect: confirmed.',
            "outcome_schema": {"confirmed": {"type": "boolean", "optional": False,
                                             "description": "Can you come tomorrow at 3 pm?"}},
            "tools": [{"name": "end_call"}],
            "system_prompt": 'You are running the call flow "Reminder". Follow its steps in order, starting at '
                             "step ask, and only move on to another step when the steps say so."}
SECRET_KEY = "sk_live_R1og66bFv2yJ8QeXw0aTn5LmKp3dZs7c"

# Request bodies by component: each one the service accepts.
REQUESTS: dict[str, Any] = {
    "CallCreateRequest": {"to": CALLEE, "objective": OBJECTIVE, "outcome_schema": OUTCOME_SCHEMA,
                          "consent_type": "prior_express", "metadata": {"patient_id": "P-1001"},
                          "mode": "simulated", "simulation": {"facts": {"confirmed": True, "arrival": "car"}}},
    "BatchRequest": {"objective": OBJECTIVE, "outcome_schema": OUTCOME_SCHEMA, "consent_type": "prior_express",
                     "mode": "simulated",

                     "items": [{"to": CALLEE, "metadata": {"patient_id": "P-1001"}},
                               {"to": "+442079460958", "metadata": {"patient_id": "P-1002"}}]},
    "TemplateCreateRequest": {"name": "Appointment reminder", "objective": OBJECTIVE, "outcome_schema": OUTCOME_SCHEMA,
                              "consent_type": "prior_express", "tools": [{"name": "end_call"}]},
    "FlowCreateRequest": {"name": "Reminder", "graph_json": GRAPH},
    "FlowPatchRequest": {"name": "Reminder, with a greeting"},
    "FlowPreviewRequest": {"graph_json": GRAPH},
    "ManagedNumberCreate": {"area_code": "415", "use_case": "appointments"},
    "ByoNumberCreate": {"e164": CALLER, "greeting": "Thanks for calling Acme Dental.", "timezone": "America/New_York",
                        "hours_json": {"mon": [["09:00", "12:30"], ["13:30", "17:30"]], "sat": [["10:00", "14:00"]]}},
    "NumberPatch": {"outcome_schema": OUTCOME_SCHEMA, "sms_enabled": True, "sms_templates": [SMS_TEMPLATE]},
    "SmsPreviewRequest": {"template_id": SMS_TEMPLATE_ID},
    "CarrierVerifyRequest": {"account_sid": "AC0123456789abcdef0123456789abcdef",
                             "auth_token": "0123456789abcdef0123456789abcdef"},
    "SelectNumberRequest": {"e164": CALLER},
    "SuppressionRequest": {"e164": "+442079460001", "reason": "Asked not to be called again"},
    "WebhookCreateRequest": {"url": "https://crm.example.com/hooks/callwright", "description": "CRM"},
    "WebhookPatchRequest": {"description": "CRM (production)"},
    "ApiKeyCreateRequest": {"name": "reminders service", "scopes": ["calls:create", "calls:read"]},
    "SignupRequest": {"email": "ada@example.com", "password": "a long passphrase", "name": "Ada"},
    "LoginRequest": {"email": "ada@example.com", "password": "a long passphrase"},
    "LogoutRequest": {"token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.c2lnbmF0dXJl"},
    "EmailRequest": {"email": "ada@example.com"},
    "TokenRequest": {"token": "kX3v9QpL2mRt7YzB"},
    "ResetPasswordRequest": {"token": "kX3v9QpL2mRt7YzB", "password": "another long passphrase"},
    "TenantSettingsPatch": {"voice_engine_default": "alpha_31"},
    "SystemDefaultsPatch": {"voice_ab_weights": {"alpha_25": 1.0, "alpha_31": 1.0}},
    **WIZARD_REQUESTS,
}

# Answer fields: ``Component.field`` first, then ``field``; a value outside a field's enum is not used.
VALUES: dict[str, Any] = {
    "CallCompleted.id": "evt_9f86d081884c7d659a2feaa0c55ad015", "call_id": CALL_ID, "tenant_id": TENANT_ID,
 "user_id": USER_ID, "key_id": KEY_ID,
    "template_id": TEMPLATE_ID, "flow_id": FLOW_ID, "endpoint_id": WEBHOOK_ID, "number_id": NUMBER_ID,
    "NumberView.id": NUMBER_ID, "TemplateResponse.id": TEMPLATE_ID, "FlowResponse.id": FLOW_ID,
    "FlowSummary.id": FLOW_ID, "WebhookEndpointResponse.id": WEBHOOK_ID, "WebhookSecretResponse.id": WEBHOOK_ID,
    "SmsTemplateView.id": SMS_TEMPLATE_ID, "AuditEvent.id": "aud_7cd6ed66f8935cf2b262c59f972105b0",
    "AuditHead.id": "aud_7cd6ed66f8935cf2b262c59f972105b0",
    "delivery_id": "dlv_2b7e151628aed2a6abf7158809cf4f3c", "delivery_uuid": "2b7e1516-28ae-d2a6-abf7-158809cf4f3c",
    "event_id": "evt_9f86d081884c7d659a2feaa0c55ad015", "event_type": "call.completed",
    "to": CALLEE, "from": CALLER, "e164": CALLER, "number": CALLER, "caller_number": CALLER,
    "friendly": "Main line", "account_name": "Acme Dental", "email": "ada@example.com", "name": "Ada",
    "objective": OBJECTIVE, "outcome": {"confirmed": True, "arrival": "car"}, "partial_outcome": None,
    "outcome_schema": STORED_SCHEMA, "voicemail_schema": VOICEMAIL_SCHEMA, "CompiledView.outcome_schema":
        COMPILED["outcome_schema"], "compiled": COMPILED, "graph_json": GRAPH, "system_prompt": COMPILED["system_prompt"],
    "transcript": "agent: Hello, this is Acme Dental about your appointment tomorrow at 3 pm. Can you come?\n"
                  "callee: Yes, I'll be there. I'm coming by car.\nagent: Thank you, see you tomorrow. Goodbye.",
    "confidence": 0.97, "duration_seconds": 42, "cost_voice": "0.0420", "cost_extraction": "0.0012",
    "cost_total": "0.0432", "cost_per_call": "0.0432", "error_code": None, "error_message": None,
    "recording_url": None, "created_at": TIMESTAMP, "started_at": "2026-03-08T14:30:02Z", "ended_at": LATER,
    "updated_at": TIMESTAMP, "at": TIMESTAMP, "occurred_at": TIMESTAMP, "added_at": TIMESTAMP,
    "voice_engine": "alpha_25", "voice_id": None, "language": "en-US", "consent_type": "prior_express",
    "answered_by": "human", "metadata": {"patient_id": "P-1001"}, "variables": {"first_name": "Ada"},
    "CallRecord.template_id": None, "CallRecord.flow_id": None, "flow_version": None, "routing": None, "sms": [],
    "CallCreated.status": "queued", "BatchItemResult.status": "queued", "BatchItemResult.error": None,
    "CarrierAccount.status": "verified", "CredentialStatus.status": "verified", "last4": "87ca",
    "StatusResponse.status": "ok", "RevokeResponse.status": "revoked", "DeliveryRetry.status": "pending",
    "ApiKeyListItem.status": "active", "DeliveryView.status": "delivered", "retry_requested_at": TIMESTAMP,
    "expires_at": None, "revoked_at": TIMESTAMP, "rotated_to": None, "rotated_from": None,
    "last_used_during_grace_at": None, "old_key_expires_at": "2026-03-09T14:30:00Z", "prefix": SECRET_KEY[:16],
    "secret": "whsec_RqdDnRXtMrC2epsfBIOdxLSW_E5eUbAeQNd60deHIb8", "ApiKeySecretResponse.secret": SECRET_KEY,
    "RotateResponse.secret": SECRET_KEY, "SignupResponse.secret": SECRET_KEY, "api_key": SECRET_KEY,
    "scopes": None, "number_ids": None,
    "ApiKeyEvent.type": "api_key.issued", "ApiKeyEvent.by": "signup", "CallEventView.type": "call.completed",
    "CallEventView.by": "callwright", "seq": 1, "AuditEvent.type": "api_key.issued", "actor": "signup",
    "subject": KEY_ID, "ApiKeyEvent.data": {"prefix": SECRET_KEY[:16], "name": "initial key"},
    "CallEventView.data": {"outcome": {"confirmed": True, "arrival": "car"}, "confidence": 0.97},
    "AuditEvent.data": {"name": "initial key", "prefix": SECRET_KEY[:16]}, "hash": "e96d9c8e" * 8,
    "prev_hash": "182d9006" * 8, "rows": 3, "url": "https://crm.example.com/hooks/callwright", "description": "CRM",
    "events": ["call.completed"], "deleted_at": None, "disabled": None, "rotation_grace_ends_at": None,
    "added_by": KEY_ID, "removed_by": None, "removed_at": None, "SuppressionRemoved.removed_at": TIMESTAMP,
    "reason": "Asked not to be called again", "SuppressionEntry.e164": "+442079460001",
    "SuppressionAdded.e164": "+442079460001", "SuppressionRemoved.e164": "+442079460001",
    "verification_status": "approved", "tier": "standard", "approved_at": TIMESTAMP, "approved_by": "usr_admin",
    "registered_at": TIMESTAMP, "auth": {"kind": "api_key", "key_id": KEY_ID, "scopes": None, "number_ids": None},
    "access_token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.c2lnbmF0dXJl", "token_type": "bearer",
    "expires_in": 86400, "next_cursor": None, "total": 1, "limit": 25, "offset": 0, "accepted": 1, "rejected": 0,
    "source": "byo", "greeting": "Thanks for calling Acme Dental.", "greeting_voice_id": None, "persona": None,
    "NumberView.voice_engine": None, "NumberView.flow_id": None, "timezone": "America/New_York",
    "hours_json": {"mon": [["09:00", "12:30"], ["13:30", "17:30"]], "sat": [["10:00", "14:00"]]},
    "overflow_action": "voicemail", "overflow_message": None, "voicemail_mode": "overflow_only",
    "voicemail_persona": None, "sms_brand_id": None, "disconnected_at": None, "transfer_max_attempts": 3,
    "transfer_destinations": [{"label": "Front desk", "e164": "+14155550199"}],
    "routes": [{"match": {"keypad": "2", "caller_prefix": None}, "action": "transfer", "destination": "Front desk"}],
    "sms_templates": [{"id": SMS_TEMPLATE_ID, **SMS_TEMPLATE}], "would_fire": True,
    "rendered_body": SMS_TEMPLATE["body"], "errors": [], "state": "published", "draft_version": 2,
    "published_version": 1, "FlowResponse.name": "Reminder", "FlowSummary.name": "Reminder",
    "TemplateResponse.name": "Appointment reminder", "context": None, "tools": [{"name": "end_call"}],
    "created_by": KEY_ID, "phone_numbers": [{"number": CALLER, "friendly": "Main line"}],
    "voice_engine_default": "alpha_25", "voice_ab_disabled": False, "voice_ab_weights": {"alpha_25": 1.0,
                                                                                         "alpha_31": 1.0},
    "updated_by": None, "mode": "live", "direction": "outbound", "has_outcome": True, "days": 7,
    "since": "2026-03-02", "until": "2026-03-08", "VoiceModelStats.mode": None,
    "followers": {"calls_list": {"lag_seconds": 0.0, "behind_events": 0, "oldest_unprocessed_at": None,
                                 "error": None}},
    "attempts": [{"attempt": 1, "manual": False, "response_status": 200, "response_body": "ok", "latency_ms": 84,
                  "error": None, "at": TIMESTAMP}], "next_attempt_at": None,
    # analytics: a week of one engine's calls
    "report": "volume-by-status", "start": "2026-03-01T00:00:00Z", "end": TIMESTAMP, "interval": None,
    "group_by": None, "filters": {}, "bucket": "2026-03-08T00:00:00Z", "calls": 120, "completed": 104,
    "failed": 16, "completion_rate": 0.8667, "mean_confidence": 0.91, "p50_duration_seconds": 38.0,
    "p95_duration_seconds": 95.0, "VolumeByStatusRow.status": "completed", "VolumeByStatusRow.bucket":
        "2026-03-08T00:00:00Z", "VolumeByStatusReport.interval": "day", "duration_calls": 118,
    "first_audio_calls": 118, "duration_seconds_p50": 38.0, "duration_seconds_p90": 71.0,
    "duration_seconds_p95": 95.0, "duration_seconds_p99": 140.0, "first_audio_ms_p50": 620.0,
    "first_audio_ms_p90": 910.0, "first_audio_ms_p95": 1040.0, "first_audio_ms_p99": 1400.0,
    "CostBreakdownRow.cost_voice": "5.0400", "CostBreakdownRow.cost_extraction": "0.1440",
    "CostBreakdownRow.cost_total": "5.1840", "mean_cost_voice": "0.0420", "mean_cost_extraction": "0.0012",
    "mean_cost_total": "0.0432", "TopFailuresRow.error_code": "no_answer", "failures": 9, "share_pct": 7.5,
    "completion_pct": 86.67, "confidence_calls": 104, "confidence_mean": 0.91,
    "confidence_histogram": [0, 0, 0, 0, 1, 2, 3, 8, 30, 60], "optional_fields": 104, "optional_filled": 81,
    "optional_filled_pct": 77.88, "extraction_failures": 2,
    **{f"{kind}{part}.report": name for kind, name in (
        ("VolumeByStatus", "volume-by-status"), ("LatencyPercentiles", "latency-percentiles"),
        ("CostBreakdown", "cost-breakdown"), ("TopFailures", "top-failures"), ("OutcomeQuality", "outcome-quality"))
       for part in ("Report", "Delta")},
    # the rest of the fields whose name alone does not tell
    "CallRecord.status": "completed", "CallSummary.status": "completed", "is_admin": False, "email_verified": True,
    "SignupResponse.verification_status": "pending_review", "ApiKeyListItem.name": "reminders service",
    "ApiKeySecretResponse.name": "reminders service", "RotateResponse.name": "reminders service",
    "old_key_id": "key_5d41402abc4b2a76b9719d911017c592", "RotateResponse.rotated_from":
        "key_5d41402abc4b2a76b9719d911017c592", "TemplateResponse.description": None, "published_at": TIMESTAMP,
    "version": 1, "max_lag_seconds": 5.0, "EngineStats.cost_total": "5.1840",
    **WIZARD_ANSWERS,
}


# Downloads by path: the first lines of each.
_ANALYTICS_CSV = {
    "volume-by-status": "bucket,status,calls\r\n2026-03-08T00:00:00Z,completed,104\r\n2026-03-08T00:00:00Z,failed,16\r\n",
    "latency-percentiles": "calls,duration_calls,duration_seconds_p50,duration_seconds_p90,duration_seconds_p95,"
                           "duration_seconds_p99,first_audio_calls,first_audio_ms_p50,first_audio_ms_p90,"
                           "first_audio_ms_p95,first_audio_ms_p99\r\n120,118,38.0,71.0,95.0,140.0,118,620,910,"
                           "1040,1400\r\n",
    "cost-breakdown": "calls,cost_voice,cost_extraction,cost_total,mean_cost_voice,mean_cost_extraction,"
                      "mean_cost_total\r\n120,5.0400,0.1440,5.1840,0.0420,0.0012,0.0432\r\n",
    "top-failures": "error_code,failures,calls,share_pct\r\nno_answer,9,120,7.5\r\nbusy,7,120,5.83\r\n",
    "outcome-quality": "calls,completed,completion_pct,confidence_calls,confidence_mean,"
                       + ",".join(f"confidence_histogram_{i}" for i in range(10))
                       + ",optional_fields,optional_filled,optional_filled_pct,extraction_failures\r\n"
                       "120,104,86.67,104,0.91,0,0,0,0,1,2,3,8,30,60,104,81,77.88,2\r\n",
}
DOWNLOADS: dict[str, str] = {
    "/v1/calls/export.csv": "call_id,created_at,to,from,objective,status,confidence,duration_seconds,cost_total,"
                            f"error_code,recording_url\r\n{CALL_ID},{TIMESTAMP},{CALLEE},{CALLER},Confirm tomorrow's "
                            "appointment,completed,0.97,42,0.0432,,\r\n",
    "/v1/audit-events/export.jsonl": '{"id":"aud_7cd6ed66f8935cf2b262c59f972105b0","tenant_id":"' + TENANT_ID
                                     + '","type":"tenant.approved","actor":"usr_admin","subject":"' + TENANT_ID
                                     + '","occurred_at":"' + TIMESTAMP + '","data":{},"prev_hash":"'
                                     + "182d9006" * 8 + '","hash":"' + "e96d9c8e" * 8 + '"}\n',
    **{f"/v1/analytics/{name}.csv": text for name, text in _ANALYTICS_CSV.items()},
}
