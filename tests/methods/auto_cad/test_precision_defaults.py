"""auto-CAD's precision-first defaults, through the Python API: a row is written only when C gives it the target
(flip_min_prob 0.5) and no opinion of the source's polarity is left (the completeness check), and only the best
of each row's candidates (alternatives 3, keep 1) by the shared choice step.

The three runs share one fitted C (the model store) and, in this process, the encoders (workers=1)."""

from __future__ import annotations

from collections import Counter

import pytest

from cfaug.api import run_augment

pytestmark = pytest.mark.usefixtures("one_torch_thread_per_module")

FAST = {"classifier_background": "none"}


@pytest.fixture(scope="module")
def runs(sentiment_tsv, tmp_path_factory):
    """Rows and summary of auto-CAD on the 40-row fixture with the defaults, with require_flip=False and with
    keep=2."""
    out = {}
    for name, params in (("default", {}), ("no-flip", {"require_flip": False}), ("keep2", {"keep": 2})):
        summary, rows = run_augment(str(sentiment_tsv), "auto-cad", text_col="Text", label_col="Sentiment",
                                    run_dir=tmp_path_factory.mktemp(name) / "run", progress=False, workers=1,
                                    params={**FAST, **params})
        out[name] = (summary, rows)
    return out


def per_source(rows):
    return Counter(r["source_id"] for r in rows)


def test_every_written_row_is_flipped_complete_and_chosen(runs):
    summary, rows = runs["default"]
    assert len(rows) >= 20
    for r in rows:
        meta = r["meta"]
        assert meta["own_judge"]["target_prob"] >= 0.5 and meta["own_judge"]["threshold"] == 0.5
        assert meta["filters"]["flip"] is True and meta["filters"]["complete"] is True
        assert meta["completeness"] == {"complete": True, "leftovers": []}
        assert meta["choice"]["candidates"] >= 1 and meta["choice"]["rank"] == 1
        assert meta["choice"]["judge"] == "minilm-logreg"
    # the choice had alternatives to choose among
    assert any(r["meta"]["choice"]["candidates"] > 1 for r in rows)
    # with the defaults (variants=rep, keep=1): at most one row per source
    assert max(per_source(rows).values()) == 1
    # the items none of whose candidates passed say which checks they failed
    assert sum(summary.without_reasons.values()) == summary.items_without_counterfactual
    assert all(reason.startswith("every candidate failed a filter") for reason in summary.without_reasons)


def test_without_require_flip_rows_below_half_are_written_unchecked_for_completeness(runs):
    _, rows = runs["no-flip"]
    _, strict = runs["default"]
    assert len(rows) > len(strict)
    assert any(r["meta"]["own_judge"]["target_prob"] < 0.5 for r in rows)
    for r in rows:
        assert "complete" not in r["meta"]["filters"] and "flip" not in r["meta"]["filters"]
        assert "completeness" not in r["meta"]
        assert r["meta"]["choice"]["candidates"] >= 1  # the choice step still picks one
    assert max(per_source(rows).values()) == 1


def test_keep_two_can_write_two_rows_of_one_source(runs):
    _, rows = runs["keep2"]
    _, one = runs["default"]
    counts = per_source(rows)
    assert max(counts.values()) == 2 and len(rows) > len(one)
    for source, n in counts.items():
        mine = [r for r in rows if r["source_id"] == source]
        assert sorted(r["meta"]["choice"]["rank"] for r in mine) == list(range(1, n + 1))
        assert len({r["Text"] for r in mine}) == n  # two different rewrites
        assert all(r["meta"]["filters"]["complete"] is True for r in mine)
    # the best of each source is the row the default run wrote
    best = {r["source_id"]: r["Text"] for r in rows if r["meta"]["choice"]["rank"] == 1}
    assert {r["source_id"]: r["Text"] for r in one} == {s: best[s] for s in per_source(one)}


def test_a_rewrite_the_method_itself_does_not_believe_is_not_written():
    # the example of the issue: written before at its own judge's 0.01
    from cfaug.judges.base import Candidate
    from cfaug.methods.auto_cad.config import AutoCADConfig
    from cfaug.methods.auto_cad.filters import build_filters

    flip = build_filters(AutoCADConfig(), None, None)[0]
    old, new = "do n't go here unless you want to pay for crap .", "do go here unless you want to pay for crap ."
    cand = Candidate({"text": old}, {"text": new}, "positive", scores={"target_prob": 0.01, "flipped": 0.0})
    sure = Candidate({"text": old}, {"text": new}, "positive", scores={"target_prob": 0.8, "flipped": 1.0})
    assert flip.name == "flip" and flip.check([cand, sure]) == [False, True]
    # the former behaviour, one parameter away: no flip filter at all
    assert all(f.name != "flip" for f in build_filters(AutoCADConfig(require_flip=False), None, None))
