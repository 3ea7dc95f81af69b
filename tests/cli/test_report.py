import json

from cfaug.cli import main


def test_report_command(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"method": "auto-cad.v1", "task": {"name": "sentiment"},
                                                 "schema": {"text_cols": {"text": "text"}, "label_col": "label"}}))
    row = {"text": "a bad film", "label": "negative", "source_id": "1", "original_text": "a good film",
           "original_label": "positive", "method": "auto-cad.v1", "meta": {"passed": True}}
    (run / "results.jsonl").write_text(json.dumps({"key": "1", "status": "ok", "counterfactuals": [row]}) + "\n")
    out = tmp_path / "r.html"
    assert main(["report", str(run), "-o", str(out)]) == 0
    said = capsys.readouterr()
    assert said.out.strip() == str(out)  # the path once, on standard output, for scripts
    assert str(out) not in said.err
    assert "<ins>bad</ins>" in out.read_text(encoding="utf-8")
    assert main(["report", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
