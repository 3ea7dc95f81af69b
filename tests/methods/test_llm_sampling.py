"""Several answers per item, their temperatures and seeds, the demonstrations a small model gets, and the
source's opinion words kept out of answers (``avoid_source_words``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfaug.cli import main
from cfaug.data.records import Record, WorkItem
from cfaug.data.tasks import make_task
from cfaug.editing.lexicon import load_lexicon
from cfaug.llm.errors import LLMConfigError
from cfaug.methods import build_method
from cfaug.methods.compare_generate.few_shot import FewShot
from cfaug.methods.zero_shot import ZeroShot

from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)

SERVER = {"model": "m", "base_url": "http://127.0.0.1:9/v1"}


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CFAUG_LLM_BASE_URL", "CFAUG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def smollm2(tmp_path, monkeypatch) -> Path:
    """The packaged name smollm2-135m-instruct found as a header-only small GGUF file."""
    import struct
    from dataclasses import replace

    from cfaug.packaged_models import PACKAGED

    key, value = b"general.architecture", b"llama"
    pair = struct.pack("<Q", len(key)) + key + struct.pack("<I", 8) + struct.pack("<Q", len(value)) + value
    path = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + pair + b"\0" * 64)
    monkeypatch.setitem(PACKAGED, "smollm2-135m-instruct",
                        replace(PACKAGED["smollm2-135m-instruct"], find=lambda assemble=True: path))
    return path


def item(text: str, label: str) -> WorkItem:
    other = "positive" if label == "negative" else "negative"
    return WorkItem(Record(id="1", fields={"text": text}, label=label), other)


def test_a_small_model_run_here_draws_four_answers_and_any_other_model_one(smollm2):
    assert ZeroShot(ZeroShot.Config(llm={"model": "smollm2-135m-instruct"})).sample_count() == 4
    assert ZeroShot(ZeroShot.Config(llm={"model": str(smollm2)})).sample_count() == 4
    assert ZeroShot(ZeroShot.Config(llm=SERVER)).sample_count() == 1
    assert ZeroShot(ZeroShot.Config(llm={"model": "smollm2-135m-instruct"}, samples=2)).sample_count() == 2
    assert FewShot(FewShot.Config(llm={"model": "smollm2-135m-instruct"})).sample_count() == 4
    # the paper presets ask once per item, as the paper did
    assert build_method("zero-shot", {"llm": {"model": "smollm2-135m-instruct"}}, preset="paper").sample_count() == 1
    assert build_method("few-shot", {"llm": {"model": "smollm2-135m-instruct"}}, preset="paper").sample_count() == 1


def test_at_temperature_zero_answers_after_the_first_are_drawn_warmer():
    method = ZeroShot(ZeroShot.Config(llm=SERVER, samples=3))
    assert [method.sample_params(s) for s in range(3)] == [{}, {"temperature": 0.5}, {"temperature": 0.5}]
    warm = ZeroShot(ZeroShot.Config(llm=SERVER, samples=3, temperature=0.9, sample_temperature=0.2))
    assert [warm.sample_params(s) for s in range(3)] == [{}, {}, {}]  # the temperature asked for is kept


def test_a_small_prompt_set_gets_six_ordered_demonstrations_and_any_other_two_seeded(smollm2):
    assert FewShot(FewShot.Config(llm=SERVER)).demo_plan() == ("seeded", 2)
    assert FewShot(FewShot.Config(llm={"model": "smollm2-135m-instruct"})).demo_plan() == ("ordered", 6)
    assert FewShot(FewShot.Config(llm=SERVER, prompt_set="small")).demo_plan() == ("ordered", 6)
    assert FewShot(FewShot.Config(llm={"model": "smollm2-135m-instruct"}, n_demos=3,
                                  demo_selection="seeded")).demo_plan() == ("seeded", 3)


def test_steering_bans_the_source_opinion_words_of_its_own_polarity_and_their_forms():
    method = ZeroShot(ZeroShot.Config(llm=SERVER))
    assert method.steering(item("we love it , the food was great .", "positive"), "text") == {}  # off: none set
    method._avoid = load_lexicon()
    bias = method.steering(item("we love it , but the food was bad .", "positive"), "text")["logit_bias"]
    banned = {form for form, allowed in bias if allowed is False}
    assert {" love", " Love", " loved", " loves"} <= banned
    assert not any("bad" in form.lower() for form in banned)  # the other polarity stays allowed
    assert len(banned) == len(bias)
    assert method.steering(item("we ate at six .", "negative"), "text") == {}  # no opinion word: nothing banned


def test_avoid_source_words_follows_the_model(smollm2):
    sentiment = make_task("sentiment")
    local = ZeroShot(ZeroShot.Config(llm={"model": "smollm2-135m-instruct"}))
    assert local.avoided_lexicon(sentiment) is not None
    assert local.avoided_lexicon(make_task("nli")) is None  # sentiment only
    assert ZeroShot(ZeroShot.Config(llm=SERVER)).avoided_lexicon(sentiment) is None  # auto: off for a server
    with pytest.raises(LLMConfigError, match="avoid_source_words=on needs a GGUF model run here"):
        ZeroShot(ZeroShot.Config(llm=SERVER, avoid_source_words="on")).avoided_lexicon(sentiment)
    off = ZeroShot(ZeroShot.Config(llm={"model": "smollm2-135m-instruct"}, avoid_source_words="off"))
    assert off.avoided_lexicon(sentiment) is None
    paper = build_method("few-shot", {"llm": {"model": "smollm2-135m-instruct"}}, preset="paper")
    assert paper.avoided_lexicon(sentiment) is None


@pytest.mark.parametrize("method", ["zero-shot", "few-shot"])
def test_samples_are_sent_with_their_own_seeds_and_each_is_a_candidate(tmp_path, method):
    inp = tmp_path / "in.tsv"
    inp.write_text("text\tlabel\nA great, moving film.\tpositive\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    answers = iter(["<revised>A poor, moving film.</revised>", "<revised>A dull, tedious film.</revised>",
                    "<revised>A poor, moving film.</revised>"])
    with FakeLLM(default_reply=lambda body, prompt: next(answers)) as srv:
        code = main(["augment", str(inp), "-o", str(out), "--method", method, "--llm-base-url", srv.base_url,
                     "--llm-model", "m", "--concurrency", "1", "--no-progress", "-p", "flip_check=none",
                     "-p", "samples=3", "-p", "keep=3", "--seed", "0"])
        bodies = [r.body for r in srv.requests]
    assert code == 0
    assert len({b["seed"] for b in bodies}) == 3  # a seed per sample: at 0 the same seed repeats its answer
    assert sorted(b.get("temperature") for b in bodies) == [0.0, 0.5, 0.5]
    assert all("logit_bias" not in b for b in bodies)  # a server gets no llama.cpp word bans
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["text"] for r in rows) == ["A dull, tedious film.", "A poor, moving film."]  # a repeat once
