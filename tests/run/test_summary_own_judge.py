"""The run summary's own-judge line: it names the P(target) the flip rate counts from and gives the share
above 0.5 beside it, from what the methods record in ``meta["own_judge"]``."""

from __future__ import annotations

import json
from dataclasses import asdict
from types import SimpleNamespace

import pytest

from cfaug.run.summary import RunSummary, collect_results


def results(*own_judges: dict | None, passed: list[bool] | None = None):
    """Work items and their results, one kept counterfactual per item with ``own_judges[i]`` as its judge."""
    items, done = [], {}
    for i, own in enumerate(own_judges):
        key = f"k{i}"
        meta = {"passed": True if passed is None else passed[i]}
        if own is not None:
            meta["own_judge"] = own
        items.append(SimpleNamespace(key=key))
        done[key] = {"status": "ok", "counterfactuals": [{"text": "x", "meta": meta}]}
    return items, done


def own(p: float, threshold: float | None = 0.9, name: str = "tfidf-logreg") -> dict:
    out = {"name": name, "target_prob": p, "flipped": p >= (threshold if threshold is not None else 0.5)}
    if threshold is not None:
        out["threshold"] = threshold
    return out


def own_line(summary: RunSummary) -> str:
    lines = [ln for ln in summary.lines() if ln.startswith("flip rate")]
    assert len(lines) == 1, summary.lines()
    return lines[0]


def test_line_names_the_threshold_and_the_share_above_half():
    # 2 of 6 at >= 0.9, 5 of 6 above 0.5 (0.5 itself is not above)
    _, s = collect_results(*results(own(0.95), own(0.91), own(0.7), own(0.6), own(0.55), own(0.5)), keep_failed=False)
    assert s.flip_rate_own_judge == pytest.approx(2 / 6)
    assert s.own_judge_threshold == 0.9 and s.own_judge_above_half == pytest.approx(5 / 6)
    assert own_line(s) == "flip rate, own judge   33.3% with P(target) >= 0.90 (tfidf-logreg; 83.3% above 0.5)"


def test_the_demo_figures_read_as_the_audit_expects():
    s = RunSummary(flip_rate_own_judge=0.45, own_judge="tfidf", own_judge_threshold=0.9, own_judge_above_half=50 / 60)
    assert own_line(s) == "flip rate, own judge   45.0% with P(target) >= 0.90 (tfidf; 83.3% above 0.5)"


def test_rejected_candidates_do_not_count():
    _, s = collect_results(*results(own(0.95), own(0.2), passed=[True, False]), keep_failed=True)
    assert s.flip_rate_own_judge == 1.0 and s.own_judge_above_half == 1.0


def test_a_judge_without_threshold_or_probability():
    """compare-generate's judge says flipped or not, with no probability: no threshold, no share above 0.5."""
    _, s = collect_results(*results({"name": "llm:judge", "flipped": True}, {"name": "llm:judge", "flipped": False}),
                    keep_failed=False)
    assert s.own_judge_threshold is None and s.own_judge_above_half is None
    assert own_line(s) == "flip rate, own judge   50.0% (llm:judge)"


def test_probabilities_without_a_threshold_say_what_the_share_is():
    _, s = collect_results(*results(own(0.8, threshold=None), own(0.3, threshold=None)), keep_failed=False)
    assert s.own_judge_threshold is None
    assert own_line(s) == "flip rate, own judge   50.0% (tfidf-logreg; 50.0% with P(target) above 0.5)"


def test_different_thresholds_are_not_named_as_one():
    _, s = collect_results(*results(own(0.95, 0.9), own(0.6, 0.5)), keep_failed=False)
    assert s.own_judge_threshold is None
    assert ">=" not in own_line(s)


def test_an_uneven_threshold_is_not_rounded():
    s = RunSummary(flip_rate_own_judge=0.5, own_judge="c", own_judge_threshold=0.925)
    assert own_line(s) == "flip rate, own judge   50.0% with P(target) >= 0.925 (c)"


def test_no_judge_no_line_and_summary_json_keeps_its_keys():
    _, s = collect_results(*results(None), keep_failed=False)
    assert not [ln for ln in s.lines() if ln.startswith("flip rate")]
    saved = json.loads(json.dumps(asdict(s)))
    for key in ("flip_rate_own_judge", "own_judge", "counterfactuals_written", "items", "extra", "complete"):
        assert key in saved
    assert saved["own_judge_threshold"] is None and saved["own_judge_above_half"] is None
