"""The Call aggregate is one class (issue 31 item 1): its commands and events in one place, with
one base, so a reader finds every rule of a call without following mixins."""

from __future__ import annotations

from domain.base import TenantAggregate
from domain.calls.call import Call


def test_call_has_one_base():
    assert Call.__bases__ == (TenantAggregate,)


def test_every_event_keeps_its_stored_topic():
    """Stored events name their class (``domain.calls.call:Call.<Name>``); the class must answer to it."""
    events = [value for value in vars(Call).values() if isinstance(value, type) and hasattr(value, "mutate")]
    assert len(events) >= 29
    assert {f"{e.__module__}:{e.__qualname__}".rsplit(".", 1)[0] for e in events} == {"domain.calls.call:Call"}


def loosely_typed_attributes() -> dict[str, str]:
    """``Call``'s attributes whose type says ``Any`` (a dict or list of anything): from the
    annotations of ``__init__``'s assignments, or of the parameter an attribute is assigned from."""
    import ast
    import inspect

    init = next(node for node in ast.walk(ast.parse(inspect.getsource(Call)))
                if isinstance(node, ast.FunctionDef) and node.name == "__init__")
    params = {arg.arg: ast.unparse(arg.annotation) for arg in init.args.kwonlyargs + init.args.args if arg.annotation}
    types: dict[str, str] = {}
    for node in ast.walk(init):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute):
            types[node.target.attr] = ast.unparse(node.annotation)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in params:
                    types.setdefault(target.attr, params[node.value.id])
    return {name: annotation for name, annotation in types.items()
            if "Any" in annotation or annotation in ("dict", "list")}


def test_only_the_callers_own_json_is_typed_any():
    """What the caller sends and the extractor fills (metadata, outcome, partial outcome) is any JSON;
    everything else the call holds has a type (post-call SMS is its own aggregate, domain/calls/sms.py)."""
    loose = loosely_typed_attributes()
    assert set(loose) <= {"metadata", "outcome", "partial_outcome"}, loose
    assert len(loose) <= 3
