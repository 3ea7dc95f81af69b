"""The ``lass`` method: ``cfaug train lass`` on a corpus and pairs, then mass reproduction with filters."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from cfaug.cli import main

NOUNS = ["pizza", "soup", "service", "staff", "pasta", "room", "screen", "battery", "keyboard", "price", "menu",
         "view"]
TINY = ["-p", "embedding_dim=32", "-p", "hidden_size=64", "-p", "latent=32", "-p", "batch_size=24", "-p", "lr=0.01",
        "-p", "anneal_steps=40", "-p", "epochs=60", "-p", "pretrain_epochs=2", "-p", "beam=2", "-p", "dev_share=0"]


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("lass")
    rows, pairs = [], []
    for n, w in enumerate(NOUNS):
        group = f"g{n % 3}"
        for k, (p, q) in enumerate(((f"the {w} was good .", f"the {w} was bad ."),
                                     (f"i loved the {w} .", f"i hated the {w} ."))):
            rows += [f"{w}{k}p\tpositive\t{p}\t{group}", f"{w}{k}n\tnegative\t{q}\t{group}"]
            pairs += [f"{w}{k}\tpositive\t{p}", f"{w}{k}\tnegative\t{q}"]
    corpus = d / "corpus.tsv"
    corpus.write_text("id\tlabel\ttext\tbusiness\n" + "\n".join(rows) + "\n")
    pair_file = d / "pairs.tsv"
    pair_file.write_text("batch_id\tSentiment\tText\n" + "\n".join(pairs) + "\n")
    return d, corpus, pair_file


@pytest.fixture(scope="module")
def model(files, tmp_path_factory):
    d, corpus, pairs = files
    store = tmp_path_factory.mktemp("store")
    mp = pytest.MonkeyPatch()
    mp.setenv("CFAUG_MODEL_STORE", str(store))
    code, out, err = cli("train", "lass", "--train-data", corpus, "-o", d / "model", "--no-progress",
                         "-p", f"pairs={pairs}", "-p", "group_col=business", *TINY)
    mp.undo()
    assert code == 0, err
    return d / "model", json.loads(out)


def test_training_saves_disae_filters_and_parents(model):
    folder, out = model
    assert out["train_rows"] == 48
    info = json.loads((folder / "artifact.json").read_text())
    facts = info["facts"]
    assert facts["disae"]["pairs"] == 24 and facts["disae"]["pretraining"]["texts"] == 48
    assert facts["filters"]["max_ppl"] > 1 and "quantile" in facts["filters"]["rule"]
    assert facts["filters"]["judge_training_texts"] == 48
    parents = [json.loads(x) for x in (folder / "parents.jsonl").read_text().splitlines()]
    assert len(parents) == 48 and {p["group"] for p in parents} == {"g0", "g1", "g2"}
    assert {"disae.pt", "vocab.json", "lm.pkl", "judge.pkl", "pretrain.pt", "checkpoint.pt"} <= {
        p.name for p in folder.iterdir()}


def test_reproduction_flips_sentiment_keeps_content_and_records_every_score(model, files, tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    folder, _ = model
    d, corpus, _ = files
    out = tmp_path / "out.jsonl"
    code, _, err = cli("augment", corpus, "-o", out, "--method", "lass", "--model", folder, "--no-progress",
                       "--keep-failed", *TINY, "-p", "temperature=0")  # beam search, as the paper
    assert code == 0, err
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 48
    by_source = {r["original_text"]: r for r in rows}
    good = by_source["the pizza was good ."]
    assert good["text"] == "the pizza was bad." and good["label"] == "negative"
    meta = good["meta"]
    assert meta["content_parent"] == "pizza0p" and meta["judge"]["target_prob"] > 0.5
    assert meta["filters"] == {"changed": True, "fluency": True, "flip": True}
    # the sentiment parent comes from the content parent's own group (business g0)
    parents = {json.loads(x)["id"]: json.loads(x) for x in (folder / "parents.jsonl").read_text().splitlines()}
    assert all(parents[r["meta"]["sentiment_parent"]]["group"] == r["meta"]["parent_group"] for r in rows)
    assert parents[meta["sentiment_parent"]]["group"] == "g0"
    flipped = sum(r["meta"]["filters"]["flip"] for r in rows)
    assert flipped >= 40


def test_sampled_reproduction_is_recorded_and_repeats_exactly(model, files, tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    folder, _ = model
    d, corpus, _ = files
    runs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        code, _, err = cli("augment", corpus, "-o", out, "--method", "lass", "--model", folder, "--no-progress",
                           "--keep-failed", *TINY, "-p", "temperature=0.7", "-p", "candidates=3")
        assert code == 0, err
        runs.append([json.loads(x) for x in out.read_text().splitlines()])
        manifest = json.loads((tmp_path / f"{name}.jsonl.run" / "manifest.json").read_text())
        assert "temperature 0.7" in json.dumps(manifest)
    assert [r["text"] for r in runs[0]] == [r["text"] for r in runs[1]]
    # several candidates of one item differ (identical ones are dropped), and most still carry the target
    per_source = {}
    for r in runs[0]:
        per_source.setdefault(r["original_text"], []).append(r["text"])
    assert max(len(v) for v in per_source.values()) > 1
    assert all(len(set(v)) == len(v) for v in per_source.values())
    assert sum(r["meta"]["filters"]["flip"] for r in runs[0]) >= 0.8 * len(runs[0])


def test_training_without_pairs_says_how_to_make_them(files, tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    _, corpus, _ = files
    code, _, err = cli("train", "lass", "--train-data", corpus, "-o", tmp_path / "m", "--no-progress")
    assert code == 2 and "pairs=FILE" in err and "lass-pairs" in err


def test_paper_preset_needs_pairs():
    from cfaug.config import ConfigError
    from cfaug.methods import build_method

    with pytest.raises(ConfigError, match="needs pairs"):
        build_method("lass", {}, preset="paper")
    m = build_method("lass", {"pairs": "x.tsv"}, preset="paper")
    assert m.config.pretrain_epochs == 0 and m.config.beam == 4 and m.config.temperature == 0


def test_the_judge_learns_from_as_many_texts_of_each_label():
    from cfaug.data.records import Record
    from cfaug.methods.lass.method import _balanced

    corpus = [(Record(f"p{i}", {"text": "good"}, "positive"), 1) for i in range(9)] + \
             [(Record(f"n{i}", {"text": "bad"}, "negative"), 0) for i in range(3)]
    rows = _balanced(corpus, seed=0)
    assert sorted(k for _, k in rows) == [0, 0, 0, 1, 1, 1]
    assert {r.id for r, k in rows if k == 0} == {"n0", "n1", "n2"} and rows == _balanced(corpus, seed=0)


def test_document_pairs_are_learnt_sentence_by_sentence(files, tmp_path, monkeypatch):
    """``pair_unit=sentence``: each review pair gives the pairs of its rewritten sentences; a review whose
    rewrite has no sentence in common length gives none; several files are read as one; a file with too few
    sentence pairs is refused."""
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    _, corpus, _ = files
    docs = tmp_path / "docs.tsv"
    rows = []
    for n, w in enumerate(NOUNS[:6]):
        rows += [f"{n}\tPositive\tWe came twice.<br />The {w} was good. I loved the {w}.",
                 f"{n}\tNegative\tWe came twice.<br />The {w} was bad. I hated the {w}."]
    rows += ["99\tPositive\tGood.", "99\tNegative\tBad. Really bad."]
    docs.write_text("batch_id\tSentiment\tText\n" + "\n".join(rows) + "\n")
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"text": "the soup was bad . fine .", "label": "negative",
                               "original_text": "the soup was good . fine .", "original_label": "positive"}) + "\n")
    small = [a for kv in zip(TINY[::2], TINY[1::2]) if not kv[1].startswith(("epochs", "pretrain_epochs"))
             for a in kv] + ["-p", "epochs=2", "-p", "pretrain_epochs=0"]
    code, _, err = cli("train", "lass", "--train-data", corpus, "-o", tmp_path / "m", "--no-progress",
                       "-p", f"pairs={docs},{one}", "-p", "pair_unit=sentence", *small)
    assert code == 0, err
    facts = json.loads((tmp_path / "m" / "artifact.json").read_text())["facts"]
    assert facts["sentence_pairs"] == {"from_pairs": 8, "pairs": 13, "sentences_left_out": {"added or removed": 2}}
    assert facts["pairs_per_file"] == {str(docs): 7, str(one): 1}
    assert facts["pairs_layout"] == "pair ids (batch_id); original columns"
    code, _, err = cli("train", "lass", "--train-data", corpus, "-o", tmp_path / "m1", "--no-progress",
                       "-p", f"pairs={one}", "-p", "pair_unit=sentence", *small)
    assert code == 2 and "1 positive/negative sentence pairs found" in err


def test_a_reproduction_equal_to_its_content_parent_is_never_written(model, files, tmp_path, monkeypatch):
    """A decoder that writes the content parent back has not transferred the sentiment: the text keeps its
    label, so nothing is written under the target, even with --keep-failed, and the summary says why."""
    import cfaug.methods.lass.training as training

    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    monkeypatch.setattr(training, "reproduce", lambda model, vocab, contents, parents, **kw: [
        "  " + c.upper() for c in contents])
    folder, _ = model
    d, corpus, _ = files
    out = tmp_path / "out.jsonl"
    code, _, err = cli("augment", corpus, "-o", out, "--method", "lass", "--model", folder, "--no-progress",
                       "--keep-failed", "--workers", "1", "--limit", "6", *TINY)
    assert code == 0, err
    assert out.read_text() == ""
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["without_reasons"] == {"the reproduction equals the content parent": 6}
