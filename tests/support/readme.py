"""The README's own example requests, read from README.md, so the tests run what a new user runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[2] / "README.md"


def first_call_body() -> dict[str, Any]:
    """The JSON body of the README's first ``curl … -X POST …/v1/calls … -d '{…}'``."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r"-X POST localhost:8000/v1/calls .*?-d '(\{.*?\n\})'", text, flags=re.S)
    assert found, "README.md has no POST /v1/calls example"
    return json.loads(found.group(1))
