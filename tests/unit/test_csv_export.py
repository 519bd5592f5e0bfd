"""The calls CSV export's cells: RFC 4180 quoting round-trips any text, and a free-text cell that a
spreadsheet would run as a formula gets exactly one leading apostrophe (SPEC.md, export.csv)."""

from __future__ import annotations

import asyncio
import csv
import io

from hypothesis import example, given
from hypothesis import strategies as st

from projections.calls_list.csv_export import CSV_COLUMNS, csv_lines, csv_lines_async, outcome_cell

CALL = "cll_" + "0" * 32
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may run as a formula


def _row(objective: str, to: str = "+442071838750") -> tuple:
    return (CALL, "2026-11-02T12:00:00Z", to, "+15005550006", objective, "completed", 0.5, 25, "0.0125",
            None, None)


def _read(lines: list[str]) -> list[list[str]]:
    return list(csv.reader(io.StringIO("".join(lines), newline="")))


@given(st.one_of(st.text(), st.sampled_from(DANGEROUS).flatmap(lambda c: st.text().map(lambda t: c + t))))
@example("=1+2")
@example("+44 is a prefix")
@example("-")
@example("@me")
@example("\tx")
@example("\r\n")
@example('a "quoted", multi\nline, cell')
@example("'=already quoted")
def test_any_objective_round_trips_with_one_apostrophe_before_a_formula_start(objective):
    header, row = _read(list(csv_lines([_row(objective)])))
    assert header == list(CSV_COLUMNS)
    expected = "'" + objective if objective[:1] in DANGEROUS else objective
    assert row[4] == expected


@given(st.from_regex(r"\+[1-9][0-9]{6,14}", fullmatch=True))
def test_e164_numbers_are_written_unaltered(number):
    _header, row = _read(list(csv_lines([_row("x", to=number)])))
    assert row[2] == number and row[3] == "+15005550006"


def test_empty_cells_numbers_and_the_record_terminator():
    lines = list(csv_lines([_row("plain")]))
    assert lines[1] == f"{CALL},2026-11-02T12:00:00Z,+442071838750,+15005550006,plain,completed,0.5,25,0.0125,,\r\n"


def test_error_codes_and_urls_are_free_text_too():
    row = (CALL, "2026-11-02T12:00:00Z", "+442071838750", "+15005550006", "x", "failed", None, None, "0",
           "-oops", "=WEBSERVICE(1)")
    _header, cells = _read(list(csv_lines([row])))
    assert cells[9:] == ["'-oops", "'=WEBSERVICE(1)"]


def test_the_async_lines_equal_the_sync_lines():
    rows = [_row("=1"), _row("two, three")]

    async def gather() -> list[str]:
        async def source():
            for row in rows:
                yield row

        return [line async for line in csv_lines_async(source())]

    assert asyncio.run(gather()) == list(csv_lines(rows))


def test_outcome_cells_are_text_typed_and_formula_safe():
    assert [outcome_cell(v) for v in (True, False, None, 3, -2.5)] == ["true", "false", None, 3, -2.5]
    assert outcome_cell(["a", 1, None]) == '["a",1,null]'
    assert outcome_cell({"k": "v"}) == '{"k":"v"}'
    assert outcome_cell("=SUM(A1)") == "'=SUM(A1)" and outcome_cell("plain") == "plain"
    assert outcome_cell(["=x"]) == '["=x"]'  # JSON starts with a bracket: nothing a spreadsheet runs


def test_include_outcome_writes_the_union_of_fields_after_the_spec_columns():
    names = ("allergies", "confirmed")
    rows = [names, (*_row("x"), {"confirmed": True}), (*_row("y"), {"allergies": ["nuts"], "confirmed": False}),
            (*_row("z"), None)]

    async def produce():
        for row in rows:
            yield row

    async def collect():
        return [line async for line in csv_lines_async(produce(), outcome=True)]

    header, first, second, third = _read(asyncio.run(collect()))
    assert header == [*CSV_COLUMNS, "outcome.allergies", "outcome.confirmed"]
    assert first[11:] == ["", "true"] and second[11:] == ['["nuts"]', "false"] and third[11:] == ["", ""]
