"""Faults injected from outside into a running ``callwright serve``: its embedded PostgreSQL
stopped, restarted or cut off, the server killed. Each test owns its server and its database."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e
