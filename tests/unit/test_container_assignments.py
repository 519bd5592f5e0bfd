"""The container is built once (issue 31 item 2): it is frozen, and only the composition root
(``entrypoints/bootstrap/``) builds one; every other module reads it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("domain", "application", "adapters", "projections", "entrypoints")
COMPOSITION_ROOT = ROOT / "entrypoints" / "bootstrap"


def _names_a_container(node: ast.expr) -> bool:
    """``container`` / ``built`` / ``self.container`` (any expression ending in such a name)."""
    if isinstance(node, ast.Name):
        return node.id == "container"
    return isinstance(node, ast.Attribute) and node.attr == "container"


def assignments(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
              and node.args and _names_a_container(node.args[0])):
            found.append(f"line {node.lineno}: setattr")
        for target in targets:
            if isinstance(target, ast.Attribute) and _names_a_container(target.value):
                found.append(f"line {target.lineno}: .{target.attr}")
    return found


def test_the_finder_sees_an_assignment():
    assert assignments("container.pool = 1\nself.container.voice, x = 2, 3\nsetattr(container, 'a', 1)\n") == [
        "line 1: .pool", "line 2: .voice", "line 3: setattr"]
    assert assignments("pool = container.pool\ncontainer.close()\n") == []


def test_only_the_composition_root_assigns_container_attributes():
    found = {}
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            if COMPOSITION_ROOT in path.parents:
                continue
            hits = assignments(path.read_text(encoding="utf-8"))
            if hits:
                found[str(path.relative_to(ROOT))] = hits
    assert found == {}


def test_a_container_refuses_an_assignment_after_it_is_built():
    import dataclasses

    from entrypoints.bootstrap import Container, ServerContainer, bootstrap_memory
    from entrypoints.settings import Settings

    assert Container.__dataclass_params__.frozen and ServerContainer.__dataclass_params__.frozen  # type: ignore[attr-defined]
    container = bootstrap_memory(Settings())
    try:
        with pytest.raises(dataclasses.FrozenInstanceError):
            container.rate_limiter = container.rate_limiter  # type: ignore[misc]
        assert container.http_metrics is not None and container.voice_metrics is not None
    finally:
        container.close()


def test_the_live_call_ports_are_always_wired():
    """No run mode builds a ``Calling`` without the carrier side of live calls, so no use case finds
    it missing at run time."""
    import inspect

    from application.calling.app import Calling

    live = inspect.signature(Calling.__init__).parameters["live"]
    assert live.default is inspect.Parameter.empty and "None" not in str(live.annotation)
