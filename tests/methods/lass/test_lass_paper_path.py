"""LASS's ``paper`` preset end to end through the command line: the pair stage (``--method lass-pairs --preset
paper``) against the scripted loopback server, then ``cfaug train lass --preset paper -p pairs=...`` on its
output with tiny Dis-AE sizes, then ``cfaug augment --method lass --preset paper --model DIR``. The checks
read the written pairs and rows, their ``meta`` and the model folder, never the preset's values."""

from __future__ import annotations

import json
import re
from pathlib import Path



from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)

NOUNS = ["pizza", "soup", "service", "staff", "pasta", "room", "screen", "battery", "keyboard", "price"]
FLIP = {"good": "bad", "bad": "good", "loved": "hated", "hated": "loved"}
#: the pair stage's answer for this review repeats it: an answer equal to its source is no pair
REPEATED = "the price was good ."
#: tiny Dis-AE sizes and a learning rate that trains it in a few dozen epochs (the paper's is far slower); the
#: preset's choices of what it learns from (the pairs alone), how it decodes (beam search) and which filters
#: apply stay
TINY = ["-p", "embedding_dim=32", "-p", "hidden_size=64", "-p", "latent=32", "-p", "batch_size=24",
        "-p", "lr=0.01", "-p", "anneal_steps=60", "-p", "epochs=80", "-p", "dev_share=0"]


def corpus_rows() -> list[tuple[str, str, str]]:
    """(id, label, text): for each noun, a liked and a disliked review of it in two phrasings."""
    rows = []
    for w in NOUNS:
        rows += [(f"{w}0p", "positive", f"the {w} was good ."), (f"{w}0n", "negative", f"the {w} was bad ."),
                 (f"{w}1p", "positive", f"i loved the {w} ."), (f"{w}1n", "negative", f"i hated the {w} .")]
    return rows


def flip(body, prompt):
    """The pair stage's model: the review being asked about with its opinion words flipped."""
    text = re.findall(r"^Review \([^)]*\): (.*)$", prompt, re.M)[-1]
    if text == REPEATED:
        return f"<revised>{text}</revised>"
    return "<revised>" + " ".join(FLIP.get(w, w) for w in text.split()) + "</revised>"


def test_paper_preset_end_to_end_lass(tmp_path, monkeypatch, isolated_llm_cache, one_torch_thread, cli, read_jsonl):
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    rows = corpus_rows()
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("id\tlabel\ttext\n" + "".join(f"{i}\t{lab}\t{t}\n" for i, lab, t in rows), encoding="utf-8")
    pairs, model, out = tmp_path / "pairs.jsonl", tmp_path / "model", tmp_path / "lass.jsonl"

    # 1. the pair stage: the paper's instruction with five demonstrations, one request per review
    with FakeLLM(default_reply=flip) as srv:
        code, _, err = cli("augment", corpus, "-o", pairs, "--method", "lass-pairs", "--preset", "paper",
                           "--llm-base-url", srv.base_url, "--llm-model", "test-model", "--no-progress", "--seed", "0")
        assert code == 0, err
        bodies = [r.body for r in srv.requests]
    assert len(bodies) == len(rows) and all(b["temperature"] == 0.2 for b in bodies)
    assert all(len(re.findall(r"^Review \(", b["messages"][-1]["content"], re.M)) == 6 for b in bodies)
    written = read_jsonl(pairs)
    assert len(written) == len(rows) - 1 and REPEATED not in {r["original_text"] for r in written}
    for r in written:
        assert r["label"] != r["original_label"] and r["text"] != r["original_text"]
        assert r["method"] == "lass-pairs.v1" and len(r["meta"]["demos"]) == 5
    summary = json.loads(Path(f"{pairs}.run/summary.json").read_text())
    assert summary["items_without_counterfactual"] == 1 and summary["counterfactuals_written"] == len(written)

    # 2. Dis-AE learns from those pairs alone (no pretraining on the corpus)
    code, printed, err = cli("train", "lass", "--train-data", corpus, "-o", model, "--preset", "paper",
                             "-p", f"pairs={pairs}", *TINY, "--no-progress", "--device", "cpu", "--seed", "0")
    assert code == 0, err
    assert json.loads(printed)["train_rows"] == len(rows)
    facts = json.loads((model / "artifact.json").read_text())["facts"]
    assert facts["pairs_file"] == str(pairs) and facts["disae"]["pairs"] == len(written)
    assert not facts["disae"].get("pretraining")  # the paper: pairs only
    assert facts["filters"]["max_ppl"] > 1 and facts["filters"]["judge_training_texts"] == len(rows)

    # 3. mass reproduction: each review's content with a sentiment parent of the other label, beam search,
    # only the fluent ones the judge gives the target are written
    code, _, err = cli("augment", corpus, "-o", out, "--method", "lass", "--preset", "paper", "--model", model,
                       "-p", f"pairs={pairs}", *TINY, "--no-progress", "--device", "cpu", "--seed", "0")
    assert code == 0, err
    manifest = json.loads(Path(f"{out}.run/manifest.json").read_text())
    assert manifest["method_facts"]["training"]["trained_now"] is False
    assert manifest["method_facts"]["decoding"].startswith("beam ")  # beam search, not sampling
    result = read_jsonl(out)
    assert result, "no reproduction passed the paper's filters"
    parents = {json.loads(x)["id"]: json.loads(x) for x in (model / "parents.jsonl").read_text().splitlines()}
    source = {i: (lab, t) for i, lab, t in rows}
    for r in result:
        m = r["meta"]
        label, text = source[r["source_id"]]
        assert r["label"] == ("negative" if label == "positive" else "positive") and r["original_text"] == text
        assert r["text"] != text and r["method"] == "lass.v1"
        assert m["content_parent"] == r["source_id"] and parents[m["sentiment_parent"]]["label"] == r["label"]
        # both of the paper's filters ran and passed: perplexity under the threshold, judged as the target
        assert m["filters"] == {"changed": True, "fluency": True, "flip": True} and m["passed"]
        assert m["ppl"] <= m["max_ppl"] and m["judge"]["target_prob"] >= 0.5
    # most reproductions keep their review's noun and take the other sentiment
    kept_noun = [r for r in result if set(r["text"].split()) & set(NOUNS) & set(r["original_text"].split())]
    assert len(kept_noun) >= len(result) // 2
    summary = json.loads(Path(f"{out}.run/summary.json").read_text())
    assert summary["complete"] and summary["counterfactuals_written"] == len(result)
