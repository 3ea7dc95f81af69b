"""CoBA's ``paper`` preset end to end through the command line: two tiny random Hugging Face sequence
classifiers built here are the ensemble M (``-p models=DIR1,DIR2``, one of them with generic LABEL_0/LABEL_1
outputs named by ``model_labels``); ``cfaug train coba --preset paper`` fits the label judge, and ``cfaug
augment --preset paper --model DIR`` runs the LLM path (extract, modify, reconstruct) against the scripted
loopback server. The checks read the written rows, their ``meta`` and the run summary, never the preset's
values."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cfaug.methods.coba.config import NO_PRINCIPAL_TRIPLE, NO_TRIPLE_FROM_TEXT

from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)

#: cheap attribution settings (the paper preset leaves them at their defaults)
LIGHT = ["-p", "lime_samples=20", "-p", "shapley_samples=1", "-p", "ig_steps=4", "-p", "vote_cache=none"]

#: short reviews without punctuation, so that every word the ensemble can name sits in one triple; n2's
#: extraction is scripted to name nothing of its text (no principal triple, no row)
ROWS = [
    ("p1", "Positive", "he loved the film and the acting was great"),
    ("n1", "Negative", "the plot was dull and the ending was awful"),
    ("p2", "Positive", "the story was wonderful"),
    ("n2", "Negative", "the music was weak and the script was poor"),
    ("p3", "Positive", "the cast was brilliant"),
    ("n3", "Negative", "the film was boring"),
]
NOTHING = "n2"

FLIP = {"loved": "hated", "great": "poor", "dull": "lively", "awful": "wonderful", "wonderful": "dreary",
        "brilliant": "dull", "boring": "gripping"}
SWAP = {"he": "she"}  #: the gender swap the paper applies to every triple, on the words of these rows
#: the predicate of every scripted triple: a function word (a triple's words must come from its text, function
#: words apart) that no text holds, so it never gets a vote
FILLER = "is"


def reply(body, prompt):
    """Extraction: one triple per word of the text (``word | is``), or a triple with no word of the text for
    the ``NOTHING`` row (refused: a triple's words must come from its text); modification: each triple's word flipped (or negated); reconstruction: the
    subjects in the order shown."""
    if "Break the text below" in prompt:
        text = prompt.rsplit("Text:", 1)[1].strip()
        if text == dict((i, t) for i, _, t in ROWS)[NOTHING]:
            return "1. blint | vrop | qzx"
        return "\n".join(f"{n}. {w} | {FILLER} |" for n, w in enumerate(text.split(), 1))
    if "Rewrite each of them" in prompt:
        block = prompt.split("Triples:\n", 1)[1].split("\n\nWrite only", 1)[0]
        out = []
        for line in block.splitlines():
            num, subject, rest = re.match(r"^(\d+)\. (.*?) \| (.*)$", line).groups()
            out.append(f"{num}. {FLIP.get(subject, 'not ' + subject)} | {rest}")
        return "\n".join(out)
    if "Write a text that states" in prompt:
        block = prompt.split("Triples:\n", 1)[1].split("\n\nReply", 1)[0]
        subjects = [re.sub(r"^\d+\.\s*", "", line).split("|")[0].strip() for line in block.splitlines() if "|" in line]
        return "<revised>" + " ".join(subjects) + "</revised>"
    return "OK"


def test_paper_preset_end_to_end_coba(tmp_path, monkeypatch, make_tiny_bert, isolated_llm_cache, one_torch_thread,
                                      cli, read_jsonl):
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    words = sorted({w for _, _, t in ROWS for w in t.split()})
    generic = make_tiny_bert(tmp_path / "m-generic", "classifier", id2label={0: "LABEL_0", 1: "LABEL_1"},
                             words=words, seed=1)
    named = make_tiny_bert(tmp_path / "m-named", "classifier", words=words, seed=2)
    models = ["-p", f"models={generic},{named}", "-p", "model_labels=negative,positive"]
    data = tmp_path / "reviews.tsv"
    data.write_text("id\tSentiment\tText\n" + "".join(f"{i}\t{lab}\t{t}\n" for i, lab, t in ROWS), encoding="utf-8")
    model, out = tmp_path / "model", tmp_path / "cf.jsonl"

    code, printed, err = cli("train", "coba", "--train-data", data, "-o", model, "--preset", "paper", *models,
                             *LIGHT, "--no-progress", "--device", "cpu")
    assert code == 0, err
    assert json.loads(printed)["train_rows"] == len(ROWS)

    with FakeLLM(default_reply=reply) as srv:
        code, _, err = cli("augment", data, "-o", out, "--method", "coba", "--preset", "paper", *models, *LIGHT,
                           "--model", model, "--llm-base-url", srv.base_url, "--llm-model", "test-model",
                           "--concurrency", "2", "--no-progress", "--device", "cpu", "--seed", "0")
        assert code == 0, err
        extract, modify, rebuild = (srv.count("Break the text below"), srv.count("Rewrite each of them"),
                                    srv.count("Write a text that states"))
    run = Path(f"{out}.run")
    facts = json.loads((run / "manifest.json").read_text())["method_facts"]
    assert facts["training"]["trained_now"] is False and facts["training"]["artifacts"] == str(model)

    rows = read_jsonl(out)
    summary = json.loads((run / "summary.json").read_text())
    written = {r["source_id"] for r in rows}
    # every item is extracted; one candidate per item (the paper's), each of those modified and rebuilt
    assert extract == len(ROWS) and modify == rebuild == len(rows) == len(written)
    assert written and NOTHING not in written  # at least one item is written, and the scripted one is not
    expected = {NO_TRIPLE_FROM_TEXT: 1, NO_PRINCIPAL_TRIPLE: len(ROWS) - len(written) - 1}
    assert summary["without_reasons"] == {k: v for k, v in expected.items() if v}
    assert summary["counterfactuals_written"] == len(rows) and summary["items_failed"] == 0

    voters = {f"{m}/{meth}" for m in (generic, named) for meth in ("lime", "integrated-gradients", "shapley")}
    sources = {i: (lab, text) for i, lab, text in ROWS}
    for r in rows:
        label, text = sources[r["source_id"]]
        assert r["Sentiment"] == ("Negative" if label == "Positive" else "Positive") and r["original_Text"] == text
        m = r["meta"]
        # the three LLM steps, in order
        assert [a["prompt"] for a in m["llm"]] == ["coba-extract-sentiment.v1", "coba-modify-sentiment.v1",
                                                   "coba-reconstruct-sentiment.v1"]
        # both fine-tuned models explained by all three attribution methods vote, and the votes alone decide
        # (no lexicon rule): every named word is principal or spurious, the principal ones by more votes
        ens = m["ensemble"]
        assert set(ens["top"]) == voters
        assert ens["principal"] and set(ens["principal"]) | set(ens["spurious"]) == set(ens["votes"])
        assert not set(ens["principal"]) & set(ens["spurious"])
        if ens["spurious"]:
            assert min(ens["votes"][w] for w in ens["principal"]) > max(ens["votes"][w] for w in ens["spurious"])
        # principal triples (a principal word, no spurious one) are edited; spurious and normal ones are not,
        # apart from the gender swap applied to every triple
        for t in m["triples"]:
            (word,) = t["before"][0].split()
            category = ("spurious" if word in ens["spurious"] else "principal" if word in ens["principal"]
                        else "normal")
            assert t["category"] == category
            after = t["after"][0]
            if category == "principal":
                assert after == FLIP.get(word, f"not {SWAP.get(word, word)}")
            else:
                assert after == SWAP.get(word, word)
        assert m["principal_edited"]["edited"] == m["principal_edited"]["asked"] == sum(
            t["category"] == "principal" for t in m["triples"])
        assert r["Text"] == " ".join(m["triples"][k]["after"][0] for k in m["order"])
        # the judge is recorded, but no label check filters the rewrite
        assert set(m["filters"]) == {"changed"} and m["passed"] and "target_prob" in m["own_judge"]
    if "p1" in written:
        p1 = next(r for r in rows if r["source_id"] == "p1")
        assert "she" in p1["Text"].split() and "he" not in p1["Text"].split()
