"""Where the key and the server come from, and what every request carries.

The key is the argument, else ``CALLWRIGHT_API_KEY``, else ``OPENPHN_API_KEY`` (the specification's
name): the same order as the ``callwright`` command line, so one environment serves both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import httpx

from callwright_client._version import __version__
from callwright_client.errors import ConfigurationError

KEY_VARIABLES = ("CALLWRIGHT_API_KEY", "OPENPHN_API_KEY")
BASE_URL_VARIABLE = "CALLWRIGHT_BASE_URL"
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
USER_AGENT = f"callwright-python/{__version__} httpx/{httpx.__version__}"


@dataclass(frozen=True)
class Settings:
    api_key: str = field(repr=False)  # never in a log line or a traceback
    base_url: str
    timeout: float
    max_retries: int
    backoff: float

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}", "User-Agent": USER_AGENT, "Accept": "application/json"}


def resolve(api_key: str | None, base_url: str | None, timeout: float, max_retries: int, backoff: float) -> Settings:
    """The settings of a client; ``ConfigurationError`` when no key is given or set."""
    key = api_key or next((os.environ[name] for name in KEY_VARIABLES if os.environ.get(name)), None)
    if not key:
        raise ConfigurationError(f"no API key: pass api_key= or set {' or '.join(KEY_VARIABLES)} (sk_live_…)")
    if max_retries < 0:
        raise ConfigurationError("max_retries must be 0 or more")
    url = (base_url or os.environ.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL).rstrip("/")
    return Settings(api_key=key, base_url=url, timeout=timeout, max_retries=max_retries, backoff=backoff)
