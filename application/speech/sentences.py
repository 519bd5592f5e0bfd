"""Splits a reply into sentences as its text streams in, so the first sentence can be spoken
before the brain has written the last one."""

from __future__ import annotations

import re

# Words that end in a full stop without ending the sentence ("Dr. Lee", "e.g. Paris"). Kept short:
# a full stop followed by a lower-case word is never a boundary anyway ("approx. three").
ABBREVIATIONS = frozenset({
    "dr", "mr", "mrs", "ms", "mx", "prof", "st", "jr", "sr", "vs", "e.g", "i.e", "approx", "dept",
    "fig", "mt", "ft",
})

_TERMINATOR = re.compile(r"([.!?…]+)([\"'”’)\]]*)")
_LAST_WORD = re.compile(r"(\S+)$")


class SentenceSplitter:
    """Feed text chunks, get complete sentences back; ``flush`` hands over the rest at the end.

    A sentence ends at ``.``, ``!``, ``?`` or ``…`` (with any closing quotes or brackets) followed
    by white space. A full stop is held until the next word is seen: it is no boundary after a known
    abbreviation or a single capital (an initial), before a lower-case word, or inside a number
    ("3.5" has no white space after its point)."""

    def __init__(self, *, abbreviations: frozenset[str] = ABBREVIATIONS) -> None:
        self.abbreviations = frozenset(word.lower().rstrip(".") for word in abbreviations)
        self._buffer = ""

    def feed(self, chunk: str) -> list[str]:
        """The sentences that ``chunk`` completed, in order (often none)."""
        self._buffer += chunk
        sentences: list[str] = []
        while (end := self._boundary()) is not None:
            sentence = self._buffer[:end].strip()
            self._buffer = self._buffer[end:].lstrip()
            if sentence:
                sentences.append(sentence)
        return sentences

    def flush(self) -> list[str]:
        """The reply is complete: whatever is left is its last sentence."""
        rest = " ".join(self._buffer.split())
        self._buffer = ""
        return [rest] if rest else []

    def _boundary(self) -> int | None:
        text = self._buffer
        for match in _TERMINATOR.finditer(text):
            end = match.end()
            if end >= len(text):
                return None  # what follows decides ("3." may become "3.5")
            if not text[end].isspace():
                continue
            if "." in match.group(1) and not any(mark in match.group(1) for mark in "!?…"):
                following = text[end:].lstrip()
                if not following:
                    return None  # wait for the next word
                if following[0].islower() or self._is_abbreviation(text[:match.start()]):
                    continue
            return end
        return None

    def _is_abbreviation(self, before: str) -> bool:
        word = _LAST_WORD.search(before)
        if word is None:
            return False
        token = word.group(1).lstrip("\"'“‘([").lower()
        if len(token) == 1 and token.isalpha() and word.group(1)[-1].isupper():
            return True  # an initial: "J. Smith"
        return token in self.abbreviations
