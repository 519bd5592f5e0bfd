"""When a failed request is sent again, and after how long.

429 is always retried: the server refuses it before doing anything. A 5xx or a dropped connection
is retried only when the request is *replay-safe*: a read or an edit, a create whose route honours
``Idempotency-Key`` (``POST /v1/calls``, its batch, ``POST /v1/wizard/provision``), or a POST that
changes nothing more when sent twice (see _operations), because the server may have acted before
the answer was lost and a second create would otherwise dial a second call. The one exception is
503 with ``Retry-After``: the server says it did nothing (``database_unavailable``). A connection
that was never made is always retried: nothing reached the server. A 409 with ``Retry-After`` on a
replay-safe request is retried too: the server is still working on the first request of that
``Idempotency-Key`` (``provision_in_progress`` of ``POST /v1/wizard/provision``), and the same
request sent after ``Retry-After`` answers its result; any other 409 is final.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping

import httpx

MAX_DELAY = 30.0
NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """``Retry-After`` in seconds (a number, or an HTTP date), or None when absent or unreadable."""
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def status_is_retryable(response: httpx.Response, replay_safe: bool) -> bool:
    status = response.status_code
    if status == 429:
        return True
    if status >= 500:
        return replay_safe or (status == 503 and "Retry-After" in response.headers)
    if status == 409:
        return replay_safe and "Retry-After" in response.headers
    return False


def error_is_retryable(error: httpx.TransportError, replay_safe: bool) -> bool:
    if isinstance(error, NEVER_SENT):
        return True
    return replay_safe and isinstance(error, TRANSIENT)


def delay(attempt: int, backoff: float, retry_after: float | None = None) -> float:
    """Seconds before retry number ``attempt + 1``: the server's ``Retry-After`` when it gave one,
    else ``backoff * 2**attempt``; never more than 30 s."""
    wanted = retry_after if retry_after is not None else backoff * (2 ** attempt)
    return min(MAX_DELAY, max(0.0, wanted))
