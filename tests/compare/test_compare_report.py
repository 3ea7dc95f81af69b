"""The comparison report (cfaug.compare.report): built from a comparison directory made by hand
(report_fixture.py): every method named, reasons of skipped and failed ones, the trade-off chart, the
downstream bars with their intervals, LLM usage, the same texts side by side, escaping, nothing external."""

import json
import re

import pytest
from report_fixture import EVIL, make_compare_dir

from cfaug.compare.report import (
    CompareReportError,
    build_report,
    choose_sources,
    contract_columns,
    read_output,
    write_report,
)


@pytest.fixture
def compare_dir(tmp_path):
    return make_compare_dir(tmp_path / "cmp")


def section(html: str, name: str) -> str:
    return re.search(rf'<section id="{name}">.*?</section>', html, re.DOTALL).group(0)


def test_writes_report_html_into_the_directory(compare_dir):
    page = write_report(compare_dir)
    assert page == compare_dir / "report.html" and page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert not (compare_dir / "report.html.tmp").exists()


def test_methods_ranked_with_status_and_reasons(compare_dir):
    html = build_report(compare_dir)
    table = section(html, "ranking")
    names = re.findall(r'<tr class="(?:ok|not-ok)(?: tied)?" data-method="([^"]+)"', table)
    assert names == ["auto-cad", "coba", "zero-shot", "lass"]  # summary.json's order; the reference is no rank
    assert "needs an LLM endpoint: give --llm-base-url and --llm-model" in table
    assert '<span class="status skipped">skipped</span>' in table and '<span class="status failed">failed</span>' in table
    assert "the masked language model at models/bert could not be loaded" in table
    assert "83.0%" in table and "12.0%" in table and "85.7%" in table  # flip rate, edit rate, coverage
    assert "61.20 (originals 48.90)" in table and "gpt2-perplexity" in table
    assert "Ranked by flip rate times coverage" in table
    assert "2</b> ran (auto-cad, coba); 1 skipped (zero-shot); 1 failed (lass); reference: human" in html


def test_the_ranking_shows_flipped_coverage_with_intervals_and_marks_ties(compare_dir):
    table = section(build_report(compare_dir), "ranking")
    head = re.search(r"<thead>.*?</thead>", table, re.DOTALL).group(0)
    assert re.findall(r"<th>([^<]+)", head)[3:6] == ["flipped coverage", "coverage", "flip rate"]
    row = re.search(r'<tr class="ok" data-method="auto-cad">.*?</tr>', table, re.DOTALL).group(0)
    # auto-cad: 5 of 7 rows flipped, 6 of 7 covered, 83.0% of its 6 counterfactuals flipped: Wilson intervals
    assert re.search(r'data-figure="flipped_coverage">71\.4%<br><span class="ci">\[35\.9%, 91\.8%\]</span>', row)
    assert re.search(r'data-figure="coverage">85\.7%<br><span class="ci">\[48\.7%, 97\.4%\]</span>', row)
    assert re.search(r'data-figure="flip_rate">83\.0%<br><span class="ci">\[43\.6%, 97\.0%\]</span>', row)
    # coba's flipped coverage (3 of 7) is not told from the leader's by the paired test: marked as tied, and said
    tied = re.search(r'<tr class="ok tied" data-method="coba">.*?</tr>', table, re.DOTALL).group(0)
    assert '<td class="num">2 <span class="tie" title="a paired test on the same rows does not tell it from the ' \
           'leader (p ' in tied
    note = re.search(r'<p id="ranking-note">(.*?)</p>', table, re.DOTALL).group(1)
    assert note.startswith("≈ marks coba (p ") and "does not tell its flipped coverage from the leader&#39;s " \
                                                    "(auto-cad) at the 5% level" in note
    assert note in table.split('<table class="metrics" id="ranking-table">')[0]  # above the table
    # items with no counterfactual, each with its reasons
    without = re.search(r'<ul id="without">.*?</ul>', table, re.DOTALL).group(0)
    assert "<b>coba</b>: 2 items: every candidate failed a filter: flip (1); no principal triple (1)" in without
    # the table sits in a box that scrolls when it is wider than the page
    assert '<div class="table-box">\n  <table class="metrics" id="ranking-table">' in table


def test_downstream_shows_the_chosen_settings_and_warns_of_one_label_models(compare_dir):
    down = section(build_report(compare_dir), "downstream")
    rows = re.findall(r"<tr><th>([^<]+)</th><td class=\"num\">(\d+)</td><td>([^<]*)</td><td[^>]*>([^<]+)</td>"
                      r"<td class=\"num\">([^<]+)</td>", re.search(r'id="selection-table">.*?</table>', down,
                                                                    re.DOTALL).group(0))
    assert rows == [("originals", "0", "C=1, ngram_max=2", "default", "n/a"),
                    ("originals + auto-cad", "0", "C=10, ngram_max=1", "5-fold cross-validation", "0.812")]
    warning = re.search(r'<div id="downstream-warnings">.*?</div>', down, re.DOTALL).group(0)
    assert "originals + coba, seed 0: the classifier predicts &#39;negative&#39; for 98% of test" in warning


def test_tradeoff_chart_has_one_labelled_point_per_ok_method(compare_dir):
    chart = section(build_report(compare_dir), "tradeoff")
    assert chart.count("<svg") == 1
    points = re.findall(r'<circle class="point" data-method="([^"]+)" cx="([\d.]+)" cy="([\d.]+)"', chart)
    assert [p[0] for p in points] == ["auto-cad", "coba"]
    (_, x_a, y_a), (_, x_c, y_c) = points
    assert float(x_a) < float(x_c) and float(y_a) < float(y_c)  # auto-cad edits less and flips more (SVG y down)
    assert re.findall(r'class="point-label">([^<]+)<', chart) == ["auto-cad", "coba"]


def test_downstream_bars_with_intervals_and_the_reference(compare_dir):
    down = section(build_report(compare_dir), "downstream")
    assert down.count("<svg") == 2  # one chart per test set
    for ts in ("test", "challenge"):
        chart = re.search(rf"<svg[^>]*><title>downstream gain on {ts}</title>.*?</svg>", down, re.DOTALL).group(0)
        assert re.findall(r'<rect class="bar[^"]*" data-method="([^"]+)"', chart) == [
            "auto-cad", "coba", "human (reference)"]
        assert len(re.findall(r'<g class="ci" data-method="[^"]+"><line x1="[\d.]+" y1="[\d.]+" x2="[\d.]+"',
                              chart)) == 3
        assert 'class="bar reference"' in chart and 'class="zero"' in chart
    assert "+2.1 [+0.8, +3.5]" in down and "+9.3 [+6.6, +12.1]" in down  # points, with the 95% interval
    assert "84.2%" in down and "paired" in down  # the table, and summary.json's downstream figures folded


def test_interval_whisker_spans_the_interval(compare_dir):
    down = section(build_report(compare_dir), "downstream")
    chart = re.search(r"<svg[^>]*><title>downstream gain on test</title>.*?</svg>", down, re.DOTALL).group(0)
    zero = float(re.search(r'class="zero" x1="([\d.]+)"', chart).group(1))
    (a, b), = [tuple(map(float, m)) for m in re.findall(
        r'<g class="ci" data-method="coba"><line x1="([\d.]+)" y1="[\d.]+" x2="([\d.]+)"', chart)]
    assert a < zero < b  # coba's interval [-0.6, +1.9] points crosses no gain


def test_llm_usage_and_time(compare_dir):
    cost = section(build_report(compare_dir), "cost")
    assert re.search(r"<th>coba</th><td class=\"num\">1,200</td><td class=\"num\">345,678</td>"
                     r"<td class=\"num\">45,678</td><td class=\"num\">\$0.4321</td>", cost)
    assert "<th>auto-cad</th><td" not in cost  # no LLM, no row
    assert "41.5 s" in cost and "96.0 s" in cost and "time per method" in cost


def test_same_sources_side_by_side_with_edits_highlighted(compare_dir):
    ex = section(build_report(compare_dir), "examples")
    ids = re.findall(r'<article class="source" data-source-id="([^"]+)"', ex)
    assert len(ids) == 5 and set(ids[:4]) == {"1", "2", "3", "5"}  # the texts both methods rewrote come first
    first = re.search(r'<article class="source" data-source-id="1">.*?</article>', ex, re.DOTALL).group(0)
    assert re.findall(r'<div class="rewrite[^"]*" data-method="([^"]+)"', first) == ["auto-cad", "coba"]
    assert "This was a wonderful film with a moving story." in first  # the original beside them
    assert "<del>wonderful</del><ins>dreadful</ins>" in first and "<del>wonderful</del><ins>terrible</ins>" in first
    assert "2 edits" in first and "&rarr; negative" in first
    fifth = re.search(rf'<article class="source" data-source-id="{ids[4]}">.*?</article>', ex, re.DOTALL).group(0)
    assert "no counterfactual for this text" in fifth and "rewritten by 1 of 2 methods" in fifth


def test_examples_are_seeded(compare_dir):
    pick = lambda html: re.findall(r'data-source-id="([^"]+)"', html)
    assert pick(build_report(compare_dir, examples=6, seed=1)) == pick(build_report(compare_dir, examples=6, seed=1))
    outputs = {m: read_output(compare_dir / "runs" / m / "counterfactuals.jsonl") for m in ("auto-cad", "coba")}
    picks = {tuple(choose_sources(outputs, 7, s)) for s in range(20)}
    assert len(picks) > 1 and all(set(p[:4]) == {"1", "2", "3", "5"} for p in picks)


def test_text_from_the_data_is_escaped(compare_dir):
    html = build_report(compare_dir)
    assert "<script" not in html.lower()  # the page has no script of its own either
    assert "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;" in html
    assert "film,<br>" in html  # a review's <br /> is shown as a line break, nothing else is markup
    assert EVIL not in html


def test_nothing_is_fetched(compare_dir):
    html = build_report(compare_dir)
    assert not re.search(r'(?:src|href)\s*=\s*["\']?\s*(?:https?:)?//', html, re.IGNORECASE)
    assert "default-src 'none'" in html
    assert all(h.startswith("#") for h in re.findall(r'href="([^"]*)"', html))


def test_works_without_downstream(tmp_path):
    html = build_report(make_compare_dir(tmp_path / "cmp", with_downstream=False))
    assert '<section id="downstream">' not in html and 'href="#downstream"' not in html
    assert "reference:" not in html
    assert len(re.findall(r'<circle class="point"', html)) == 2 and "data-source-id" in html


def test_missing_output_and_unplottable_method_are_said(compare_dir):
    summary = json.loads((compare_dir / "summary.json").read_text())
    summary["methods"][1]["edit_rate"] = None
    (compare_dir / "summary.json").write_text(json.dumps(summary))
    (compare_dir / "runs" / "coba" / "counterfactuals.jsonl").unlink()
    html = build_report(compare_dir)
    assert len(re.findall(r'<circle class="point"', html)) == 1
    assert "Not drawn (no flip rate or edit rate): coba." in html
    assert "coba: no output file at counterfactuals.jsonl" in html


def test_not_a_comparison_directory(tmp_path):
    with pytest.raises(CompareReportError, match="not a comparison directory"):
        build_report(tmp_path)


def test_contract_columns_from_row_order():
    row = {"premise": "p2", "hypothesis": "h2", "gold": "contradiction", "source_id": "1", "original_premise": "p",
           "original_hypothesis": "h", "original_gold": "entailment", "method": "m", "meta": {}}
    assert contract_columns(row) == (["premise", "hypothesis"], "gold")
    assert contract_columns({"text": "b", "label": "neg", "source_id": "1", "original_text": "a",
                             "original_label": "pos"}) == (["text"], "label")
