"""Target-to-source's ``paper`` preset end to end through the command line: a tiny random T5 built here from a
config (with a word-level tokenizer) is the generator checkpoint (``-p checkpoint=DIR``); ``cfaug train t2s
--preset paper`` pseudo-labels unlabelled sentences, fine-tunes the checkpoint on the pseudo-labelled ones,
trains both discriminators and runs PPO, and ``cfaug augment --preset paper --model DIR`` writes new ASTE
sentences. Sizes and step counts are overridden with ``-p`` to fit a test; the checks read the written rows,
their ``meta`` and the model folder's record of its steps, never the preset's values."""

from __future__ import annotations

import json
import random
from pathlib import Path


from cfaug.data.aste import parse_label_sequence, parse_triplets

ASPECTS = ["food", "service", "staff", "pizza"]
OPINIONS = {"POS": ["great", "good"], "NEG": ["bad", "rude"]}
#: dependency relations the templates are written with (others read as the unknown word)
RELATIONS = ("root nsubj obj iobj csubj ccomp xcomp obl advmod amod nmod det case cop cc conj punct compound aux "
             "mark acl advcl nummod appos").split()

#: tiny settings; the preset's own choices (pseudo-labelled generator data, pool labels and templates, no
#: delexicalising, PPO...) stay. The extractor trained for seconds is not confident, hence min_confidence.
TINY = ["-p", "min_confidence=0.3", "-p", "extractor_epochs=15", "-p", "generator_epochs=60",
        "-p", "generator_lr=0.01", "-p", "batch_size=8", "-p", "mixed_pairs=10", "-p", "discriminator_epochs=1",
        "-p", "ppo_steps=1", "-p", "max_new_tokens=12"]


def aste_lines(n: int, seed: int) -> list[str]:
    """ASTE-Data-V2 lines: one or two (aspect, opinion, polarity) clauses about a restaurant."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        (a, b), pa, pb = rng.sample(ASPECTS, 2), rng.choice(["POS", "NEG"]), rng.choice(["POS", "NEG"])
        oa, ob = rng.choice(OPINIONS[pa]), rng.choice(OPINIONS[pb])
        if rng.random() < 0.6:
            out.append(f"the {a} was {oa} .####[([1], [3], '{pa}')]")
        else:
            out.append(f"the {a} was {oa} but the {b} was {ob} .####[([1], [3], '{pa}'), ([6], [8], '{pb}')]")
    return out


def save_tiny_t5(path: Path, words: list[str]) -> Path:
    """A randomly initialised one-layer T5 (width 32) and a word-level fast tokenizer that appends ``</s>``."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    vocab = {w: i for i, w in enumerate(["<pad>", "</s>", "<unk>", *dict.fromkeys(words)])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", vocab["</s>"])])
    PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>",
                            unk_token="<unk>").save_pretrained(path)
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(vocab), d_model=32, d_kv=16, d_ff=64, num_layers=1, num_decoder_layers=1,
                      num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    T5ForConditionalGeneration(config).save_pretrained(path)
    return path


def test_paper_preset_end_to_end_t2s(tmp_path, monkeypatch, one_torch_thread, cli, read_jsonl):
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    train, unlabeled = tmp_path / "train.txt", tmp_path / "unlabeled.txt"
    train.write_text("\n".join(aste_lines(80, 0)) + "\n", encoding="utf-8")
    unlabeled.write_text("\n".join(x.split("####")[0] for x in aste_lines(60, 1)) + "\n", encoding="utf-8")
    words = sorted({w for f in (train, unlabeled) for x in f.read_text().splitlines()
                    for w in x.split("####")[0].split()})
    checkpoint = save_tiny_t5(tmp_path / "t5", [*words, "positive", "negative", "neutral", "|", ";", "[", "]",
                                                *RELATIONS])
    params = ["-p", f"unlabeled={unlabeled}", "-p", f"checkpoint={checkpoint}", *TINY]
    model, out = tmp_path / "model", tmp_path / "aug.jsonl"

    code, printed, err = cli("train", "t2s", "--task", "aste", "--train-data", train, "-o", model, "--preset", "paper",
                             *params, "--no-progress", "--device", "cpu", "--seed", "0")
    assert code == 0, err
    assert json.loads(printed)["train_rows"] == 80

    # the training stage's record: the pool holds pseudo-labelled sentences, the checkpoint was fine-tuned on
    # them alone (not on the labelled data) and kept its own vocabulary, then tuned by PPO
    steps = json.loads((model / "stages.json").read_text())
    pseudo = steps["pool"]["pseudo"]["kept"]
    assert pseudo > 0 and steps["pool"]["pool"] == 80 + pseudo
    gen = steps["generator_sl"]
    assert gen["from_checkpoint"] == str(checkpoint) and gen["data"] == "pseudo" and gen["delexicalised"] is False
    assert gen["examples"] + gen["dev_examples"] == pseudo
    assert gen["vocabulary"] == len(json.loads((checkpoint / "tokenizer.json").read_text())["model"]["vocab"])
    assert steps["ppo"]["steps"] == 1 and "reward_last_tenth" in steps["ppo"]
    assert (model / "generator_sl" / "model.safetensors").read_bytes() != \
        (model / "generator" / "model.safetensors").read_bytes()  # PPO changed the supervised generator
    assert steps["fluency"]["training"] and steps["alignment"]["training"]

    code, _, err = cli("augment", train, "--task", "aste", "--method", "t2s", "--preset", "paper", "--model", model,
                       *params, "-p", "candidates=4", "-p", "keep=2", "--limit", "4", "-o", out, "--keep-failed",
                       "--no-progress", "--device", "cpu", "--seed", "0")
    assert code == 0, err
    run = Path(f"{out}.run")
    facts = json.loads((run / "manifest.json").read_text())["method_facts"]["training"]
    assert facts["trained_now"] is False and facts["artifacts"] == str(model)

    rows = read_jsonl(out)
    assert len({r["source_id"] for r in rows}) == 4 and len(rows) == 4 * 4  # every candidate, with --keep-failed
    parents = set()
    for r in rows:
        m = r["meta"]
        assert r["method"] == "t2s.v1" and r["text"].strip()
        # the label and the template come from two different entries of the pool (training or pseudo-labelled)
        assert {m["label_parent_source"], m["template_parent_source"]} <= {"train", "pseudo"}
        assert m["label_parent"] != m["template_parent"]
        parents |= {m["label_parent_source"], m["template_parent_source"]}
        assert 0 <= m["alignment"] <= 1 and 0 <= m["fluency"] <= 1
        assert set(m["filters"]) - {"top"} == {"terms", "alignment", "fluency"}
        assert m["passed"] is all(m["filters"].values())
        if m["filters"]["terms"]:
            # the label's terms found in the written sentence: the output label's spans point at them
            tokens = r["text"].split()
            triplets = parse_triplets(r["label"])
            wanted = parse_label_sequence(m["label_sequence"])
            assert sorted(t.terms(tokens) for t in triplets) == sorted((a, o) for a, o, _ in wanted)
        else:
            assert r["label"] == "[]"
    assert "pseudo" in parents  # the pseudo-labelled sentences take part in generation
    assert any(r["meta"]["filters"]["terms"] for r in rows)  # the fine-tuned checkpoint writes its label's terms
    passed = [r for r in rows if r["meta"]["passed"]]
    per_item = {}
    for r in passed:
        per_item.setdefault(r["source_id"], []).append(r)
    assert all(len(v) <= 2 for v in per_item.values())  # keep: the best two of each record

    summary = json.loads((run / "summary.json").read_text())
    assert summary["complete"] and summary["items_failed"] == 0 and summary["counterfactuals_written"] == len(rows)
    assert summary["candidates_filtered_out"] == len(rows) - len(passed)
