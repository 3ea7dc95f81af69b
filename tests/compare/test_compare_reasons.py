"""The reasons for "no counterfactual" of a compared method are grouped by kind in summary.md and in
report.html, while summary.json keeps every reason in full (cfaug.compare.summary, .report)."""

from __future__ import annotations

import html
import json
import re

import pytest

from cfaug.cli import main
from cfaug.methods.base import METHODS
from cfaug.registry import Entry
from cfaug_tests_reasons import Reasons, reviews_with_30_without


@pytest.fixture(autouse=True)
def registered(monkeypatch, tmp_path):
    monkeypatch.setitem(METHODS._entries, Reasons.name, Entry(Reasons.name, "test method", Reasons))
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))


def test_a_compared_run_with_30_items_without_a_counterfactual(tmp_path, capsys):
    data = reviews_with_30_without(tmp_path / "reviews.tsv", extra_word="bad")
    out = tmp_path / "cmp"
    assert main(["compare", str(data), "--methods", "reasons", "-o", str(out), "--workers", "1", "--no-embedding",
                 "--no-bertscore", "--no-progress"]) == 0
    capsys.readouterr()
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    (entry,) = summary["methods"]
    assert entry["items_without_counterfactual"] == 30 and len(entry["without_reasons"]) == 28  # all in full

    md = (out / "summary.md").read_text(encoding="utf-8")
    (line,) = [ln for ln in md.splitlines() if ln.startswith("- **reasons**")]
    assert line == ("- **reasons**: 30 items with no counterfactual: the classifier gives the source label \u2026 for "
                    "the whole text (24; e.g. \u2026 = 0.03; 0.26); no replacement for '\u2026' in the lexicon "
                    "(6; e.g. \u2026 = 'fine'; 'nice')")
    assert "each reason in full is in summary.json" in md

    page = (out / "report.html").read_text(encoding="utf-8")
    without = re.search(r'<ul id="without">.*?</ul>', page, re.DOTALL).group(0)
    assert html.unescape(re.sub(r"<[^>]+>", "", without)).strip() == line.removeprefix("- ").replace("**", "") \
        .replace("30 items with no counterfactual", "30 items")
    assert without.count("0.") == 2  # two examples of the probabilities, not 24 lines
