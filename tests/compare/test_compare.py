"""``cfaug compare`` end to end on the fixture reviews: two offline methods (auto-CAD, CoBA) and zero-shot
skipped for want of an endpoint; reruns reuse finished methods; a method added later runs alone; zero-shot
against the loopback server with its request and token counts; downstream with intervals and paired tests;
the Python API's DataFrame; and the parts (sample, tests, ranking) on their own."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from cfaug_tests_llm_server import FakeLLM

from cfaug.cli import main

#: fast settings: auto-CAD without its background sample, CoBA offline as in tests/methods/coba/test_coba.py
FAST = ["-p", "auto-cad:classifier_background=none",
        "-p", "coba:models=tfidf-logreg,cnn", "-p", "coba:classifier_epochs=2", "-p", "coba:lime_samples=60",
        "-p", "coba:shapley_samples=1", "-p", "coba:ig_steps=8"]
#: the metric suite without the token encoder (the sentence encoder and the n-gram fluency stay)
SUITE = ["--no-bertscore", "--no-progress"]
LIMIT = ["--limit", "16"]

METHOD_KEYS = {"method", "status", "reason", "rows", "counterfactuals", "coverage", "flip_rate", "edit_rate",
               "minimality", "similarity", "fluency", "diversity", "seconds", "llm", "downstream", "run_dir", "output"}

TEST_ROWS = [("Positive", "A great and moving story with a wonderful cast."),
             ("Negative", "A dull and boring plot with a terrible ending."),
             ("Positive", "The music is beautiful and the acting is superb."),
             ("Negative", "The script is weak and the acting is awful."),
             ("Positive", "A charming, clever film."), ("Negative", "A tedious, stupid film.")]


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CFAUG_LLM_BASE_URL", "CFAUG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)


def compare(data, out, methods, *extra):
    return main(["compare", str(data), "--methods", methods, "-o", str(out), *LIMIT, *FAST, *SUITE, *extra])


def summary_of(out) -> dict:
    return json.loads((Path(out) / "summary.json").read_text(encoding="utf-8"))


def by_method(summary: dict) -> dict:
    return {e["method"]: e for e in summary["methods"]}


def stamps(out: Path) -> dict:
    """Modification times of every file in the run directories."""
    return {str(p.relative_to(out)): p.stat().st_mtime_ns for p in (out / "runs").rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def finished(tmp_path_factory, sentiment_tsv) -> Path:
    """A comparison of auto-CAD and zero-shot (skipped), then CoBA added: the folder after both runs."""
    out = tmp_path_factory.mktemp("compare") / "cmp"
    assert compare(sentiment_tsv, out, "auto-cad,zero-shot") == 0
    first = summary_of(out)
    before = stamps(out)
    assert compare(sentiment_tsv, out, "auto-cad,coba,zero-shot") == 0
    s = by_method(summary_of(out))
    # adding a method later runs only that one: auto-CAD's run directory is untouched and reused
    assert s["auto-cad"]["reused"] and not s["coba"]["reused"]
    assert {k: v for k, v in stamps(out).items() if k.startswith("runs/auto-cad")} == before
    assert s["auto-cad"]["seconds"] == by_method(first)["auto-cad"]["seconds"]
    return out


def test_two_offline_methods_are_compared_and_zero_shot_is_skipped_with_its_reason(finished, capsys):
    summary = summary_of(finished)
    s = by_method(summary)
    assert [e["method"] for e in summary["methods"]][-1] == "zero-shot"
    assert set(summary["ranking"]) == {"auto-cad", "coba"} and summary["ranking_rule"]
    for name in ("auto-cad", "coba"):
        e = s[name]
        assert METHOD_KEYS <= set(e) and e["status"] == "ok" and e["reason"] is None
        assert e["rows"] == 16 and e["counterfactuals"] > 0
        assert 0 < e["coverage"] <= 1 and 0 <= e["flip_rate"] <= 1 and 0 < e["edit_rate"] < 1
        assert e["minimality"] == pytest.approx(1 - e["edit_rate"], abs=0.05)
        assert 0 < e["similarity"] <= 1 and e["fluency"]["name"] == "ngram_perplexity" and e["fluency"]["originals"]
        assert 0 < e["diversity"] <= 1 and e["seconds"] > 0 and e["llm"] is None and e["downstream"] is None
        assert e["run_dir"] == f"runs/{name}" and (finished / e["output"]).exists()
        # every rate with its 95% interval around it
        for rate in ("coverage", "flipped_coverage", "flip_rate"):
            lo, hi = e[f"{rate}_ci"]
            assert 0 <= lo <= e[rate] <= hi <= 1 and hi - lo > 0.05  # 16 rows leave wide intervals
        # every item with no counterfactual has one reason, and they add up
        assert e["items_without_counterfactual"] == sum(e["without_reasons"].values())
        assert e["items_without_counterfactual"] == round(e["rows"] * (1 - e["coverage"]))
        scores = json.loads((finished / "scores" / f"{name}.json").read_text())
        assert scores["groups"][name]["metrics"][0]["name"] == "flip_rate"
        assert scores["compare"]["judge"]["kind"] == "cross-fitted on the sample"
        assert len(scores["compare"]["judgements"]) == e["counterfactuals"]
    zs = s["zero-shot"]
    assert zs["status"] == "skipped" and "--llm-base-url" in zs["reason"] and zs["run_dir"] is None
    assert not (finished / "runs" / "zero-shot").exists()
    # the judge is cross-fitted: several folds, none judging a row it was trained on
    assert summary["judge"]["folds"] > 1 and summary["judge"]["independent"] is True
    assert summary["data"]["rows"] == 16 and summary["data"]["labels"] == {"negative": 8, "positive": 8}
    sample = [json.loads(line) for line in (finished / "sample.jsonl").read_text().splitlines()]
    assert len(sample) == 16 and set(sample[0]) == {"id", "Sentiment", "Text"}
    asked = json.loads((finished / "compare.json").read_text())
    assert asked["methods"] == ["auto-cad", "coba", "zero-shot"] and asked["limit"] == 16 and asked["seed"] == 0
    assert asked["data_sha256"].startswith("sha256:")
    md = (finished / "summary.md").read_text()
    assert "| 1 | " in md and "zero-shot** skipped" in md
    second = s[summary["ranking"][1]]
    assert second["tied_with_leader"] in (True, False) and s[summary["ranking"][0]]["tied_with_leader"] is None
    assert summary["ranking_note"] and md.startswith(summary["ranking_note"])
    assert (f"| 2{' ≈' if second['tied_with_leader'] else ''} | {second['method']} | ok |") in md
    html = (finished / "report.html").read_text()
    assert 'data-figure="flipped_coverage"' in html and 'id="ranking-note"' in html


def test_a_rerun_reuses_every_finished_method(finished, sentiment_tsv, tmp_path, capsys):
    out = tmp_path / "cmp"
    shutil.copytree(finished, out)
    before = stamps(out)
    scores_before = {p.name: p.stat().st_mtime_ns for p in (out / "scores").iterdir()}
    start = time.perf_counter()
    assert compare(sentiment_tsv, out, "auto-cad,coba,zero-shot") == 0
    took = time.perf_counter() - start
    s = by_method(summary_of(out))
    assert s["auto-cad"]["reused"] and s["coba"]["reused"]
    assert stamps(out) == before  # no method ran: every run directory file untouched
    assert {p.name: p.stat().st_mtime_ns for p in (out / "scores").iterdir()} == scores_before
    assert took < 10
    printed = capsys.readouterr().out
    assert re.search(r"^1\s+\S+\s+ok", printed, re.MULTILINE) and "report" in printed and "zero-shot: skipped" in printed


def flip_reply(body, prompt):
    swaps = {"wonderful": "awful", "brilliant": "dull", "great": "terrible", "boring": "gripping",
             "weak": "strong", "terrible": "great", "excellent": "awful", "beautiful": "ugly", "awful": "excellent",
             "dull": "lively"}
    text = re.search(r"Text:\n(.*?)\n\n", prompt, re.DOTALL).group(1)
    return "<revised>" + re.sub(r"\w+", lambda m: swaps.get(m.group(0), m.group(0)), text) + "</revised>"


def test_zero_shot_against_the_loopback_server_counts_requests_and_tokens(finished, sentiment_tsv, tmp_path):
    out = tmp_path / "cmp"
    shutil.copytree(finished, out)
    with FakeLLM(default_reply=flip_reply) as srv:
        assert compare(sentiment_tsv, out, "auto-cad,coba,zero-shot", "--llm-base-url", srv.base_url,
                       "--llm-model", "test-model") == 0
        asked = srv.count()
    s = by_method(summary_of(out))
    zs = s["zero-shot"]
    assert zs["status"] == "ok" and asked == 16
    assert zs["llm"]["requests"] == 16 and zs["llm"]["input_tokens"] > 0 and zs["llm"]["output_tokens"] > 0
    assert zs["llm"]["cost_usd"] is None  # the test model has no price
    assert zs["counterfactuals"] > 0 and zs["flip_rate"] is not None
    assert s["auto-cad"]["reused"] and s["coba"]["reused"]  # the offline ones did not run again
    # a budget for the whole comparison: at a known price zero-shot spends within it, or stops when it is spent
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"test-model": {"input": 1.0, "output": 2.0}}))
    priced = ["--llm-base-url", None, "--llm-model", "test-model", "--price-table", str(prices),
              "--no-cache"]
    with FakeLLM(default_reply=flip_reply) as srv:
        priced[1] = srv.base_url
        assert compare(sentiment_tsv, tmp_path / "rich", "zero-shot", *priced, "--budget", "1") == 0
        zs = by_method(summary_of(tmp_path / "rich"))["zero-shot"]
        assert zs["status"] == "ok" and 0 < zs["llm"]["cost_usd"] <= 1
        assert compare(sentiment_tsv, tmp_path / "poor", "zero-shot", *priced, "--budget", "0.0005") == 3
    zs = by_method(summary_of(tmp_path / "poor"))["zero-shot"]
    assert zs["status"] == "failed" and zs["stopped"] and "rerun the same command to resume" in zs["reason"]
    assert (zs["llm"] or {}).get("cost_usd", 0) <= 0.0005


def test_downstream_gives_gains_with_intervals_and_paired_tests(finished, sentiment_tsv, tmp_path, fixtures_dir):
    out = tmp_path / "cmp"
    shutil.copytree(finished, out)
    test = tmp_path / "test.tsv"
    test.write_text("Sentiment\tText\n" + "".join(f"{y}\t{t}\n" for y, t in TEST_ROWS), encoding="utf-8")
    assert compare(sentiment_tsv, out, "auto-cad,coba,zero-shot", "--test", str(test),
                   "--challenge", f"yelp={fixtures_dir / 'yelp_sample.tsv'}",
                   "--reference", f"human={fixtures_dir / 'pairs.tsv'}") == 0
    summary = summary_of(out)
    s = by_method(summary)
    ds = json.loads((out / "downstream.json").read_text())
    assert set(ds["gains"]) == {"originals + auto-cad", "originals + coba", "originals + human"}
    assert ds["seeds"] == [0, 1, 2] and set(ds["tests"]) == {"test", "yelp"}
    for name in ("auto-cad", "coba", "human"):
        for t in ("test", "yelp"):
            fig = s[name]["downstream"][t]
            lo, hi = fig["ci95"]
            assert lo <= fig["gain"] + 1e-9 and fig["gain"] <= hi + 1e-9 and 0 <= fig["accuracy"] <= 1
    assert s["human"]["status"] == "reference" and summary["methods"][-1]["method"] == "human"
    assert s["zero-shot"]["downstream"] is None
    pairs = {(p["a"], p["b"], p["test_set"]) for p in ds["paired_tests"]}
    assert ("auto-cad", "coba", "test") in pairs and ("coba", "human", "yelp") in pairs
    assert all(0 <= p["p_value"] <= 1 and p["test"] for p in ds["paired_tests"])
    assert summary["downstream"]["paired_tests"] == ds["paired_tests"]
    assert summary["downstream"]["originals"]["test"] == ds["accuracy"]["originals"]["test"]["mean"]
    # the settings every training run chose, how, and why: 16 originals (+ their counterfactuals) are too few
    # rows to choose on, so the default is kept rather than a held-out handful deciding
    assert set(ds["selection"]) == {"originals", "originals + auto-cad", "originals + coba", "originals + human"}
    for cond, runs in ds["selection"].items():
        assert [r["seed"] for r in runs] == [0, 1, 2]
        for r in runs:
            assert r["settings"] == {"C": 1.0, "ngram_max": 2} and r["how"] == "default" and r["score"] is None
            assert "training rows, under 50" in r["note"]
    assert summary["downstream"]["selection"] == ds["selection"]
    assert isinstance(ds["warnings"], list) and summary["downstream"]["warnings"] == ds["warnings"]
    assert ds["dev"]["source"].startswith("none: each training run chooses its settings by cross-validation")
    md = (out / "summary.md").read_text()
    assert "- originals: C=1, ngram_max=2 with seeds 0, 1, 2 (default: 16 training rows, under 50" in md
    assert 'id="selection-table"' in (out / "report.html").read_text()
    # the same again: read back, not trained again
    stamp = (out / "downstream.json").stat().st_mtime_ns
    assert compare(sentiment_tsv, out, "auto-cad,coba,zero-shot", "--test", str(test),
                   "--challenge", f"yelp={fixtures_dir / 'yelp_sample.tsv'}",
                   "--reference", f"human={fixtures_dir / 'pairs.tsv'}") == 0
    assert (out / "downstream.json").stat().st_mtime_ns == stamp


def test_the_python_api_returns_the_summary_as_a_dataframe(finished, sentiment_tsv, tmp_path):
    import cfaug

    out = tmp_path / "cmp"
    shutil.copytree(finished, out)
    df = cfaug.compare(str(sentiment_tsv), methods="auto-cad,coba,zero-shot", output=out, limit=16,
                       method_params={"auto-cad": {"classifier_background": "none"},
                                      "coba": {"models": "tfidf-logreg,cnn", "classifier_epochs": 2,
                                               "lime_samples": 60, "shapley_samples": 1, "ig_steps": 8}},
                       bertscore=False)
    assert list(df["method"]) == [e["method"] for e in summary_of(out)["methods"]]
    assert list(df["status"]) == ["ok", "ok", "skipped"] and df["reused"].iloc[:2].all()
    assert {"coverage", "flip_rate", "edit_rate", "llm_requests", "fluency", "fluency_originals"} <= set(df.columns)
    assert df.attrs["exit_code"] == 0 and df.attrs["out_dir"] == str(out)
    from cfaug.api import compare as api_compare

    assert callable(cfaug.compare) and callable(api_compare) and "compare" in dir(cfaug)


@pytest.mark.parametrize("extra, message", [
    (["--methods", "no-such-method"], "unknown method"),
    (["--methods", "auto-cad", "--reference", "h=x.tsv"], "go(es) with --test"),
    (["--methods", "auto-cad", "-p", "no_such_param=1"], "no compared method has the parameter"),
    (["--methods", "auto-cad", "-p", "cobra:models=cnn"], "unknown method 'cobra'"),
    (["--methods", "auto-cad", "--judge", "x", "--judge-train", "y"], "name one flip-rate judge"),
    (["--methods", "auto-cad", "--test", "{fixtures}/nli.tsv"], "nli.tsv"),
    (["--methods", "auto-cad", "--test", "{fixtures}/no-such.tsv"], "no such file"),
    (["-o", "x"], "name the methods to compare"),
])
def test_bad_options_exit_2_before_any_method_runs(sentiment_tsv, fixtures_dir, tmp_path, capsys, extra, message):
    out = tmp_path / "cmp"
    extra = [a.replace("{fixtures}", str(fixtures_dir)) for a in extra]
    assert main(["compare", str(sentiment_tsv), "-o", str(out), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (out / "runs").exists()


def test_a_method_that_fails_is_reported_and_the_others_still_compared(sentiment_tsv, tmp_path, capsys, monkeypatch):
    from cfaug.run import runner

    real = runner.run

    def run(source, options, output=None, log=None):
        if options.method == "coba.v1":
            raise RuntimeError("boom")
        return real(source, options, output, log)

    monkeypatch.setattr(runner, "run", run)
    out = tmp_path / "cmp"
    assert compare(sentiment_tsv, out, "auto-cad,coba", "--limit", "8", "--no-embedding") == 4
    s = by_method(summary_of(out))
    assert s["auto-cad"]["status"] == "ok" and s["coba"]["status"] == "failed"
    assert s["coba"]["reason"] == "RuntimeError: boom" and s["coba"]["rank"] is None
    assert summary_of(out)["ranking"] == ["auto-cad"]


# --- the parts ------------------------------------------------------------------------------------------


def test_the_sample_is_balanced_by_label_and_says_which_rows(tmp_path):
    from cfaug.compare.sample import read_input, write_sample
    from cfaug.data.schema import Schema
    from cfaug.data.tasks import make_task

    data = tmp_path / "d.tsv"  # 30 negative rows, then 10 positive ones
    data.write_text("id\tlabel\ttext\n" + "".join(f"n{i}\tnegative\tbad {i}\n" for i in range(30))
                    + "".join(f"p{i}\tpositive\tgood {i}\n" for i in range(10)), encoding="utf-8")
    task = make_task("sentiment")
    dataset = read_input(str(data), task, Schema())
    sample = write_sample(str(data), dataset, tmp_path, 8, seed=1)
    assert sample.label_counts == {"negative": 4, "positive": 4} and sample.sampled
    assert sample.rows_taken == "8 of 40: a seeded sample balanced by label (seed 1)"
    ids = [r.id for r in sample.records]
    assert ids == sorted(ids, key=lambda i: (i[0] == "p", int(i[1:])))  # in input order
    assert ids != [r.id for r in write_sample(str(data), dataset, tmp_path, 8, seed=2).records]
    whole = write_sample(str(data), dataset, tmp_path, None, seed=1)
    assert len(whole.records) == 40 and not whole.sampled and whole.rows_taken == "all 40"


def test_the_paired_tests_and_the_bootstrap():
    from cfaug.compare.downstream import bootstrap_ci, mcnemar_exact, sign_flip_p

    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)
    assert mcnemar_exact(5, 5) == 1.0
    diff = [1.0] * 6 + [0.0] * 4  # binary differences: the sign-flip test is McNemar's
    assert sign_flip_p(diff, 20000, 0) == pytest.approx(mcnemar_exact(6, 0), abs=0.01)
    lo, hi = bootstrap_ci([1.0, 0.0] * 20, 1000, 0)
    assert lo < 0.5 < hi and bootstrap_ci([1.0, 0.0] * 20, 1000, 0) == [lo, hi]


def test_ranking_puts_finished_methods_first_by_flipped_coverage():
    from cfaug.compare.summary import rank

    entries = [{"method": "s", "status": "skipped"}, {"method": "f", "status": "failed"},
               {"method": "a", "status": "ok", "flipped_coverage": 0.5, "edit_rate": 0.1, "seconds": 1},
               {"method": "b", "status": "ok", "flipped_coverage": 0.8, "edit_rate": 0.3, "seconds": 1},
               {"method": "c", "status": "ok", "flipped_coverage": 0.8, "edit_rate": 0.2, "seconds": 9}]
    ranked = rank(entries)
    assert [e["method"] for e in ranked] == ["c", "b", "a", "f", "s"]
    assert [e["rank"] for e in ranked] == [1, 2, 3, None, None]


def test_counterfactuals_train_in_the_samples_order_whatever_order_the_run_finished_in(tmp_path, monkeypatch):
    """A run directory lists items as they finished (engine workers vary that); the downstream classifier
    gets each method's counterfactuals in the sample's order, so the same comparison trains the same model."""
    from types import SimpleNamespace

    from cfaug.compare import downstream as ds
    from cfaug.data.records import Record
    from cfaug.data.tasks import make_task
    from cfaug.evaluate.downstream.harness import LabelledSet

    task = make_task("sentiment")
    sample = [Record(f"r{i}", {"text": f"text {i}"}, "positive" if i % 2 else "negative") for i in range(6)]
    pairs = [SimpleNamespace(source_id=r.id, item_id=f"{r.id}#0", judge_input=f"rewrite of {r.id}",
                             target="negative" if r.label == "positive" else "positive") for r in sample]
    seen = {}

    def fake_run_downstream(conditions, *args, **kwargs):
        for c in conditions:
            seen[c.name] = c.data()[0]
        raise RuntimeError("stop here")

    monkeypatch.setattr(ds, "run_downstream", fake_run_downstream)
    test = LabelledSet("test", ["a", "b"], ["positive", "negative"], "t", "in-domain", "sha")
    dev = LabelledSet("dev", [], [], "held-out")
    for order in (pairs, pairs[::-1], pairs[3:] + pairs[:3]):
        with pytest.raises(RuntimeError, match="stop here"):
            ds.run_compare_downstream(tmp_path, sample, tmp_path / "sample.jsonl", "s", task,
                                      {"m": (list(order), "sha")}, [], [test], dev, "tfidf-svm", None, [0], 0,
                                      lambda m: None)
        (method_condition,) = [name for name in seen if name != ds.ORIGINALS]
        assert seen[method_condition][len(sample):] == [f"rewrite of r{i}" for i in range(6)]
