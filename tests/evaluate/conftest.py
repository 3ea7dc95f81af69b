"""Tiny local models and run directories for evaluation tests (nothing is downloaded)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

WORDS = ("the a film movie is was good bad great awful plot acting not very and it this i liked hated "
         "boring fun story . , !").split()


def _word_vocab() -> list[str]:
    return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer, 32-wide random BERT with a word-level vocabulary, saved as a local folder."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    path = tmp_path_factory.mktemp("tiny_bert")
    vocab = {w: i for i, w in enumerate(_word_vocab())}
    tok = BertTokenizerFast(vocab=vocab, do_lower_case=True)
    assert tok("good film")["input_ids"] == [2, vocab["good"], vocab["film"], 3]
    tok.save_pretrained(path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(_word_vocab()), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128)
    BertModel(cfg).save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer random GPT-2 with a word-level tokenizer that has a BOS token."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    path = tmp_path_factory.mktemp("tiny_gpt2")
    vocab = {w: i for i, w in enumerate(["<unk>", "<s>", "</s>", *WORDS])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                            pad_token="</s>").save_pretrained(path)
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(vocab), n_embd=32, n_layer=2, n_head=2, n_positions=64,
                     bos_token_id=1, eos_token_id=2)
    GPT2LMHeadModel(cfg).save_pretrained(path)
    return path


def write_run_dir(path: Path, rows: list[dict], *, input_file: Path | None = None) -> Path:
    """A run directory as 'cfaug augment' writes it, holding ``rows`` (contract rows, one item each)."""
    path.mkdir(parents=True, exist_ok=True)
    config = {"method": "auto-cad.v1", "params": {"variants": "rm,rep"},
              "task": {"name": "sentiment", "target": "opposite", "edit_roles": ["text"]},
              "schema": {"text_cols": {"text": "text"}, "label_col": "label", "id_col": None}, "seed": 0,
              "input": str(input_file) if input_file else "gone.tsv", "input_hash": "sha256:0", "max_chars": 100000,
              "limit": None}
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    manifest = {"versions": {"cfaug": "0.1.0", "python": "3.11"}, "started": "2026-01-01T00:00:00",
                "finished": "2026-01-01T00:01:00", "command": ["cfaug", "augment", "in.tsv"], "method_facts": {}}
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    summary = {"rows_read": len(rows), "items": len(rows), "counterfactuals_written": len(rows), "seconds": 60.0,
               "extra": {"llm_model": "test-model", "llm_requests": 3}}
    (path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    with open(path / "results.jsonl", "w", encoding="utf-8") as fh:
        for i, row in enumerate(rows):
            line = {"key": f"{row['source_id']}\u241f{row['label']}#{i}", "source_id": row["source_id"],
                    "target": row["label"], "status": "ok", "counterfactuals": [row]}
            fh.write(json.dumps(line) + "\n")
    return path


def contract_row(source_id: str, original: str, new: str, orig_label: str, target: str, *, method: str = "auto-cad.v1",
                 passed: bool = True, filters: dict | None = None, flipped: bool | None = None) -> dict:
    meta: dict = {"passed": passed, "variant": "rep-ct"}
    if filters is not None:
        meta["filters"] = filters
    if flipped is not None:
        meta["own_judge"] = {"name": "tfidf-logreg", "target_prob": 0.7 if flipped else 0.3, "flipped": flipped}
    return {"text": new, "label": target, "source_id": source_id, "original_text": original,
            "original_label": orig_label, "method": method, "meta": meta}


@pytest.fixture
def make_run_dir():
    """``make_run_dir(path, rows, input_file=None)`` -> a run directory (see :func:`write_run_dir`)."""
    return write_run_dir


@pytest.fixture
def make_row():
    """``make_row(source_id, original, new, orig_label, target, ...)`` -> a contract row."""
    return contract_row


#: a tiny labelled file (1 positive, 0 negative) for a TF-IDF judge
JUDGE_DATA = ("sentence,label\na good film,1\nfun and great,1\ni liked it,1\ngood good,1\na bad film,0\nboring,0\n"
              "i hated it,0\nbad awful,0\n")


@pytest.fixture
def run_and_judge(tmp_path, make_run_dir, make_row):
    """A run directory of four rows (the last failed its filters) and a small labelled file to train a judge on."""
    run = make_run_dir(tmp_path / "run", [
        make_row("1", "a good film", "a bad film", "positive", "negative"),
        make_row("2", "i hated it", "i liked it", "negative", "positive"),
        make_row("3", "boring", "boring indeed", "negative", "positive"),
        make_row("4", "a good film", "a film", "positive", "negative", passed=False),
    ])
    judge = tmp_path / "judge.csv"
    judge.write_text(JUDGE_DATA, encoding="utf-8")
    return run, judge
