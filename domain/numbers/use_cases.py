"""The compliance-gated use cases a managed number may be provisioned for (SPEC.md "What the
service does" 4): the closed list, what each covers, and the refusal of anything else. Pure."""

from __future__ import annotations

USE_CASES: dict[str, str] = {
    "receptionist": "Answer a business's calls: questions, messages, routing to staff",
    "appointments": "Book, confirm, move and cancel appointments for the business's customers",
    "support": "Help the business's existing customers with their accounts, orders and products",
    "after_hours": "Take calls when the business is closed: messages, urgent escalation",
    "order_status": "Tell callers where their order is, from the business's own records",
}
ALLOWED: tuple[str, ...] = tuple(USE_CASES)


def refusal(use_case: object) -> str | None:
    """None when ``use_case`` is supported; else the reason it is refused."""
    if isinstance(use_case, str) and use_case in USE_CASES:
        return None
    return (f"{use_case!r} is not a supported use case: managed numbers serve only the compliance-gated use "
            f"cases {', '.join(ALLOWED)}; for any other, bring your own number (POST /v1/numbers/byo)")
