"""Fixtures shared by the end-to-end modules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from tests.e2e.browser import chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium per module (``tests/e2e/browser.py``)."""
    with chromium() as started:
        yield started
