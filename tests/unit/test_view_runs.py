"""A view's page of writes goes to PostgreSQL as runs of one statement, in the page's order
(projections/view.py): an update never overtakes the insert it depends on."""

from __future__ import annotations

from projections.view import _runs


def test_consecutive_uses_of_one_statement_form_a_run_and_the_order_is_kept():
    insert, update = object(), object()
    page = [(insert, {"id": 1}), (insert, {"id": 2}), (update, {"id": 1}), (insert, {"id": 3}), (update, {"id": 3}),
            (update, {"id": 2})]

    runs = list(_runs(page))  # type: ignore[arg-type]

    assert [(statement is insert, [p["id"] for p in params]) for statement, params in runs] == [
        (True, [1, 2]), (False, [1]), (True, [3]), (False, [3, 2])]


def test_no_writes_make_no_runs():
    assert list(_runs([])) == []
