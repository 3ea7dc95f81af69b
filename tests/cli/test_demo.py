"""``cfaug demo``: the packaged sample exists and edits are shown in their context."""

from __future__ import annotations

import csv

from cfaug.cli.demo import marked_excerpts, sample_path


def test_packaged_sample_is_balanced_and_has_ids():
    with open(sample_path(), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert len(rows) == 60 and len({r["id"] for r in rows}) == 60
    assert sorted({r["Sentiment"] for r in rows}) == ["Negative", "Positive"]
    assert sum(r["Sentiment"] == "Positive" for r in rows) == 30


def test_marked_excerpts_show_each_edit_with_its_context():
    text = "The music is great, you get a real feel. Cash is good too and I love it."
    a, b = text.index("great"), text.index("good")
    edits = [{"start": b, "end": b + 4, "old": "good", "new": ""},
             {"start": a, "end": a + 5, "old": "great", "new": "awful"}]
    assert marked_excerpts(text, edits, context=20) == (
        "The music is [great -> awful] ...  real feel. Cash is [good -> (removed)] too and I love it. ...")
    assert marked_excerpts(text, edits[:1], context=10) == "... . Cash is [good -> (removed)] too and I ..."
