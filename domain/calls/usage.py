"""Counts of a model's tokens by kind (``input_tokens``, ``output_tokens``, …), as the agent and the
extractor report them and the price table reads them."""

from __future__ import annotations

from collections.abc import Mapping


class TokenCounts(dict[str, int]):
    @classmethod
    def sum(cls, first: Mapping[str, int], second: Mapping[str, int]) -> TokenCounts:
        """Each kind's count in both (a kind only one names counts as 0 in the other)."""
        return cls({name: first.get(name, 0) + second.get(name, 0) for name in {*first, *second}})
