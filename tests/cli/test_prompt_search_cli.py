"""``cfaug prompt-search`` with a human's marks against the loopback LLM server: export, mark, rerun."""

from __future__ import annotations

import csv
import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout

from cfaug.cli import main


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def mark_all(path, value):
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    for r in rows:
        r["success"] = r["success"] or value
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return len(rows)


def test_human_marked_search_runs_to_a_demos_file(tmp_path, monkeypatch, fake_llm):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    reviews = tmp_path / "eval.tsv"
    reviews.write_text("id\tlabel\ttext\n" + "".join(f"r{i}\tpositive\tthe soup {i} was great .\n" for i in range(4)))
    annotations = tmp_path / "ann.tsv"
    annotations.write_text("id\tcounterfactual\n" + "".join(f"r{i}\tthe soup {i} was bland .\n" for i in range(4)))
    marks = tmp_path / "marks.tsv"

    def reply(body, prompt):
        item = re.findall(r"^Review \([^)]*\): (.*)$", prompt, re.M)[-1]
        return f"<revised>{item.replace('great', 'poor')}</revised>"

    with fake_llm.FakeLLM(default_reply=reply) as srv:
        args = ["prompt-search", reviews, "-o", tmp_path / "out", "--marks", marks, "--annotations", annotations,
                "--start", "2", "--llm-base-url", srv.base_url, "--llm-model", "m"]
        code, out, err = cli(*args)
        assert code == 3 and "4 outputs wait for your marks" in out, err
        assert mark_all(marks, "0") == 4  # the start prompt fails everywhere
        code, out, _ = cli(*args)
        assert code == 3  # one example tried at each of 3 positions: new prompts to judge
        mark_all(marks, "1")
        code, out, err = cli(*args)
        assert code == 0, err
        requests = srv.count()
    assert "success 0.00 -> 1.00 (human judgement" in out
    result = json.loads((tmp_path / "out" / "search.json").read_text())
    assert result["scorer"] == "human" and len(result["sequence"]) == 3 and len(result["steps"]) == 1
    demos = (tmp_path / "out" / "demos.tsv").read_text().splitlines()
    assert demos[0] == "batch_id\tlabel\ttext" and len(demos) == 7
    # a rerun asks the server nothing: every answer is cached
    with fake_llm.FakeLLM(default_reply=reply) as srv2:
        args[args.index("--llm-base-url") + 1] = srv2.base_url
        assert cli(*args)[0] == 0 and srv2.count() == 0
    assert requests >= 4 + 3 * 3


# --- marks from review decisions (--marks RUN_DIR) -----------------------------------------------------------


def review_items(run_dir):
    """source id -> item id of the rows the search wrote into its review run directory."""
    lines = [json.loads(x) for x in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return {line["source_id"]: f"{line['key']}#0" for line in lines}


def test_review_decisions_are_the_marks(tmp_path, monkeypatch, fake_llm):
    from cfaug.review.items import load_items
    from cfaug.run.decisions import ReviewStore

    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    reviews = tmp_path / "eval.tsv"
    reviews.write_text("id\tlabel\ttext\n" + "".join(f"r{i}\tpositive\tthe soup {i} was great .\n" for i in range(4)))
    annotations = tmp_path / "ann.tsv"
    annotations.write_text("id\tcounterfactual\n" + "".join(f"r{i}\tthe soup {i} was bland .\n" for i in range(4)))
    review = tmp_path / "review"  # a new path without an extension: a run directory

    def reply(body, prompt):
        item = re.findall(r"^Review \([^)]*\): (.*)$", prompt, re.M)[-1]
        return f"<revised>{item.replace('great', 'poor')}</revised>"

    with fake_llm.FakeLLM(default_reply=reply) as srv:
        args = ["prompt-search", reviews, "-o", tmp_path / "out", "--marks", review, "--annotations", annotations,
                "--start", "2", "--llm-base-url", srv.base_url, "--llm-model", "m"]
        code, out, err = cli(*args)
        assert code == 3 and "4 outputs wait for your review: run 'cfaug review serve" in out, err
        items = load_items(review)  # what 'cfaug review serve' shows
        assert sorted(it.source_id for it in items) == ["r0", "r1", "r2", "r3"]
        it = next(i for i in items if i.source_id == "r1")
        assert it.original == {"text": "the soup 1 was great ."} and it.rewrite == {"text": "the soup 1 was poor ."}
        assert (it.source_label, it.target_label) == ("positive", "negative")
        ids = review_items(review)
        with ReviewStore(review) as store:
            store.record(ids["r0"], "ann", "accepted")                           # 1
            store.record(ids["r1"], "ann", "edited", fields={"text": "the soup 1 was poor ."})  # 1
            store.record(ids["r2"], "ann", "rejected")                           # 0
            store.record(ids["r3"], "ann", "skipped")                            # not marked yet
        code, out, _ = cli(*args)
        assert code == 3 and "1 outputs wait for your review" in out
        assert len(review_items(review)) == 4  # asked again, not written again
        with ReviewStore(review) as store:
            store.record(ids["r3"], "ann", "not_flipped")
            store.record(ids["r3"], "bob", "accepted")                           # 1 against 1: a tie
        assert cli(*args)[0] == 3
        with ReviewStore(review) as store:
            store.record(ids["r3"], "cy", "other_label", label="positive")       # the majority: 0
        # marks 1, 1, 0, 0: success 0.5; every later prompt gives these same outputs, whose marks are known
        code, out, err = cli(*args)
        assert code == 0, out + err
    assert "success 0.50 -> 1.00 (human judgement" in out
    result = json.loads((tmp_path / "out" / "search.json").read_text())
    assert result["scorer"] == "human" and result["start_success"] == 0.5 and len(result["steps"]) == 2
    # the examples added are the two failures, r2 (rejected) and r3 (not flipped by the majority)
    assert {s["example"] for s in result["steps"]} == {"the soup 2 was great .", "the soup 3 was great ."}


def test_marks_run_dir_is_told_from_a_marks_file_and_foreign_runs_are_left_alone(tmp_path):
    from cfaug.cli.prompt_search import marks_is_run_dir

    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("")
    assert marks_is_run_dir(str(tmp_path / "dir")) and marks_is_run_dir(str(tmp_path / "new"))
    assert marks_is_run_dir(str(tmp_path / "new.d") + "/")
    assert not marks_is_run_dir(str(tmp_path / "file")) and not marks_is_run_dir(str(tmp_path / "marks.tsv"))
    reviews = tmp_path / "eval.tsv"
    reviews.write_text("id\tlabel\ttext\nr0\tpositive\tgood .\nr1\tpositive\tgreat .\n")
    base = ["prompt-search", reviews, "-o", tmp_path / "out", "--annotations", reviews, "--llm-base-url",
            "http://127.0.0.1:9", "--llm-model", "m", "--marks"]
    other = tmp_path / "augment-run"  # a run of 'cfaug augment': never appended to
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"method": "zero-shot"}))
    (other / "results.jsonl").write_text("")
    code, _, err = cli(*base, other)
    assert code == 2 and "not one that 'cfaug prompt-search' writes its outputs into" in err
    (tmp_path / "dir" / "notes.txt").write_text("mine")
    code, _, err = cli(*base, tmp_path / "dir")
    assert code == 2 and "a folder with files but no config.json" in err
