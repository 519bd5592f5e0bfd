"""The batch's pasted numbers: one number per line, or CSV whose header row has a ``to`` column (its
other columns become each item's metadata). A paste without numbers, or with more than the API's
batch limit, is answered in words before the API is asked."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from application.calling.batch import MAX_ITEMS


@dataclass
class Pasted:
    items: list[dict[str, Any]] = field(default_factory=list)  # {to, metadata?} as the API takes them
    lines: list[int] = field(default_factory=list)  # the line of the paste each item came from
    problem: str = ""


def read_numbers(text: str) -> Pasted:
    rows = [(number, cells) for number, cells in enumerate(csv.reader(io.StringIO(text)), start=1)
            if any(cell.strip() for cell in cells)]
    if not rows:
        return Pasted(problem="Paste at least one phone number: one a line, or CSV with a header row naming "
                              "a to column.")
    header = [cell.strip().lower() for cell in rows[0][1]]
    pasted = Pasted()
    if "to" in header:
        column = header.index("to")
        others = [(index, name) for index, name in enumerate(header) if index != column and name]
        for number, cells in rows[1:]:
            to = cells[column].strip() if column < len(cells) else ""
            if not to:
                pasted.problem = f"Line {number} has no number in its to column."
                return pasted
            item: dict[str, Any] = {"to": to}
            metadata = {name: cells[index].strip() for index, name in others
                        if index < len(cells) and cells[index].strip()}
            if metadata:
                item["metadata"] = metadata
            pasted.items.append(item)
            pasted.lines.append(number)
    elif len(header) > 1:
        return Pasted(problem="These lines have several columns but no header row naming a to column: add one "
                              "(for example to,name) or paste one number a line.")
    else:
        for number, cells in rows:
            pasted.items.append({"to": cells[0].strip()})
            pasted.lines.append(number)
    if not pasted.items:
        pasted.problem = "The header row names a to column but no line under it has a number."
    elif len(pasted.items) > MAX_ITEMS:
        pasted.problem = (f"That is {len(pasted.items)} numbers; a batch takes at most {MAX_ITEMS}. "
                          "Split them into several batches.")
    return pasted
