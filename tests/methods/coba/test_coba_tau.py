"""CoBA's vote threshold: the default takes a majority of the voters, the ``paper`` preset the paper's
"more than tau = (|M| + 1) / 2" with |M| read as the number of voters."""

from __future__ import annotations

from cfaug.cli import main
from cfaug.methods import build_method


def test_the_paper_preset_counts_votes_as_the_papers_text(tmp_path):
    paper = build_method("coba", {"models": f"{tmp_path}/a,{tmp_path}/b,{tmp_path}/c"}, preset="paper").config
    assert (paper.tau, paper.tau_rule) == (0, "more-than")
    default = build_method("coba", {}).config
    assert (default.tau, default.tau_rule) == (0, "at-least")


def test_the_rule_reaches_the_ensemble_a_lone_voter_cannot_pass_it(tmp_path, sentiment_tsv, capsys, monkeypatch):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "o.jsonl"
    code = main(["augment", str(sentiment_tsv), "-o", str(out), "--method", "coba", "--no-progress",
                 "--workers", "1", "-p", "models=tfidf-logreg", "-p", "importance=lime", "-p", "lime_samples=20",
                 "-p", "tau_rule=more-than", "-p", "vote_cache=none"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "a word would need more than (V + 1) / 2 = 1 votes of 1 voter(s)" in err and "Traceback" not in err
    assert not out.exists()
