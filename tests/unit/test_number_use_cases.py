"""The use cases a managed number may serve (SPEC.md "What the service does" 4, docs/numbers.md)."""

from __future__ import annotations

import pytest

from domain.numbers.use_cases import ALLOWED, USE_CASES, refusal


def test_the_five_supported_use_cases_each_say_what_they_cover():
    assert ALLOWED == ("receptionist", "appointments", "support", "after_hours", "order_status")
    assert all(USE_CASES[name].strip() for name in ALLOWED)
    assert all(refusal(name) is None for name in ALLOWED)


@pytest.mark.parametrize("given", ["debt_collection", "Receptionist", "", None, 3])
def test_anything_else_is_refused_with_the_supported_ones_and_the_way_out(given):
    reason = refusal(given)
    assert reason is not None and all(name in reason for name in ALLOWED) and "/v1/numbers/byo" in reason
