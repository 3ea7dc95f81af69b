"""Reasons for "no counterfactual" are grouped by kind in the terminal summary: reasons that differ only in a
number or a quoted word make one line with their count and two examples of what varies; every reason stays
in full in the run directory (cfaug.run.summary)."""

from __future__ import annotations

import json

import pytest

from cfaug.methods.base import METHODS
from cfaug.registry import Entry
from cfaug.run.runner import RunOptions, run
from cfaug_tests_reasons import Reasons, reviews_with_30_without


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(METHODS._entries, Reasons.name, Entry(Reasons.name, "test method", Reasons))


def test_thirty_items_without_a_counterfactual_make_two_lines(tmp_path):
    data = reviews_with_30_without(tmp_path / "reviews.tsv")
    summary, rows = run(data, RunOptions(method="reasons", run_dir=str(tmp_path / "run"), progress=False, workers=1),
                        output=tmp_path / "out.jsonl", log=lambda m: None)
    assert summary.items_without_counterfactual == 30 and len(rows) == 10
    lines = summary.lines()
    at = next(i for i, line in enumerate(lines) if line.startswith("items with none"))
    assert lines[at] == "items with none        30"
    assert lines[at + 1: at + 4] == [
        "     24  the classifier gives the source label \u2026 for the whole text  (e.g. \u2026 = 0.03; 0.26)",
        "      6  no replacement for '\u2026' in the lexicon  (e.g. \u2026 = 'fine'; 'nice')",
        "         (each reason in full: summary.json in the run directory)"]
    assert not lines[at + 4].startswith("   ")  # nothing more about the reasons
    # the detail stays in the run directory: every reason as the method gave it, with its count
    saved = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert len(saved["without_reasons"]) == 24 + 4 and sum(saved["without_reasons"].values()) == 30
    assert saved["without_reasons"]["no replacement for 'fine' in the lexicon"] == 3


def test_reason_kinds():
    from cfaug.run.summary import group_reasons, reason_kind

    assert reason_kind("P 0.07 < 0.90 for 'great' and \"fine\"") == (
        "P \u2026 < \u2026 for '\u2026' and \"\u2026\"", ["0.07", "0.90", "'great'", '"fine"'])
    # apostrophes, names with digits and options are no varying parts
    same = "the text's triples (t2s, -p content_words=all)"
    assert reason_kind(same) == (same, [])
    groups = group_reasons({"a 1": 2, "a 2": 1, "b": 5, "a 3": 1})
    assert [(g.count, g.label, g.examples()) for g in groups] == [(5, "b", []), (4, "a \u2026", ["1", "3"])]
    assert group_reasons({}) == []


def test_many_kinds_are_cut_to_the_first_eight():
    from cfaug.run.summary import RunSummary

    s = RunSummary(items_without_counterfactual=10, without_reasons={f"reason {c}": 1 for c in "abcdefghij"})
    lines = s.lines()
    at = lines.index("items with none        10")
    assert [line.split()[0] for line in lines[at + 1: at + 9]] == ["1"] * 8
    assert lines[at + 9] == "      2  other reasons, of 2 more kinds"
    assert lines[at + 10] == "         (each reason in full: summary.json in the run directory)"
