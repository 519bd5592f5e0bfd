"""The sentence splitter (issue 32): a reply streamed in chunks comes out sentence by sentence as
soon as each is complete, so the first sentence is spoken before the last is written."""

from __future__ import annotations

from application.speech.sentences import SentenceSplitter


def stream(chunks: list[str]) -> list[list[str]]:
    splitter = SentenceSplitter()
    return [splitter.feed(chunk) for chunk in chunks] + [splitter.flush()]


def test_the_first_sentence_comes_out_before_the_reply_is_complete() -> None:
    out = stream(["Thanks for calling", ". Your appointment", " is on Tuesday. We'll", " see you then"])
    assert out == [[], ["Thanks for calling."], ["Your appointment is on Tuesday."], [], ["We'll see you then"]]


def test_a_chunk_can_complete_several_sentences() -> None:
    assert stream(["Hi! Is that ok? Yes. Good"]) == [["Hi!", "Is that ok?", "Yes."], ["Good"]]


def test_abbreviations_and_initials_do_not_end_a_sentence() -> None:
    out = stream(["Dr. Lee and Mrs. Ortiz meet J. Smith, e.g. at noon. Then we close."])
    assert out == [["Dr. Lee and Mrs. Ortiz meet J. Smith, e.g. at noon."], ["Then we close."]]


def test_a_decimal_point_split_across_chunks_is_not_a_boundary() -> None:
    assert stream(["It costs 3", ".5 dollars", ". Anything else?"]) == [
        [], [], ["It costs 3.5 dollars."], ["Anything else?"]]


def test_a_full_stop_before_a_lower_case_word_is_not_a_boundary() -> None:
    assert stream(["It takes approx. three days. Fine"]) == [["It takes approx. three days."], ["Fine"]]


def test_a_closing_quote_stays_with_its_sentence() -> None:
    assert stream(['He said "yes." Then he left.']) == [['He said "yes."'], ["Then he left."]]


def test_flush_hands_over_the_last_sentence_once() -> None:
    splitter = SentenceSplitter()
    assert splitter.feed("See you at 3.") == []  # "3." may still become "3.5"
    assert splitter.flush() == ["See you at 3."]
    assert splitter.flush() == []


def test_white_space_alone_yields_nothing() -> None:
    assert stream(["  ", "\n"]) == [[], [], []]
