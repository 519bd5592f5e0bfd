"""Hooks of the schemathesis run in ``test_openapi_fuzz.py``, loaded by ``st run`` itself
(``SCHEMATHESIS_HOOKS=tests.e2e.openapi_fuzz_hooks``). The run's records arrive in the environment
variable ``OPENAPI_FUZZ`` as JSON: ``receiver`` (a loopback webhook receiver), ``own_key`` and
``spare_key`` (key ids), ``seeds`` (a real value per path parameter name) and ``tally`` (a file
that gets one line per answer: method, path, method sent, status).

- Path parameters are drawn from the generated ones or, as often, the seeded records, so that
  operations on one record get past their 404.
- Every request is checked just before it is sent (``before_call`` sees every phase's cases): a
  webhook URL or a push endpoint in a body always becomes the loopback receiver, so the server
  never sends to, or even resolves, any other host; the key making the requests is never revoked
  or rotated (the spare one is, instead).
"""

from __future__ import annotations

import json
import os
from typing import Any

import schemathesis
from hypothesis import strategies as st

_RUN: dict[str, Any] = json.loads(os.environ.get("OPENAPI_FUZZ", "{}"))
_SEEDS: dict[str, str] = _RUN.get("seeds", {})
# Body fields the server sends to or resolves (a webhook's url, a push subscription's endpoint).
_ADDRESS_FIELDS = frozenset({"url", "endpoint"})


@schemathesis.hook
def before_generate_path_parameters(context: schemathesis.HookContext, strategy: Any) -> Any:
    operation = context.operation
    names = [parameter.name for parameter in operation.path_parameters] if operation is not None else []
    if not names or not all(name in _SEEDS for name in names):
        return strategy
    return st.one_of(strategy, st.just({name: _SEEDS[name] for name in names}))


@schemathesis.hook
def before_call(context: schemathesis.HookContext, case: schemathesis.Case, kwargs: dict[str, Any]) -> None:
    if isinstance(case.body, (dict, list)):
        case.body = _loopback(case.body)
    if isinstance(case.path_parameters, dict) and case.path_parameters.get("key_id") == _RUN.get("own_key"):
        case.path_parameters = {**case.path_parameters, "key_id": _RUN["spare_key"]}


@schemathesis.hook
def after_call(context: schemathesis.HookContext, case: schemathesis.Case, response: schemathesis.Response) -> None:
    """One line per answer in the ``tally`` file: the operation, the method sent (the coverage phase
    also tries others on each path) and the status."""
    with open(_RUN["tally"], "a", encoding="utf-8") as tally:
        tally.write(f"{case.operation.method.upper()} {case.operation.path} {response.request.method} "
                    f"{response.status_code}\n")


def _loopback(value: Any) -> Any:
    """``value`` with every text under an address field, at any depth, replaced by the receiver's URL."""
    if isinstance(value, dict):
        return {key: _RUN["receiver"] if key in _ADDRESS_FIELDS and isinstance(item, str) else _loopback(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [_loopback(item) for item in value]
    return value
