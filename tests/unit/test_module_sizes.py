"""A module owns one thing (STYLE.md: aim under 300 lines): no product module grows past 300
lines, so each feature lands in a room of its own instead of swelling a shared one."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("domain", "application", "adapters", "projections", "entrypoints")
LIMIT = 300


def test_no_product_module_is_over_300_lines():
    sizes = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
             for package in PRODUCT for path in (ROOT / package).rglob("*.py")}
    assert len(sizes) > 100  # the packages were found
    assert {path: lines for path, lines in sizes.items() if lines > LIMIT} == {}
