"""Sentences by punctuation and line breaks."""

from __future__ import annotations

from cfaug.data.sentences import split_sentences


def test_split_after_end_marks_and_at_line_breaks():
    assert split_sentences("Great tacos! Rude staff.\nWould not return") == ["Great tacos!", "Rude staff.",
                                                                              "Would not return"]
    assert split_sentences("  \n ") == []
    assert split_sentences("3.5 stars, e.g.the best") == ["3.5 stars, e.g.the best"]  # no space: no split


def test_html_line_breaks_end_a_sentence_only_when_asked():
    text = "A dull film<br /><br />The cast tries. Too late"
    assert split_sentences(text, html=True) == ["A dull film", "The cast tries.", "Too late"]
    assert split_sentences(text) == ["A dull film<br /><br />The cast tries.", "Too late"]
