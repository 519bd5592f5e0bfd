"""An ``@event`` body only assigns what its event says (issue 31 item 1): it holds no ``if``,
``for``, ``while`` or comprehension, and calls nothing but constructors of values (a class, a
class's alternative constructor such as ``Transfer.after_leg``, or a built-in container). A rule
in an event body runs again on every replay, so changing it would rewrite past calls; rules belong
to the command that decides, or to the value the event builds."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILT_IN_VALUES = {"dict", "list", "tuple", "set", "frozenset"}
BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.comprehension, ast.Try, ast.Match)

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


def test_no_event_body_in_the_domain_holds_a_rule():
    found = {f"{path.relative_to(ROOT)}:{name}": problems
             for path in sorted((ROOT / "domain").rglob("*.py"))
             for name, problems in rules_in(path.read_text(encoding="utf-8")).items()}
    assert found == {}, "event bodies holding rules: move the rule to the command, or into the value it builds"
