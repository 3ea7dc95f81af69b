"""Counterfactual pairs from a file: the CAD pair-id layout and a cfaug output's original columns."""

from __future__ import annotations

import json

import pytest

from cfaug.data.io import DataError
from cfaug.data.paired import TextPair, read_pairs, sentence_pairs


def test_pair_ids_first_row_against_the_others(tmp_path):
    f = tmp_path / "p.tsv"
    f.write_text("Sentiment\tText\tbatch_id\n"
                 "Positive\tA great film.\t1\nNegative\tAn awful film.\t1\n"
                 "Negative\tDull plot.\t2\nPositive\tGripping plot.\t2\nPositive\tTaut plot.\t2\n"
                 "Positive\tAlone here.\t3\n"
                 "Positive\t\t4\n", encoding="utf-8")
    found = read_pairs(f)
    assert found.layout == "pair ids (batch_id)"
    assert found.pairs == [TextPair("A great film.", "An awful film.", "Positive", "Negative"),
                           TextPair("Dull plot.", "Gripping plot.", "Negative", "Positive"),
                           TextPair("Dull plot.", "Taut plot.", "Negative", "Positive")]
    assert found.skipped == {"no partner with another label": 1, "no text or no pair id": 1}
    # every two rows of a group that differ in label: the two positive rewrites share one, so nothing more
    assert read_pairs(f, every_two=True).pairs == found.pairs


def test_every_two_rows_of_a_group(tmp_path):
    f = tmp_path / "nli.csv"
    f.write_text("text,label,pair_id\nP1,entailment,7\nP2,contradiction,7\nP3,neutral,7\n", encoding="utf-8")
    assert [(p.original, p.rewrite) for p in read_pairs(f).pairs] == [("P1", "P2"), ("P1", "P3")]
    assert [(p.original, p.rewrite) for p in read_pairs(f, every_two=True).pairs] == [
        ("P1", "P2"), ("P1", "P3"), ("P2", "P3")]


def test_a_cfaug_output_with_original_columns(tmp_path):
    f = tmp_path / "out.jsonl"
    rows = [{"Text": "The food was bad.", "Sentiment": "Negative", "original_Text": "The food was good.",
             "original_Sentiment": "Positive", "method": "auto-cad.v1"},
            {"Text": "", "Sentiment": "Positive", "original_Text": "x", "original_Sentiment": "Negative"},
            {"Text": "Same.", "Sentiment": "Positive", "original_Text": "Same!", "original_Sentiment": "Positive"}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    found = read_pairs(f)
    assert found.layout == "original columns"
    assert found.pairs == [TextPair("The food was good.", "The food was bad.", "Positive", "Negative")]
    assert found.skipped == {"empty text": 1, "same label as the original": 1}


def test_files_that_hold_no_pairs_are_named(tmp_path):
    f = tmp_path / "plain.tsv"
    f.write_text("Text\tSentiment\nA film.\tPositive\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"plain.tsv: paired data needs .*pair-id columns .*found Text, Sentiment"):
        read_pairs(f)
    g = tmp_path / "nolabel.tsv"
    g.write_text("body\tgrp\nA film.\t1\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"nolabel.tsv: paired data needs text, label"):
        read_pairs(g)


def test_sentence_pairs_keep_the_rewritten_sentences_aligned():
    review = TextPair("The plot is gripping. The cast is superb.<br /><br />I saw it twice. Go see it now!",
                      "The plot is tedious. The cast is wooden.<br /><br />I saw it twice. Do not go see it!",
                      "Positive", "Negative")
    found, left = sentence_pairs([review])
    assert found == [TextPair("The plot is gripping.", "The plot is tedious.", "Positive", "Negative"),
                     TextPair("The cast is superb.", "The cast is wooden.", "Positive", "Negative"),
                     TextPair("Go see it now!", "Do not go see it!", "Positive", "Negative")]
    assert left == {}


def test_sentence_pairs_count_what_they_leave_out():
    pairs = [TextPair("Fine. A warm and funny film. Loved it.", "Fine. A cold film. Hated it. Avoid.", "pos", "neg"),
             TextPair("A wonderful, moving and beautifully shot story about a family.",
                      "Nothing here works at all, sadly.", "pos", "neg")]
    found, left = sentence_pairs(pairs)
    assert found == []
    # run of 2 replaced by a run of 3; a short pair rewritten beyond recognition
    assert left == {"added or removed": 3, "too different": 1}
    found, left = sentence_pairs(pairs, min_similarity=0.0, min_tokens=4)
    assert [(p.original, p.rewrite) for p in found] == [
        ("A wonderful, moving and beautifully shot story about a family.", "Nothing here works at all, sadly.")]
    assert left == {"added or removed": 3}
