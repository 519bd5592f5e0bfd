"""An ``@event`` body only assigns what its event says (issue 31 item 1): it holds no ``if``,
``for``, ``while`` or comprehension, and calls nothing but constructors of values (a class, a
class's alternative constructor such as ``Transfer.after_leg``, or a built-in container). A rule
in an event body runs again on every replay, so changing it would rewrite past calls; rules belong
to the command that decides, or to the value the event builds.

``KNOWN`` lists the bodies that still hold rules; it only shrinks (issue 31 empties it): a body
not in it that breaks the rule fails, and so does an entry that no longer breaks it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILT_IN_VALUES = {"dict", "list", "tuple", "set", "frozenset"}
BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.comprehension, ast.Try, ast.Match)

KNOWN = {
    "domain/accounts/api_key.py:__init__",
    "domain/calls/call.py:_sms_failed", "domain/calls/call.py:_sms_sent",  # post-call SMS: its own aggregate next
    "domain/calls/idempotency.py:__init__", "domain/calls/idempotency.py:_reclaimed",
    "domain/calls/idempotency.py:_rerecorded", "domain/calls/suppression.py:__init__",
    "domain/calls/suppression.py:_delisted", "domain/calls/suppression.py:_readded",
    "domain/flows/flow.py:__init__", "domain/flows/flow.py:_draft_edited", "domain/flows/flow.py:_published",
    "domain/numbers/number.py:__init__", "domain/numbers/number.py:_removed", "domain/numbers/number.py:_updated",
    "domain/providers/credential.py:__init__", "domain/providers/credential.py:_reverified",
    "domain/push/index.py:_deactivated", "domain/push/index.py:_listed", "domain/push/index.py:_unlisted",
    "domain/push/notification.py:_attempted", "domain/push/subscription.py:__init__",
    "domain/push/subscription.py:_resubscribed", "domain/webhooks/delivery.py:__init__",
    "domain/webhooks/delivery.py:_cancelled", "domain/webhooks/delivery.py:_leased",
    "domain/webhooks/endpoint.py:_changed", "domain/webhooks/endpoint.py:_deactivated",
    "domain/webhooks/endpoint.py:_reactivated", "domain/wizard/provisioning.py:__init__",
    "domain/wizard/provisioning.py:_restarted",
}


def _is_event(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "event" for d in node.decorator_list)


def _constructs_a_value(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id[:1].isupper() or func.id in BUILT_IN_VALUES
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id[:1].isupper()


def rules_in(source: str) -> dict[str, list[str]]:
    """Each ``@event`` body's rules: ``name -> [what, …]``, only the bodies that hold some."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if not _is_event(node):
            continue
        assert isinstance(node, ast.FunctionDef)
        problems = []
        for statement in node.body:
            for inner in ast.walk(statement):
                if isinstance(inner, BRANCHES):
                    problems.append(type(inner).__name__)
                elif isinstance(inner, ast.Call) and not _constructs_a_value(inner):
                    problems.append(f"calls {ast.unparse(inner.func)}")
        if problems:
            found[node.name] = problems
    return found


def test_the_finder_tells_assignments_from_rules():
    source = '''
@event("A")
def _a(self, x, at):
    self.x = Value.of(x)
    self.y, self.z = Decimal(x), list(x)

@event("B")
def _b(self, x, at):
    if x:
        self.x = x
    self.n = len(self.items)
    self.items = [i for i in x]
'''
    assert rules_in(source) == {"_b": ["If", "calls len", "comprehension"]}


def test_no_event_body_holds_a_rule_but_the_known_ones():
    found = {f"{path.relative_to(ROOT)}:{name}": problems
             for path in sorted((ROOT / "domain").rglob("*.py"))
             for name, problems in rules_in(path.read_text(encoding="utf-8")).items()}
    new = {where: problems for where, problems in found.items() if where not in KNOWN}
    assert new == {}, "event bodies holding rules: move the rule to the command, or into the value it builds"
    assert sorted(KNOWN - set(found)) == [], "no rule left in these bodies: take them off KNOWN"
