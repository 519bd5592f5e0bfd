"""Helpers for programs that use callwright: standard library only, safe to vendor."""

from callwright_client.webhooks import InvalidSignature, verify_signature

__all__ = ["InvalidSignature", "verify_signature"]
