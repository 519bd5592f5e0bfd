"""Lenient readings of a spoken or typed answer, one per outcome field type (for the scripted agent).

Each returns a JSON candidate or None when the answer does not settle a value; the type's check
(``outcome_types``) validates and normalizes the candidate. Pure: stdlib only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_YES = {"yes", "yeah", "yep", "yup", "yea", "ya", "aye", "true", "correct", "right", "sure", "affirmative",
        "absolutely", "definitely", "certainly", "indeed", "ok", "okay", "y"}
_NO = {"no", "nope", "nah", "false", "incorrect", "wrong", "negative", "never", "n", "not", "don't", "doesn't",
       "didn't", "isn't", "wasn't", "aren't", "haven't", "hasn't", "can't", "won't", "cannot"}
_UNSURE = re.compile(r"\b(not sure|unsure|don't know|do not know|dunno|no idea|not certain|maybe|perhaps|can't say|"
                     r"cannot say|can't tell|not yet decided)\b")
_YES_PHRASES = re.compile(r"\b(no problem|why not|of course|for sure|that's right|that is right)\b")
_NO_PHRASES = re.compile(r"\b((?:absolutely|certainly|definitely|of course|surely) not|not (?:\w+ )?(?:correct|right|true|"
                         r"really|at all))\b")

# A minus sign counts only after a space or at the start: "5-6" and "COVID-19" hold no negatives.
_NUMBER = re.compile(r"(?<![0-9.])(?:(?:(?<=\s)|^)-)?[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?![0-9])")
_NUMBER_WORDS = {
    "zero": 0, "none": 0, "nobody": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
    "twenty": 20,
}
_ISO_DATETIME = re.compile(r"(?<![0-9])[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
                           r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?(?![0-9])")
_ISO_DATE = re.compile(r"(?<![0-9])[0-9]{4}-[0-9]{2}-[0-9]{2}(?![0-9])")
_LIST_SEPARATOR = re.compile(r"\s*(?:,|;|&|\n|\band\b)\s*", re.IGNORECASE)
_TRAILING = ".!?;, \t\n"
# A whole answer that only admits not knowing ("Sorry, I don't know that.") settles no free-text
# value: without this, a string or list field would record the admission itself as the answer.
_NO_ANSWER = re.compile(
    r"(?:(?:sorry|um+|uh+|well|hmm+|oh)\s+)*(?:i\s+|i'm\s+|i am\s+)?(?:afraid\s+(?:i\s+)?)?(?:really\s+)?"
    r"(?:don't know|do not know|dunno|have no idea|no idea|not sure|can't say|cannot say|can't remember|"
    r"don't remember)(?:\s+(?:that|it|this|about that|the answer))?(?:\s+sorry)?"
)


def _answer(reading: Callable[[str, tuple[str, ...]], Any]) -> Callable[[str, tuple[str, ...]], Any]:
    """A blank or non-text answer settles nothing; the reading sees the answer stripped."""

    @functools.wraps(reading)
    def read(text: str, values: tuple[str, ...] = ()) -> Any:
        if not isinstance(text, str) or not text.strip():
            return None
        return reading(text.strip(), values)

    return read


@_answer
def boolean(text: str, _: tuple[str, ...]) -> bool | None:
    return _boolean(text)


@_answer
def number(text: str, _: tuple[str, ...]) -> int | float | None:
    return _number(text)


@_answer
def enum(text: str, values: tuple[str, ...]) -> str | None:
    return _enum(text, values)


@_answer
def datetime(text: str, _: tuple[str, ...]) -> str | None:
    return _single(_ISO_DATETIME.findall(text))


@_answer
def date(text: str, _: tuple[str, ...]) -> str | None:
    return _single(_ISO_DATE.findall(text))


@_answer
def array(text: str, _: tuple[str, ...]) -> list[str] | None:
    if _admits_not_knowing(text):
        return None
    items = [item.strip(_TRAILING) for item in _LIST_SEPARATOR.split(text.strip(_TRAILING))]
    return [item for item in items if item] or None


@_answer
def string(text: str, _: tuple[str, ...]) -> str | None:
    return None if _admits_not_knowing(text) else text


def _admits_not_knowing(text: str) -> bool:
    return _NO_ANSWER.fullmatch(" ".join(_WORD.findall(text.lower().replace("\u2019", "'")))) is not None


def _boolean(text: str) -> bool | None:
    lowered = " ".join(_WORD.findall(text.lower().replace("\u2019", "'")))
    if _UNSURE.search(lowered):
        return None
    votes: set[bool] = set()
    if _NO_PHRASES.search(lowered):
        votes.add(False)
        lowered = _NO_PHRASES.sub(" ", lowered)
    if _YES_PHRASES.search(lowered):
        votes.add(True)
        lowered = _YES_PHRASES.sub(" ", lowered)
    for word in lowered.split():
        if word in _YES:
            votes.add(True)
        elif word in _NO:
            votes.add(False)
    return votes.pop() if len(votes) == 1 else None


def _number(text: str) -> int | float | None:
    found: set[int | float] = set()
    for token in _NUMBER.findall(text):
        plain = token.replace(",", "")
        found.add(float(plain) if "." in plain else int(plain))
    lowered = text.lower()
    if re.search(r"\bno one\b", lowered):
        found.add(0)
    for word in _WORD.findall(lowered):
        if word in _NUMBER_WORDS:
            found.add(_NUMBER_WORDS[word])
    return _single(list(found))


def _enum(text: str, values: tuple[str, ...]) -> str | None:
    for value in values:  # the whole answer is one value, exactly as written
        if text.strip(_TRAILING) == value:
            return value
    spoken = _normalize(text)
    exact = [value for value in values if _normalize(value) == spoken]
    if exact:
        return _single(exact)
    hits = [value for value in values if re.search(rf"(?<![a-z0-9]){re.escape(_normalize(value))}(?![a-z0-9])", spoken)]
    # "credit card" also contains "card": a value inside a longer matched value is not a separate hit.
    hits = [v for v in hits if not any(_normalize(v) != _normalize(o) and _normalize(v) in _normalize(o) for o in hits)]
    return _single(hits)


def _normalize(text: str) -> str:
    return " ".join(re.sub(r"[_\-]+", " ", text.casefold()).split())


def _single(found: list[Any]) -> Any:
    distinct = list(dict.fromkeys(found))
    return distinct[0] if len(distinct) == 1 else None
