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
