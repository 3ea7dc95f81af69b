"""Every LLM method end to end on a real language model: SmolLM2-135M-Instruct run by llama.cpp inside cfaug,
no server. What is asserted is the pipeline and the output contract, not quality (a 135M model is a floor):

- every item ends with rows, a counted reason, or a recorded failure;
- no written row has its source's words, and none holds commentary or tags;
- every written row passed the independent flip check (the default), whose verdict is in its meta;
- a second run over the same run directory runs nothing and writes the same rows (resumable).

The request cache with this backend is tested in tests/llm/backends/test_llamacpp.py. One item, short answers
and the smallest settings keep the file to about a minute on 2 cores; skipped, with the reason, where the
``local-llm`` extra or the model package is missing."""

from __future__ import annotations

import re
from typing import Any

import pytest

from cfaug.api import run_augment
from cfaug.nlp.tokens import same_words

from cfaug_tests_real_model import SMOLLM2, needs_real_model  # noqa: E402  (loaded by tests/conftest.py)

#: one short review sentence (written for this test): every request a method makes costs seconds on CPU
DATA = [{"text": "the soup was great and the staff were friendly .", "label": "positive"}]
#: CoBA trains its classifiers on the input, which needs both labels: a second sentence, which it also rewrites
TWO = [*DATA, {"text": "the room was dirty and the bed was awful .", "label": "negative"}]

#: (method, preset, params): each kept as small as the method allows
METHODS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("zero-shot", None, {}),
    ("few-shot", "small", {}),
    ("cot", None, {"n_demos": 1}),
    ("self-refine", "small", {"rounds": 1}),
    ("compare-generate", "small", {"max_steps": 2, "patience": 1}),
    ("opro", "small", {"steps": 2}),
    ("coba", None, {"mode": "llm", "models": "tfidf-logreg", "importance": "lime", "lime_samples": 40}),
    ("lass-pairs", None, {"n_demos": 1}),
]

_COMMENTARY = re.compile(r"</?revised>|\b(?:note|explanation)\s*:|\bI (?:changed|replaced)\b", re.I)


def _run(tmp_path, method: str, preset: str | None, params: dict[str, Any]):
    llm = {"model": SMOLLM2, "cache_dir": str(tmp_path / "cache"), "concurrency": 1}
    return run_augment(list(TWO if method == "coba" else DATA), method, preset=preset or "default", run_dir=tmp_path / "run", progress=False, seed=0,
                       params={"llm": llm, "max_tokens": 32, "parse_retries": 0, **params})


@needs_real_model
@pytest.mark.parametrize("method,preset,params", METHODS, ids=[m[0] for m in METHODS])
def test_llm_method_on_the_real_model(tmp_path, method, preset, params):
    summary, rows = _run(tmp_path, method, preset, params)
    data = TWO if method == "coba" else DATA
    assert summary.complete and summary.items == len(data)
    assert summary.items_without_counterfactual + summary.items_failed <= summary.items
    # every item with none says why
    assert sum(summary.without_reasons.values()) == summary.items_without_counterfactual
    assert summary.extra["llm_requests"] > 0 and summary.extra["llm_cost_usd"] == 0.0
    sources = {d["text"]: d for d in data}
    for row in rows:
        source = row["original_text"]
        assert source in sources and not same_words(row["text"], source)
        assert not _COMMENTARY.search(row["text"]), row["text"]
        assert row["label"] != sources[source]["label"]
    # resumable: the same run directory again runs nothing and gives the same rows
    again, rows_again = _run(tmp_path, method, preset, params)
    assert again.items_resumed == len(data)  # failed items too: they run again only with --retry-failed
    assert [r["text"] for r in rows_again] == [r["text"] for r in rows]
