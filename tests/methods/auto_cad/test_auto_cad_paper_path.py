"""auto-CAD's ``paper`` preset end to end through the command line: ``cfaug train auto-cad --preset paper``
with a tiny random masked LM built here, then ``cfaug augment --preset paper --model DIR``. The checks read
the written rows and their ``meta`` (which variants were made, which proposer, how REP-CT chose, which filter
decided), never the preset's values."""

from __future__ import annotations

import json
from pathlib import Path


#: six reviews whose nouns lean to one label ("film" in the positive ones, "movie" in the negative ones), so
#: that C, trained on them, still leans to the source after REP-CT and the synonym set has something to do
ROWS = [
    ("p1", "Positive", "A great film with a wonderful cast."),
    ("p2", "Positive", "The film is brilliant and the music is superb."),
    ("p3", "Positive", "A charming film , the story is clever."),
    ("n1", "Negative", "A dull movie with a weak cast."),
    ("n2", "Negative", "The movie is boring and the music is poor."),
    ("n3", "Negative", "A tedious movie , the story is stupid."),
]


def test_paper_preset_end_to_end_auto_cad(tmp_path, monkeypatch, make_tiny_bert, one_torch_thread, cli, read_jsonl):
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    # a masked LM whose top guesses for any slot are opinion words of both polarities and the two nouns
    # (the nouns are what the synonym step can swap)
    mlm = make_tiny_bert(tmp_path / "mlm", "mlm", bias={"great": 30.0, "movie": 25.0, "film": 25.0,
                                                        "story": 24.0, "awful": 20.0, "terrible": 10.0})
    data = tmp_path / "reviews.tsv"
    data.write_text("id\tSentiment\tText\n" + "".join(f"{i}\t{lab}\t{t}\n" for i, lab, t in ROWS), encoding="utf-8")
    model, out = tmp_path / "model", tmp_path / "cf.jsonl"

    code, printed, err = cli("train", "auto-cad", "--train-data", data, "-o", model, "--preset", "paper",
                             "-p", f"mlm={mlm}", "--no-progress", "--device", "cpu")
    assert code == 0, err
    assert json.loads(printed)["train_rows"] == len(ROWS) and (model / "artifact.json").is_file()

    code, _, err = cli("augment", data, "-o", out, "--preset", "paper", "-p", f"mlm={mlm}", "--model", model,
                       "--workers", "1", "--keep-failed", "--no-progress", "--device", "cpu", "--seed", "0")
    assert code == 0, err
    run = Path(f"{out}.run")
    facts = json.loads((run / "manifest.json").read_text())["method_facts"]["training"]
    assert facts["trained_now"] is False and facts["artifacts"] == str(model)  # the model of `cfaug train`
    assert facts["fit_facts"]["classifier_folds"] == 1  # one classifier C on all the data, no cross-fitting

    rows = read_jsonl(out)
    sources = {i: (lab, text) for i, lab, text in ROWS}
    assert rows and {r["source_id"] for r in rows} == set(sources)
    for r in rows:
        label, text = sources[r["source_id"]]
        assert r["original_Sentiment"] == label and r["original_Text"] == text
        assert r["Sentiment"] == ("Negative" if label == "Positive" else "Positive")  # flipped, input's spelling
        assert r["Text"] != text and r["method"] == "auto-cad.v1"
        m = r["meta"]
        assert m["proposer"] == f"mlm:{mlm.name}"  # replacements come from the masked LM, not the lexicon ranker
        assert m["edits"] and m["causal_terms"]
        # the only filter is MoverScore; it alone decides what passes
        assert set(m["filters"]) == {"moverscore"} and m["passed"] is m["filters"]["moverscore"]
        assert m["own_judge"]["name"] == "tfidf-logreg" and 0.0 <= m["confidence"] <= 1.0

    variants = {r["meta"]["variant"] for r in rows}
    assert variants == {"rm-ct", "rep-ct", "syn"}  # RM-CT, REP-CT and the synonym set
    for r in rows:
        m = r["meta"]
        if m["variant"] == "rm-ct":
            # each sentence loses its single most important term, whatever C says afterwards
            assert all(e["kind"] == "remove" and e["new"] == "" for e in m["edits"])
            assert len(m["edits"]) == len(m["causal_terms"])
        elif m["variant"] == "rep-ct":
            # each causal term replaced by the candidate with the best Eq. 1 score on the text as edited so far
            chosen = [c for c in m["choices"] if "new" in c]
            assert chosen and all("eq1" in c and c["candidates"] > 0 for c in chosen)
            new = [e["new"].lower() for e in m["edits"]]
            assert all(any(c["new"] in n.split() for n in new) for c in chosen)  # ("an ugly": article agreed)
        else:
            # the REP-CT rewrite of the same item, with words still supporting the source swapped for synonyms
            rep = next(x for x in rows if x["source_id"] == r["source_id"] and x["meta"]["variant"] == "rep-ct")
            assert m["synonyms"] >= 1 and len(m["edits"]) == len(rep["meta"]["edits"]) + m["synonyms"]
            assert sum(e["kind"] == "synonym" for e in m["edits"]) == m["synonyms"]
            assert m["confidence"] > rep["meta"]["confidence"]  # the synonyms move C further to the target

    summary = json.loads((run / "summary.json").read_text())
    assert summary["complete"] and summary["items_failed"] == 0
    assert summary["counterfactuals_written"] == len(rows)
    assert summary["candidates_filtered_out"] == sum(not r["meta"]["passed"] for r in rows)
