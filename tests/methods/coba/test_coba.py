"""``cfaug augment --method coba`` end to end: offline on the fixture reviews, and the LLM path against the
scripted loopback server (requests per item, meta, resume without asking again)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cfaug.cli import main
from cfaug.methods.coba.config import NO_PRINCIPAL_TRIPLE, NO_TRIPLE_FROM_TEXT, PRINCIPAL_UNCHANGED, REBUILT_ORIGINAL

from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)

FAST = ["-p", "models=tfidf-logreg,cnn", "-p", "classifier_epochs=2", "-p", "lime_samples=60",
        "-p", "shapley_samples=1", "-p", "ig_steps=8"]


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CFAUG_LLM_BASE_URL", "CFAUG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_offline_rewrites_carry_the_whole_story_in_meta(tmp_path, sentiment_tsv):
    out = tmp_path / "out.jsonl"
    assert main(["augment", str(sentiment_tsv), "-o", str(out), "--method", "coba", "--no-progress", *FAST,
                 "-p", "candidates=2"]) == 0
    rows = read_jsonl(out)
    assert len({r["source_id"] for r in rows}) >= 20  # most of the 40 fixture reviews get a rewrite
    for r in rows:
        m = r["meta"]
        assert r["Text"] != r["original_Text"] and r["Sentiment"] != r["original_Sentiment"]
        assert set(m["ensemble"]) >= {"principal", "spurious", "votes", "top"}
        assert len(m["ensemble"]["top"]) == 6  # 2 models x 3 importance methods
        assert m["triples"] and {t["category"] for t in m["triples"]} <= {"principal", "spurious", "normal"}
        assert 0.0 <= m["own_judge"]["target_prob"] <= 1.0 and m["confidence"] == m["own_judge"]["target_prob"]
        assert m["edits"] and m["filters"]["changed"]
    r03 = [r for r in rows if r["source_id"] == "r03"]
    assert r03 and all("excellent" not in r["Text"] for r in r03)
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["counterfactuals_written"] == len(rows) and summary["flip_rate_own_judge"] is not None
    manifest = json.loads((tmp_path / "out.jsonl.run" / "manifest.json").read_text())
    assert manifest["method"] == "coba.v1"
    # rerun: nothing is trained or generated again, the output is the same
    again = tmp_path / "again.jsonl"
    assert main(["augment", str(sentiment_tsv), "-o", str(again), "--method", "coba", "--no-progress", *FAST,
                 "-p", "candidates=2"]) == 0
    assert [r["Text"] for r in read_jsonl(again)] == [r["Text"] for r in rows]


def test_a_rerun_with_other_rewrite_settings_reads_the_votes_back(tmp_path, sentiment_tsv, monkeypatch):
    from cfaug.importance import words

    monkeypatch.setenv("CFAUG_IMPORTANCE_CACHE", str(tmp_path / "votes"))
    args = ["augment", str(sentiment_tsv), "--method", "coba", "--no-progress", "--workers", "1", "--limit", "12",
            *FAST]
    assert main([*args, "-o", str(tmp_path / "first.jsonl")]) == 0
    assert len(list((tmp_path / "votes").glob("*.sqlite"))) == 1

    def explained_again(*args, **kwargs):
        raise AssertionError("a text was explained again")

    with monkeypatch.context() as mp:
        for cls in (words.LimeImportance, words.ShapleyImportance, words.IntegratedGradients):
            mp.setattr(cls, "explain", explained_again)
        assert main([*args, "-p", "candidates=2", "-p", "keep=2", "-o", str(tmp_path / "cached.jsonl")]) == 0
    assert main([*args, "-p", "candidates=2", "-p", "keep=2", "-p", "vote_cache=none",
                 "-o", str(tmp_path / "fresh.jsonl")]) == 0
    cached, fresh = read_jsonl(tmp_path / "cached.jsonl"), read_jsonl(tmp_path / "fresh.jsonl")
    assert cached == fresh and len(cached) > len(read_jsonl(tmp_path / "first.jsonl"))


def test_require_flip_drops_what_the_judge_does_not_flip(tmp_path, sentiment_tsv):
    out = tmp_path / "out.jsonl"
    assert main(["augment", str(sentiment_tsv), "-o", str(out), "--method", "coba", "--no-progress", *FAST,
                 "-p", "require_flip=true", "-p", "min_target_prob=0.99", "--keep-failed"]) == 0
    rows = read_jsonl(out)
    assert rows and all(r["meta"]["passed"] == (r["meta"]["own_judge"]["target_prob"] >= 0.99) for r in rows)


def test_offline_never_writes_a_realisation_that_is_the_original(tmp_path, sentiment_tsv, monkeypatch):
    from cfaug.methods.coba.offline import OfflinePlanner

    monkeypatch.setattr(OfflinePlanner, "realise", lambda self, plan, text, *a, **kw: ("  " + text.lower(), {}))
    out = tmp_path / "out.jsonl"
    assert main(["augment", str(sentiment_tsv), "-o", str(out), "--method", "coba", "--no-progress", "--workers",
                 "1", "--limit", "6", "--keep-failed", "-p", "models=tfidf-logreg", "-p", "importance=lime",
                 "-p", "lime_samples=20"]) == 0
    assert read_jsonl(out) == []
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["without_reasons"].get(REBUILT_ORIGINAL, 0) >= 1
    assert sum(summary["without_reasons"].values()) == 6


@pytest.mark.parametrize("mode", ["offline", "llm"])
def test_an_attribution_method_that_cannot_explain_a_classifier_stops_before_any_item(
        tmp_path, sentiment_tsv, capsys, monkeypatch, isolated_llm_cache, mode):
    """A voter that can never vote (here: integrated gradients told it cannot explain the classifier) stops
    the run with exit 2 and one message before its first item, instead of failing every item alike."""
    from cfaug.config import ConfigError
    from cfaug.importance.words import IntegratedGradients

    def cannot(self, model):
        raise ConfigError(f"integrated gradients cannot explain {model.name}")

    monkeypatch.setattr(IntegratedGradients, "check", cannot)
    out = tmp_path / "out" / "o.jsonl"
    with FakeLLM(default_reply=scripted) as srv:
        code = main(["augment", str(sentiment_tsv), "-o", str(out), "--method", "coba", "--no-progress",
                     "--workers", "1", "-p", f"mode={mode}", "-p", "models=tfidf-logreg",
                     "-p", "importance=lime,integrated-gradients", "-p", "lime_samples=20",
                     "--llm-base-url", srv.base_url, "--llm-model", "m"])
        assert srv.count("Break the text below") == 0
    err = capsys.readouterr().err
    assert code == 2, err
    assert "cfaug: error: coba: integrated gradients cannot explain" in err
    assert "-p importance=... (now lime,integrated-gradients)" in err and "Traceback" not in err
    results = out.parent / "o.jsonl.run" / "results.jsonl"
    assert not results.exists() or results.read_text() == ""  # no item was run, none recorded
    assert not out.exists()


def test_offline_needs_two_labels_and_a_sentiment_task(tmp_path, capsys, nli_tsv):
    one = tmp_path / "one.tsv"
    one.write_text("Sentiment\tText\nPositive\tA great film.\nPositive\tA superb cast.\n", encoding="utf-8")
    assert main(["augment", str(one), "-o", str(tmp_path / "o.jsonl"), "--method", "coba", "--no-progress"]) == 2
    assert "--train-data" in capsys.readouterr().err
    assert main(["augment", str(nli_tsv), "-o", str(tmp_path / "n.jsonl"), "--task", "nli", "--method", "coba",
                 "--no-progress"]) == 2
    assert "mode=llm" in capsys.readouterr().err


# -- the LLM path ------------------------------------------------------------------------------------
FLIP = {"great": "dreadful", "superb": "clumsy", "excellent": "poor", "beautiful": "ugly", "wonderful": "awful",
        "brilliant": "dull", "loved": "hated", "charming": "tiresome", "boring": "gripping", "weak": "strong",
        "terrible": "superb", "awful": "wonderful", "dull": "lively", "hated": "loved", "tedious": "charming"}


def scripted(body, prompt):
    """Extraction: one triple per clause of the text; modification: flip opinion words; reconstruction:
    join the triples."""
    if "Break the text below" in prompt:
        text = prompt.rsplit("Text:", 1)[1].strip()
        clauses = [c.strip(" .") for c in re.split(r"\band\b|\.", text) if c.strip(" .")]
        lines = []
        for n, c in enumerate(clauses, 1):
            words = c.split()
            lines.append(f"{n}. {' '.join(words[:2])} | {words[2] if len(words) > 2 else 'is'} | {' '.join(words[3:])}")
        return "Here you are:\n" + "\n".join(lines)
    if "Rewrite each of them" in prompt:
        block = prompt.split("Triples:\n", 1)[1].split("\n\nWrite only", 1)[0]
        return re.sub(r"\w+", lambda m: FLIP.get(m.group(0), m.group(0)), block)
    if "Write a text that states" in prompt:
        block = prompt.split("Triples:\n", 1)[1].split("\n\nReply", 1)[0]
        parts = [" ".join(x.strip() for x in re.sub(r"^\d+\.\s*", "", line).split("|")).strip()
                 for line in block.splitlines() if "|" in line]
        return "<revised>" + ". ".join(parts) + ".</revised>"
    return "OK"


def llm_augment(inp, out, srv, *extra):
    return main(["augment", str(inp), "-o", str(out), "--method", "coba", "-p", "mode=llm", "--llm-base-url",
                 srv.base_url, "--llm-model", "test-model", "--concurrency", "2", "--no-progress", *FAST,
                 "-p", "flip_check=none", *extra])  # scripted answers: no classifier flip check


def test_llm_path_asks_extract_modify_and_reconstruct(tmp_path, sentiment_tsv):
    rows_in = sentiment_tsv.read_text(encoding="utf-8").splitlines()[:9]  # header + 8 reviews, both labels
    inp = tmp_path / "in.tsv"
    inp.write_text("\n".join(rows_in) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    with FakeLLM(default_reply=scripted) as srv:
        assert llm_augment(inp, out, srv, "-p", "candidates=2") == 0
        extract, modify, rebuild = (srv.count("Break the text below"), srv.count("Rewrite each of them"),
                                    srv.count("Write a text that states"))
        modify_prompts = [r.prompt for r in srv.requests if "Rewrite each of them" in r.prompt]
        assert srv.count() == extract + modify + rebuild
    # every item is extracted; only one with a principal triple is modified, and only one whose principal
    # triples the modification changed is rebuilt (two candidates each)
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    reasons = summary["without_reasons"]
    asked = [p.split("Triples:\n", 1)[1].split("\n\nWrite only", 1)[0] for p in modify_prompts]
    changed = sum(1 for block in asked if any(w in FLIP for w in re.findall(r"\w+", block)))
    assert extract == 8 and 1 <= modify <= 8 and rebuild == 2 * changed
    assert reasons.get(NO_PRINCIPAL_TRIPLE, 0) == 8 - modify
    assert reasons.get(PRINCIPAL_UNCHANGED, 0) == modify - changed
    assert summary["items_without_counterfactual"] == 8 - changed and summary["items_failed"] == 0
    rows = read_jsonl(out)
    assert rows and all(any(t["before"] != t["after"] for t in r["meta"]["triples"] if t["category"] != "normal")
                        for r in rows)
    r = next(r for r in rows if r["source_id"] == "r03")
    assert "excellent" not in r["Text"] and "poor" in r["Text"]
    m = r["meta"]
    assert {t["category"] for t in m["triples"]} <= {"principal", "spurious", "normal"}
    assert any(t["before"] != t["after"] for t in m["triples"])
    assert [a["prompt"] for a in m["llm"]][:2] == ["coba-extract-sentiment.v1", "coba-modify-sentiment.v1"]
    # a rerun into a fresh output answers from the request cache: the server is not asked again
    with FakeLLM(default_reply=scripted) as srv2:
        assert llm_augment(inp, tmp_path / "again.jsonl", srv2, "-p", "candidates=2") == 0
        assert srv2.count() == 0
    assert [x["Text"] for x in read_jsonl(tmp_path / "again.jsonl")] == [x["Text"] for x in rows]


def test_llm_path_for_nli_rewrites_the_edited_side(tmp_path, nli_tsv):
    def reply(body, prompt):
        if "Break each of the two sentences" in prompt:
            return "sent1:\n1-1. A man | plays | a guitar\nsent2:\n2-1. A man | is playing | music"
        if "Rewrite the numbered triples" in prompt:
            return "1. A man | is sleeping | quietly"
        if "Write one sentence" in prompt:
            block = prompt.split("Triples:\n", 1)[1].split("\n\nReply", 1)[0]
            return "<revised>" + " ".join(x.strip() for x in block.split(". ", 1)[1].split("|")) + ".</revised>"
        return "OK"

    out = tmp_path / "nli.jsonl"
    with FakeLLM(default_reply=reply) as srv:
        assert main(["augment", str(nli_tsv), "-o", str(out), "--task", "nli", "--method", "coba", "-p", "mode=llm",
                     "-p", "models=tfidf-logreg", "-p", "importance=lime", "-p", "lime_samples=40",
                     "--llm-base-url", srv.base_url, "--llm-model", "m", "--no-progress"]) == 0
    rows = read_jsonl(out)
    assert rows and all(r["meta"]["llm"][0]["prompt"] == "coba-extract-nli.v1" for r in rows)


def test_llm_path_resumes_a_run_without_asking_again(tmp_path, sentiment_tsv):
    """A run cut short (here: its results file holds only the first three items, as after a kill) is
    resumed: only the missing items reach the server, even without the request cache."""
    rows_in = sentiment_tsv.read_text(encoding="utf-8").splitlines()[:7]
    inp = tmp_path / "in.tsv"
    inp.write_text("\n".join(rows_in) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    with FakeLLM(default_reply=scripted) as srv:
        assert llm_augment(inp, out, srv, "--no-cache") == 0
        assert srv.count("Break the text below") == 6
    results = tmp_path / "out.jsonl.run" / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text("".join(lines[:3]), encoding="utf-8")
    with FakeLLM(default_reply=scripted) as srv:
        assert llm_augment(inp, out, srv, "--no-cache") == 0
        assert srv.count("Break the text below") == 3
    assert len({r["source_id"] for r in read_jsonl(out)}) == 6


def _extract_only(reply):
    """``scripted``, with the extraction answered by ``reply(text)``."""
    def answer(body, prompt):
        if "Break the text below" in prompt:
            return reply(prompt.rsplit("Text:", 1)[1].strip())
        return scripted(body, prompt)

    return answer


LIGHT = ["-p", "models=tfidf-logreg", "-p", "importance=lime", "-p", "lime_samples=40"]


def test_llm_path_writes_nothing_for_an_item_with_no_principal_triple(tmp_path, sentiment_tsv, isolated_llm_cache):
    """Triples that hold no word of the text are not triples of the text (invented content): none is kept,
    nothing is modified, nothing is rebuilt under the target label, and the summary counts why."""
    rows_in = sentiment_tsv.read_text(encoding="utf-8").splitlines()[:5]
    inp = tmp_path / "in.tsv"
    inp.write_text("\n".join(rows_in) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    with FakeLLM(default_reply=_extract_only(lambda text: "1. qzx | vrop | blint")) as srv:
        assert llm_augment(inp, out, srv, *LIGHT) == 0
        assert srv.count("Break the text below") == 4
        assert srv.count("Rewrite each of them") == 0 and srv.count("Write a text that states") == 0
    assert read_jsonl(out) == []
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["without_reasons"] == {NO_TRIPLE_FROM_TEXT: 4} and summary["counterfactuals_written"] == 0
    lines = read_jsonl(tmp_path / "out.jsonl.run" / "results.jsonl")
    assert {ln["status"] for ln in lines} == {"no_counterfactual"} and all(not ln["counterfactuals"] for ln in lines)


@pytest.mark.parametrize("modify", ["same", "fewer", "rebuilt-original"])
def test_llm_path_writes_nothing_when_no_principal_triple_was_changed(tmp_path, sentiment_tsv, isolated_llm_cache,
                                                                      modify):
    """The modification gives the triples back unchanged (up to case and spacing), or fewer of them with
    none changed: no rebuild is asked. A rebuilt text that is the original again (although the modification
    flipped the opinion words) is not written either."""
    rows_in = sentiment_tsv.read_text(encoding="utf-8").splitlines()[:5]
    inp = tmp_path / "in.tsv"
    inp.write_text("\n".join(rows_in) + "\n", encoding="utf-8")
    originals = [line.split("\t")[-1] for line in rows_in[1:]]

    def as_triple(text):
        words = text.strip().rstrip(".").split()
        return f"{words[0]} | {words[1]} | {' '.join(words[2:])}"

    def flip(text):
        return re.sub(r"\w+", lambda m: FLIP.get(m.group(0), m.group(0)), text)

    def reply(body, prompt):
        if "Break the text below" in prompt:  # the whole text, twice: both triples hold its opinion words
            triple = as_triple(prompt.rsplit("Text:", 1)[1])
            return f"1. {triple}\n2. {triple}"
        if "Rewrite each of them" in prompt:
            lines = prompt.split("Triples:\n", 1)[1].split("\n\nWrite only", 1)[0].splitlines()
            assert len(lines) == 2
            if modify == "same":
                return "\n".join("  " + line.upper().replace(" | ", "  |  ") for line in lines)
            if modify == "fewer":
                return lines[0]
            return "\n".join(flip(line) for line in lines)  # a label edit: the opinion words flipped
        if "Write a text that states" in prompt:  # ... and the original rebuilt all the same
            return "<revised> " + next(o for o in originals if flip(as_triple(o)) in prompt) + " </revised>"
        return "OK"

    out = tmp_path / "out.jsonl"
    with FakeLLM(default_reply=reply) as srv:
        assert llm_augment(inp, out, srv, *LIGHT) == 0
        assert srv.count("Rewrite each of them") == 4
        rebuilt = srv.count("Write a text that states")
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert read_jsonl(out) == [] and summary["counterfactuals_written"] == 0 and summary["items_failed"] == 0
    if modify == "rebuilt-original":
        assert rebuilt == 4 and summary["without_reasons"] == {REBUILT_ORIGINAL: 4}
    else:
        assert rebuilt == 0 and summary["without_reasons"] == {PRINCIPAL_UNCHANGED: 4}


def test_four_rows_that_share_no_word_still_train_the_judge(tmp_path):
    """The label judge keeps words met in two texts; in a handful of texts that share none it keeps every word
    (before, the run died with scikit-learn's "After pruning, no terms remain")."""
    inp = tmp_path / "four.tsv"
    inp.write_text("text\tlabel\nwrong !\tnegative\navoid coming here .\tnegative\n"
                   "my filet , perfect !\tpositive\nbest pizza in town .\tpositive\n", encoding="utf-8")
    code = main(["augment", str(inp), "-o", str(tmp_path / "out.jsonl"), "--method", "coba", "--no-progress",
                 "-p", "models=tfidf-logreg", "-p", "importance=lime", "-p", "lime_samples=20"])
    assert code in (0, 5)  # finished (5: nothing to rewrite in such texts is an answer, not a crash)
    assert (tmp_path / "out.jsonl.run" / "summary.json").exists()
