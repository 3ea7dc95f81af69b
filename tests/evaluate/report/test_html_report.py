import json

import pytest

from cfaug.evaluate.report.html_report import ReportError, ReportOptions, build_report, write_report

EVIL = 'An <script>document.title="pwned"</script> good film <img src=x onerror="alert(1)">'


@pytest.fixture
def run_dir(tmp_path, make_run_dir, make_row):
    inp = tmp_path / "in.tsv"
    inp.write_text("text\tlabel\nan okay film\tpositive\na good film\tpositive\nbad\tnegative\n", encoding="utf-8")
    rows = [make_row("1", EVIL, EVIL.replace("good", "bad"), "positive", "negative",
                     filters={"flip": True, "similarity": True}, flipped=True),
            make_row("2", "a good film", "a film", "positive", "negative", passed=False,
                     filters={"flip": False, "similarity": None}, flipped=False),
            make_row("3", "bad", "good", "negative", "positive", method="other.v1", filters={"flip": True})]
    return make_run_dir(tmp_path / "run", rows, input_file=inp)


def test_dataset_text_is_escaped(run_dir):
    html = build_report(run_dir)
    assert "<script>document.title" not in html and "<img src=x" not in html
    assert "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;" in html
    assert html.count("<script>") == 1  # the page's own
    assert "script-src 'sha256-" in html  # and only that script may run


def test_sections_and_filters(run_dir):
    html = build_report(run_dir)
    assert "<del>good</del>" in html and "<ins>bad</ins>" in html
    assert 'data-filter-key="f0"' in html and 'data-filter-key="f1"' in html  # flip, similarity
    assert 'data-method="other.v1"' in html and 'data-passed="fail"' in html
    assert 'data-f1="na"' in html  # similarity not checked
    assert "llm_requests" in html and "test-model" in html
    assert "original data" in html and "2 (66.7%)" in html  # labels of the input file: 2 positive, 1 negative
    assert "No metrics.json" in html and "edit_rate" in html  # model-free metrics computed on the spot
    assert "Showing 3 of 3" in html


def test_metrics_json_is_used(run_dir):
    metrics = {"created": "now", "pairs_scored": 2, "groups": {"auto-cad.v1": {"metrics": [
        {"name": "flip_rate", "value": 0.5, "n": 2, "higher_is_better": True, "signature": "flip_rate|abc",
         "settings": {"independent": True, "judge": "x"}}]}}}
    (run_dir / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    html = build_report(run_dir)
    assert "flip_rate|abc" in html and "0.5000" in html and "No metrics.json" not in html


def test_example_limit_keeps_both_kept_and_rejected(run_dir):
    html = build_report(run_dir, ReportOptions(max_examples=2))
    assert "Showing 2 of 3" in html
    assert 'data-passed="fail"' in html and 'data-passed="pass"' in html


def test_not_a_run_dir(tmp_path):
    with pytest.raises(ReportError, match="not a run directory"):
        build_report(tmp_path)


def test_write_report_default_location(run_dir):
    out = write_report(run_dir)
    assert out == run_dir / "report.html" and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
