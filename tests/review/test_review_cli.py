"""``cfaug review serve|export|stats|import-label-studio``: arguments, messages and exit codes."""

from __future__ import annotations

import json

import pytest

from decided_runs import record, simple_run

from cfaug.cli import main
from cfaug.review.label_studio import CHOICES


@pytest.fixture
def run(tmp_path):
    return simple_run(tmp_path / "run", 4)


def test_review_without_subcommand_prints_help(capsys):
    assert main(["review"]) == 2
    assert "serve" in capsys.readouterr().err


def test_serve_passes_its_options(run, monkeypatch):
    import cfaug.review.server as server

    calls = []
    monkeypatch.setattr(server, "serve", lambda run_dir, **kw: calls.append((run_dir, kw)) or 0)
    assert main(["review", "serve", str(run), "--port", "8123", "--annotator", "ann", "--no-browser"]) == 0
    assert calls == [(str(run), {"host": None, "port": 8123, "annotator": "ann", "open_browser": False,
                                 "order_by": "judges"})]
    assert main(["review", "serve", str(run), "--order", "choice", "--no-browser"]) == 0
    assert calls[-1][1]["order_by"] == "choice"
    assert main(["review", "serve", str(run), "--host", "0.0.0.0"]) == 0
    # no --port: the last server's port on this run directory (None lets serve look it up), else a free one
    assert calls[-1][1]["host"] == "0.0.0.0" and calls[-1][1]["open_browser"] is True and calls[-1][1]["port"] is None


def test_serve_errors_are_one_line(run, tmp_path, monkeypatch, capsys):
    import cfaug.review.server as server

    def taken(run_dir, **kw):
        raise OSError(98, "Address already in use")

    monkeypatch.setattr(server, "serve", taken)
    assert main(["review", "serve", str(run), "--port", "80", "--no-browser"]) == 2
    assert "cannot serve on 127.0.0.1:80: Address already in use" in capsys.readouterr().err
    assert main(["review", "serve", str(run), "--port", "70000"]) == 2


def test_stats_with_and_without_decisions(run, capsys):
    assert main(["review", "stats", str(run)]) == 0
    out = capsys.readouterr().out
    assert "4 to review" in out and "none yet" in out
    record(run, [("k0#0", "ann", "accepted", {"seconds": 3.0}), ("k0#0", "bob", "rejected"),
                 ("k1#0", "ann", "accepted"), ("k1#0", "bob", "accepted")])
    assert main(["review", "stats", str(run)]) == 0
    out = capsys.readouterr().out
    assert "4 live" in out and "Cohen's kappa" in out and "annotator" in out
    assert main(["review", "stats", str(run), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["by_decision"] == {"accepted": 3, "rejected": 1} and stats["agreement"]["shared_items"] == 2


def test_export_with_and_without_decisions(run, tmp_path, capsys):
    out = tmp_path / "reviewed.jsonl"
    assert main(["review", "export", str(run), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cfaug: error: nothing to export" in err and "no review decisions yet" in err and not out.exists()
    record(run, [("k0#0", "ann", "accepted"), ("k1#0", "ann", "edited", {"fields": {"text": "New."}}),
                 ("k2#0", "ann", "rejected")])
    assert main(["review", "export", str(run), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["rows"] == 2 and summary["by_decision"] == {"accepted": 1, "edited": 1}
    assert "2 reviewed rows written" in captured.err and "1 decided otherwise" in captured.err
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert rows[1]["Text"] == "New." and rows[1]["meta"]["review"]["edit"]["Text"]["token_edit_rate"] > 0
    assert main(["review", "export", str(run), "-o", str(out), "--decisions", "rejected"]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    assert main(["review", "export", str(run), "-o", str(out), "--decisions", "not_flipped"]) == 2
    assert "no item has the decision not_flipped" in capsys.readouterr().err


def test_export_per_annotator(run, tmp_path, capsys):
    record(run, [("k0#0", "ann", "accepted"), ("k0#0", "bob", "edited", {"fields": {"text": "Plain bad."}}),
                 ("k1#0", "bob", "skipped")])
    out = tmp_path / "decisions.jsonl"
    assert main(["review", "export", str(run), "--per-annotator", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["rows"] == 3
    assert "3 decisions of 2 annotators written to" in captured.err and "1 item tied" in captured.err
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["item"], r["annotator"], r["decision"], r["combined"]) for r in rows] == [
        ("k0#0", "ann", "accepted", "tie"), ("k0#0", "bob", "edited", "tie"), ("k1#0", "bob", "skipped", None)]
    assert main(["review", "export", str(run), "--per-annotator", "-o", str(out), "--decisions", "skipped"]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    capsys.readouterr()
    assert main(["review", "export", str(run), "--per-annotator", "-o", str(tmp_path / "t.json"),
                 "--format", "label-studio"]) == 2
    assert "--per-annotator does not go with --format label-studio" in capsys.readouterr().err


def test_export_option_errors(run, tmp_path, capsys):
    record(run, [("k0#0", "ann", "accepted")])
    assert main(["review", "export", str(run), "-o", str(tmp_path / "x.jsonl"), "--decisions", "kept"]) == 2
    assert "unknown decision 'kept'" in capsys.readouterr().err
    assert main(["review", "export", str(run), "-o", str(tmp_path / "x.unknown")]) == 2
    assert "cannot tell the format" in capsys.readouterr().err
    assert main(["review", "export", str(tmp_path / "nowhere"), "-o", str(tmp_path / "x.jsonl")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["review", "export", str(run), "-o", str(tmp_path / "t.json"), "--format", "label-studio",
                 "--decisions", "accepted"]) == 2
    assert "--decisions does not go with --format label-studio" in capsys.readouterr().err


def test_a_damaged_store_is_one_message(run, tmp_path, capsys):
    (run / "review.sqlite").write_text("garbage " * 1000, encoding="utf-8")
    for args in (["stats", str(run)], ["export", str(run), "-o", str(tmp_path / "x.jsonl")]):
        assert main(["review", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("cfaug: error: ") and str(run / "review.sqlite") in err and "Traceback" not in err


def test_label_studio_round_trip(run, tmp_path, capsys):
    tasks = tmp_path / "tasks.json"
    assert main(["review", "export", str(run), "-o", str(tasks), "--format", "label-studio"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == {"tasks": str(tasks), "label_config": str(tmp_path / "tasks.label_config.xml"), "items": 4}
    data = json.loads(tasks.read_text(encoding="utf-8"))
    export = [{"id": n, "data": t["data"], "annotations": [
        {"id": 10 + n, "completed_by": 1, "lead_time": 2.0, "was_cancelled": False,
         "updated_at": f"2026-01-01T00:00:0{n}Z",
         "result": [{"from_name": "decision", "to_name": "rewrite_text", "type": "choices",
                     "value": {"choices": [CHOICES["accepted" if n % 2 == 0 else "rejected"][0]]}}]}]}
        for n, t in enumerate(data)]
    f = tmp_path / "export.json"
    f.write_text(json.dumps(export), encoding="utf-8")
    assert main(["review", "import-label-studio", str(run), str(f), "--annotator", "lsuser"]) == 0
    assert json.loads(capsys.readouterr().out)["recorded"] == 4
    assert main(["review", "stats", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_annotator"] == {"lsuser": {"accepted": 2, "rejected": 2}}
    # nothing usable in a file: exit 2
    f.write_text(json.dumps([{"id": 1, "data": {"text": "x"}, "annotations": []}]), encoding="utf-8")
    assert main(["review", "import-label-studio", str(run), str(f)]) == 2
    err = capsys.readouterr().err
    assert "no 'cfaug_item'" in err and "no annotation could be imported" in err


def test_review_is_listed_in_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "review" in capsys.readouterr().out


def test_stats_piped_to_a_reader_that_stops_early_exits_quietly(run):
    """``cfaug review stats RUN_DIR | head -1``: the reader closes the pipe before the output is written;
    the command ends without a traceback."""
    import subprocess
    import sys

    record(run, [("k0#0", "ann", "accepted", {"seconds": 3.0}), ("k1#0", "bob", "rejected")])
    proc = subprocess.Popen([sys.executable, "-m", "cfaug", "review", "stats", str(run)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the command writes (it takes a second to start)
    err = proc.stderr.read().decode("utf-8", "replace")
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err and err == ""
