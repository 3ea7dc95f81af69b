"""The flip check every LLM method runs: an independent classifier must give a rewrite its target label before
it is written; the paper presets switch it off; tasks without a packaged judge say so."""

from __future__ import annotations

import pytest

from cfaug.api import run_augment
from cfaug.config import ConfigError
from cfaug.data.records import Counterfactual, Record
from cfaug.data.tasks import NLITask, SentimentTask
from cfaug.filters.flip_check import NAME, build_flip_check
from cfaug.methods.base import METHODS

from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)

SOURCE = Record("1", {"text": "The food was great and the staff were friendly."}, "positive")


def cf(text: str, target: str = "negative") -> Counterfactual:
    return Counterfactual(SOURCE, {"text": text}, target, "m", {"filters": {"changed": True}, "passed": True})


def test_a_flip_passes_and_a_non_flip_is_marked_with_the_judges_label():
    check, info = build_flip_check("auto", SentimentTask())
    assert check is not None and info["flip_check"] == "general" and info["train_rows"] == 20000
    flipped = cf("The food was awful and the staff were rude.")
    kept = cf("The food was great, and the staff were very friendly.")
    already_failed = cf("The food was terrible.")
    already_failed.meta.update(passed=False, filters={"changed": False})
    check.apply([flipped, kept, already_failed])
    assert flipped.passed and flipped.meta["filters"][NAME] is True
    assert flipped.meta[NAME]["label"] == "negative" and flipped.meta[NAME]["target_prob"] >= 0.5
    assert not kept.passed and kept.meta["filters"] == {"changed": True, NAME: False}
    assert "reads positive, not negative" in kept.meta["filter_notes"][NAME]
    assert NAME not in already_failed.meta  # a candidate its method rejected is not judged again


def test_no_packaged_judge_for_other_tasks_and_wrong_choices_are_refused():
    check, info = build_flip_check("auto", NLITask())
    assert check is None and "no packaged judge for task nli" in info["why"]
    with pytest.raises(ConfigError, match="binary sentiment judge"):
        build_flip_check("general", NLITask())
    with pytest.raises(ConfigError, match="flip_check_data"):
        build_flip_check("tfidf", SentimentTask())
    with pytest.raises(ConfigError, match="flip_check_model"):
        build_flip_check("hf", SentimentTask())
    with pytest.raises(ConfigError, match="must be one of"):
        build_flip_check("sometimes", SentimentTask())
    assert build_flip_check("none", SentimentTask()) == (None, {"flip_check": "none"})


def test_a_named_tfidf_judge_is_trained_on_its_file(tmp_path):
    data = tmp_path / "judge.tsv"
    rows = [("awful dull boring film", "negative"), ("great warm lovely film", "positive")] * 10
    data.write_text("text\tlabel\n" + "".join(f"{t}\t{y}\n" for t, y in rows), encoding="utf-8")
    check, info = build_flip_check("tfidf", SentimentTask(), data=str(data))
    assert info["flip_check"] == "tfidf" and info["train_rows"] == 20


def test_every_llm_methods_paper_preset_switches_it_off():
    for name in ("zero-shot", "few-shot", "cot", "self-refine", "opro", "compare-generate", "coba", "lass-pairs"):
        cls = METHODS.get(name)
        assert cls.presets["paper"].params.get("flip_check") == "none", name
        assert cls.Config().flip_check == "auto", name  # and the default is on


def test_a_run_writes_the_flip_and_keeps_the_non_flip_aside_with_its_reason(tmp_path):
    answers = {"The soup was great.": "<revised>The soup was awful.</revised>",
               "The room was great.": "<revised>The room was great, really.</revised>"}

    def reply(body, prompt):
        return next(a for q, a in answers.items() if q in prompt.split("Text:")[-1])

    data = [{"text": q, "label": "positive"} for q in answers]
    with FakeLLM(default_reply=reply) as srv:
        llm = {"base_url": srv.base_url, "model": "m", "cache_dir": str(tmp_path / "cache")}
        summary, rows = run_augment(data, "zero-shot", run_dir=tmp_path / "run", progress=False,
                                    params={"llm": llm})
        off, rows_off = run_augment(data, "zero-shot", run_dir=tmp_path / "run-paper", progress=False,
                                    preset="paper", params={"llm": llm})
    assert [r["text"] for r in rows] == ["The soup was awful."]
    assert summary.candidates_filtered_out == 1
    assert summary.without_reasons == {"every candidate failed a filter: flip_check": 1}
    assert sorted(r["text"] for r in rows_off) == ["The room was great, really.", "The soup was awful."]


# -- a near copy of the source fails whatever the judge says ------------------------------------------------

class SaysTarget:
    """A judge that gives every text the label ``says`` with probability 1 (so only the near-copy rule can fail
    a rewrite)."""

    name = "says-target"

    def __init__(self, labels, says):
        self.labels = list(labels)
        self.says = says
        self.seen = []

    def predict_proba(self, inputs):
        import numpy as np

        self.seen += list(inputs)
        return np.array([[1.0 if lab == self.says else 0.0 for lab in self.labels] for _ in inputs])


NEAR_COPY_NOTE = "a near copy of the source: only function words differ"


def test_a_near_copy_of_the_source_fails_even_when_the_judge_reads_the_target():
    from cfaug.filters.flip_check import FlipCheck

    check = FlipCheck(SaysTarget(["negative", "positive"], "negative"), SentimentTask())
    copy = cf("The food was great and the staff were also friendly.")  # "also": a function word
    spaced = cf("the food was great and the staff were friendly .")  # case and tokenization only
    flipped = cf("The food was awful and the staff were rude.")
    negated = cf("The food was not great and the staff were not friendly.")  # a negator is no function word
    check.apply([copy, spaced, flipped, negated])
    for c in (copy, spaced):
        assert not c.passed and c.meta["filters"][NAME] is False
        assert c.meta["filter_notes"][NAME] == NEAR_COPY_NOTE
        assert c.meta[NAME]["label"] == "negative"  # the judge's reading is still recorded
    for c in (flipped, negated):
        assert c.passed and c.meta["filters"][NAME] is True and NAME not in (c.meta.get("filter_notes") or {})


def test_a_near_copy_fails_with_its_own_note_not_the_judges():
    from cfaug.filters.flip_check import FlipCheck

    check = FlipCheck(SaysTarget(["negative", "positive"], "positive"), SentimentTask())  # reads the source's
    copy, other = cf("The food was great and the staff were also friendly."), cf("The food was cold.")
    check.apply([copy, other])
    assert not copy.passed and copy.meta["filter_notes"][NAME] == NEAR_COPY_NOTE
    assert not other.passed and "reads positive, not negative" in other.meta["filter_notes"][NAME]


def test_only_the_rewritten_field_of_a_pair_is_read_for_a_near_copy():
    from cfaug.filters.flip_check import FlipCheck

    task = NLITask(edit_side="hypothesis")
    source = Record("1", {"premise": "A man sleeps on a bench.", "hypothesis": "A man is resting."}, "entailment")

    def nli(hypothesis):
        return Counterfactual(source, {"premise": source.fields["premise"], "hypothesis": hypothesis},
                              "contradiction", "m", {"filters": {"changed": True}, "passed": True})

    check = FlipCheck(SaysTarget(["entailment", "neutral", "contradiction"], "contradiction"), task)
    copy, flipped = nli("The man is resting."), nli("A man is running a marathon.")
    check.apply([copy, flipped])
    assert not copy.passed and copy.meta["filter_notes"][NAME] == NEAR_COPY_NOTE
    assert flipped.passed
