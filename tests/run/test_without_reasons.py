"""Every item that gets no counterfactual carries one reason in results.jsonl, and the summary's reasons add
up to its ``items with none``, whatever took the item's counterfactuals away: the method itself, or a filter
that rejected every candidate. Checked on auto-CAD with a strict edit-rate filter, on the prompting methods
against the loopback server, and on result lines written without a reason (an older run resumed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cfaug.api import run_augment
from cfaug.run.results import NO_CANDIDATE, no_counterfactual_reason
from cfaug.run.summary import collect_results

from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CFAUG_LLM_BASE_URL", "CFAUG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)


def results(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def check_reasons_add_up(run_dir: Path, summary) -> list[dict]:
    """The invariant: one reason per item with none, in results.jsonl and in the summary (also as saved)."""
    none = [line for line in results(run_dir) if line["status"] == "no_counterfactual"]
    assert all(isinstance(line.get("reason"), str) and line["reason"] for line in none), none
    assert summary.items_without_counterfactual == len(none) == sum(summary.without_reasons.values())
    saved = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert saved["items_without_counterfactual"] == sum(saved["without_reasons"].values())
    return none


def test_auto_cad_with_a_strict_edit_rate_filter(sentiment_tsv, tmp_path):
    run_dir = tmp_path / "run"
    summary, rows = run_augment(str(sentiment_tsv), "auto-cad", text_col="Text", label_col="Sentiment",
                                run_dir=run_dir, progress=False,
                                # short texts held to max_edit_rate too, and only one token edit allowed
                                # whatever the rate (each row has alternatives=3 candidates: one of them often
                                # makes fewer edits); no flip or completeness filter, so that the edit-rate
                                # filter is the one that rejects
                                params={"classifier_background": "none", "max_edit_rate": 0.08,
                                        "max_edit_rate_short": None, "min_edits": 1, "require_flip": False})
    none = check_reasons_add_up(run_dir, summary)
    filtered = [line for line in none if line["counterfactuals"]]
    assert filtered, "the strict filter rejected no item's every candidate: the test needs a stricter one"
    for line in filtered:
        assert line["reason"] == "every candidate failed a filter: edit_rate"
        assert all(row["meta"]["filters"]["edit_rate"] is False for row in line["counterfactuals"])
    assert summary.without_reasons["every candidate failed a filter: edit_rate"] == len(filtered)
    assert summary.candidates_filtered_out >= len(filtered)


def swap_reply(body, prompt):
    """Flips the first review, returns the second unchanged and the third with its punctuation changed."""
    inline = re.findall(r"^Text: (.*)$", prompt, re.M)  # few-shot, cot: the item's text is the last
    text = inline[-1] if inline else re.search(r"Text:\n(.*?)\n\n", prompt, re.S).group(1)  # zero-shot
    if text.startswith("A great"):
        return "<revised>" + text.replace("great", "awful") + "</revised>"
    if text.startswith("Boring"):
        return "<revised>" + text.replace(".", "!") + "</revised>"
    return "<revised>" + text + "</revised>"


REVIEWS = [{"id": "1", "text": "A great, moving film.", "label": "positive"},
           {"id": "2", "text": "A dull and tired plot.", "label": "negative"},
           {"id": "3", "text": "Boring from start to end.", "label": "negative"}]


@pytest.mark.parametrize("method", ["zero-shot", "few-shot", "cot"])
def test_the_prompting_methods(method, tmp_path):
    run_dir = tmp_path / "run"
    with FakeLLM(default_reply=swap_reply) as srv:
        llm = {"base_url": srv.base_url, "model": "test-model", "retry_base_delay": 0.01, "request_timeout": 10,
               "cache_dir": str(tmp_path / "llm-cache")}
        summary, rows = run_augment(REVIEWS, method, run_dir=run_dir, progress=False,
                                    params={"llm": llm, "parse_retries": 0, "flip_check": "none"})
    none = check_reasons_add_up(run_dir, summary)
    assert summary.items_failed == 0 and {line["source_id"] for line in none} == {"2", "3"}
    assert [r["source_id"] for r in rows] == ["1"]


def test_lines_written_without_a_reason_are_given_one_from_their_candidates():
    from cfaug.data.records import Record, WorkItem

    items = [WorkItem(Record(str(i), {"text": f"t{i}"}, "positive"), "negative") for i in range(4)]
    rejected = {"text": "x", "meta": {"passed": False, "filters": {"flip": True, "edit_rate": False}}}
    done = {
        items[0].key: {"key": items[0].key, "status": "no_counterfactual", "counterfactuals": [rejected, rejected]},
        items[1].key: {"key": items[1].key, "status": "no_counterfactual", "counterfactuals": []},
        items[2].key: {"key": items[2].key, "status": "no_counterfactual", "counterfactuals": [],
                       "reason": "nothing to swap"},
        items[3].key: {"key": items[3].key, "status": "ok", "counterfactuals": [{"text": "y", "meta": {}}]},
    }
    _, summary = collect_results(items, done, keep_failed=False)
    assert summary.items_without_counterfactual == 3
    assert summary.without_reasons == {"every candidate failed a filter: edit_rate": 1, NO_CANDIDATE: 1,
                                       "nothing to swap": 1}
    assert no_counterfactual_reason([{"passed": False, "filters": {"a": None, "b": False}},
                                     {"passed": False, "filters": {"a": False}}]) == \
        "every candidate failed a filter: a, b"
    assert no_counterfactual_reason([{"passed": False}]) == "every candidate was rejected by the method's own checks"
