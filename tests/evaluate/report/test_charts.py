from cfaug.evaluate.report.charts import label_bars


def test_bars_show_counts_and_shares_and_escape_labels():
    svg = label_bars("before <b>", {"negative": 3, "positive": 1, "<x>": 0}, ["negative", "positive", "<x>"])
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "3 (75.0%)" in svg and "1 (25.0%)" in svg and "0 (0.0%)" in svg
    assert "&lt;x&gt;" in svg and "<x>" not in svg and "before &lt;b&gt;" in svg
    assert svg.count("<rect") == 3
