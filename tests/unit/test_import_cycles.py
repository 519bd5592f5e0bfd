"""No import cycles in the product packages (issue 31 item 4): a module can be read, tested and
changed knowing only what it imports. The import graph is built by grimp (import-linter's graph
library), imports made only for type checking included: a cycle is a cycle to a reader too."""

from __future__ import annotations

import grimp

PACKAGES = ("domain", "application", "adapters", "projections", "entrypoints")


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan's
    algorithm, iterative), each sorted; a module importing itself is one too."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1 or module in graph.find_modules_directly_imported_by(module):
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for module in ("pkg.a", "pkg.b", "pkg.c", "pkg.d"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    graph.add_import(importer="pkg.c", imported="pkg.d")
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_no_product_package_has_an_import_cycle():
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False)
    assert len(graph.modules) > 300  # the packages were found
    assert cycles(graph) == [], "import cycles (each a set of modules importing one another)"
