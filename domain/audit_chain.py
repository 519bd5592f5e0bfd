"""The tamper evidence of a tenant's audit trail: each row's ``hash`` is SHA-256 over the previous
row's hash and the row's canonical JSON, so editing, inserting or deleting a row changes every
hash after it (docs/audit.md). Pure: the projection writes the chain, ``callwright audit verify``
checks an export offline with the same functions.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

GENESIS = "0" * 64  # the prev_hash of a tenant's first row
HASHED = ("id", "tenant_id", "type", "actor", "subject", "occurred_at", "data")


def canonical(row: Mapping[str, Any]) -> str:
    """The row's hashed fields as JSON: keys sorted, no spaces, UTF-8 as it is."""
    return json.dumps({name: row[name] for name in HASHED}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


def link(prev_hash: str, row: Mapping[str, Any]) -> str:
    return hashlib.sha256((prev_hash + canonical(row)).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Verdict:
    rows: int
    head: str | None  # the last row's hash
    broken_at: int | None = None  # 1-based line of the first row that breaks the chain
    row_id: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.broken_at is None


def verify(rows: Iterable[Mapping[str, Any]], head: str | None = None, first_prev: str | None = GENESIS) -> Verdict:
    """Checks every row's hash against its content and its predecessor; ``first_prev`` is what the
    first row must follow (the genesis for a whole trail; None takes the first row's word for it,
    for an export that starts later). ``head``, when given, must be the last row's hash: an export
    cut short, or a trail rewritten from some row on, ends elsewhere."""
    previous, count, row_id = first_prev, 0, None
    for count, row in enumerate(rows, start=1):
        row_id = str(row.get("id"))
        missing = [name for name in (*HASHED, "prev_hash", "hash") if name not in row]
        if missing:
            return Verdict(count, previous, count, row_id, f"the row lacks {', '.join(missing)}")
        if previous is not None and row["prev_hash"] != previous:
            return Verdict(count, previous, count, row_id,
                           "its prev_hash is not the hash of the row before it: a row was inserted or deleted here")
        if link(row["prev_hash"], row) != row["hash"]:
            return Verdict(count, previous, count, row_id, "its hash does not match its content: the row was edited")
        previous = row["hash"]
    if head is not None and previous != head:
        return Verdict(count, previous, count + 1, None, f"the last hash is {previous}, not the head {head}: "
                                                          "rows are missing at the end or the trail was rewritten")
    return Verdict(count, previous)
