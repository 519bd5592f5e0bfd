"""The Python client of callwright: ``Client`` / ``AsyncClient`` for the HTTP API, and
``verify_signature`` for webhook receivers (standard library only, so a receiver may vendor
``webhooks.py`` alone). Depends on httpx and nothing of the server."""

from callwright_client._version import __version__
from callwright_client.client import AsyncClient, Client
from callwright_client.errors import (
    APIConnectionError,
    AuthenticationError,
    CallwrightError,
    ConfigurationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ValidationError,
    WaitTimeout,
)
from callwright_client.setup_types import Provisioned, PushNotification, PushSubscription, WizardDraft
from callwright_client.types import (
    ApiKey,
    BatchResult,
    Call,
    Flow,
    Number,
    Page,
    Suppression,
    Template,
    WebhookEndpoint,
)
from callwright_client.webhooks import InvalidSignature, verify_signature

__all__ = [
    "APIConnectionError", "ApiKey", "AsyncClient", "AuthenticationError", "BatchResult", "Call", "CallwrightError",
    "Client", "ConfigurationError", "ConflictError", "Flow", "InvalidSignature", "NotFoundError", "Number", "Page",
    "PermissionDeniedError", "Provisioned", "PushNotification", "PushSubscription", "RateLimitError", "ServerError",
    "Suppression", "Template", "ValidationError", "WaitTimeout", "WebhookEndpoint", "WizardDraft", "__version__",
    "verify_signature",
]
