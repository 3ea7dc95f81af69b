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


# --- the first screen: summary, metrics, examples; run details folded at the end -----------------------------


def element_paths(html: str) -> dict[str, list[list[str]]]:
    """For each stripped text of the page, the open elements around it (tag or tag#id), outermost first."""
    from html.parser import HTMLParser

    void = {"br", "meta", "img", "input", "hr", "link"}

    class Walk(HTMLParser):
        def __init__(self):
            super().__init__()
            self.stack: list[str] = []
            self.texts: dict[str, list[list[str]]] = {}

        def handle_starttag(self, tag, attrs):
            if tag not in void:
                ident = dict(attrs).get("id")
                self.stack.append(f"{tag}#{ident}" if ident else tag)

        def handle_endtag(self, tag):
            while self.stack:
                if self.stack.pop().split("#")[0] == tag:
                    break

        def handle_data(self, data):
            if data.strip():
                self.texts.setdefault(data.strip(), []).append(list(self.stack))

    w = Walk()
    w.feed(html)
    return w.texts


def with_own_judge(run_dir, **extra):
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    summary.update({"flip_rate_own_judge": 0.45, "own_judge": "tfidf-logreg", "own_judge_threshold": 0.9,
                    "own_judge_above_half": 50 / 60, "rows_read": 60, "counterfactuals_written": 58}, **extra)
    (run_dir / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return run_dir


def test_summary_metrics_and_examples_come_before_the_folded_run_details(run_dir):
    html = build_report(with_own_judge(run_dir))
    lead = html[html.index('id="summary"'):]
    lead = lead[:lead.index("</p>")]
    for part in ("auto-cad.v1", "60 rows read", "<b>58</b> counterfactuals written", "tfidf-logreg",
                 "45.0% with P(target) \u2265 0.90 (83.3% above 0.5)"):
        assert part in lead, part
    order = [html.index(marker) for marker in ('id="summary"', '<section id="metrics"', '<section id="examples"',
                                               '<section id="run"', "<h3>Parameters</h3>")]
    assert order == sorted(order), order
    texts = element_paths(html)
    for text in ("Parameters", "variants", "Versions", "llm_requests"):  # headings, a parameter, LLM usage
        (path,) = texts[text]
        assert "details#run-details" in path and "section#run" in path, (text, path)
    (heading,) = [path for path in texts["Metrics"] if path[-1] == "h2"]  # (the other is the nav link)
    assert heading[-2] == "section#metrics" and not any(p.startswith("details") for p in heading)
    assert not any(p.startswith("details") for p in texts["#1"][0])  # an example is not folded
    assert '<details id="run-details" open' not in html  # folded unless opened


def test_run_figures_name_the_own_judge_threshold(run_dir):
    html = build_report(with_own_judge(run_dir))
    assert ("<th>flip rate, the method&#39;s own judge (tfidf-logreg)</th>"
            "<td>45.0% with P(target) \u2265 0.90 (83.3% above 0.5)</td>") in html


def test_an_old_summary_without_a_threshold_still_shows_the_flip_rate(run_dir):
    html = build_report(with_own_judge(run_dir, own_judge_threshold=None, own_judge_above_half=None))
    assert "<td>45.0%</td>" in html and "P(target) \u2265" not in html


# --- line breaks in texts -------------------------------------------------------------------------------------


BROKEN = ("Great film.<br /><br />I <script>alert(1)</script> loved it.<BR>The end<br/>bye<br>."
          "  &lt;br&gt; <br onclick=x>")


def test_line_breaks_render_and_nothing_else_passes(tmp_path, make_run_dir, make_row):
    rows = [make_row("1", BROKEN, BROKEN.replace("loved", "hated"), "positive", "negative", flipped=True)]
    html = build_report(make_run_dir(tmp_path / "run", rows))
    start = html.index('<div id="example-list">')
    article = html[start:html.index("</section>", start)]
    original, counterfactual = article.split("<h4>counterfactual</h4>")
    assert ("Great film.<br><br>I &lt;script&gt;alert(1)&lt;/script&gt; <del>loved</del> it.<br>The end<br>bye<br>."
            in original)
    assert "<ins>hated</ins> it.<br>The end<br>bye<br>." in counterfactual
    assert "<script>alert" not in html and html.count("<script>") == 1  # only the page's own
    assert "&lt;br /&gt;" not in article and "&lt;br/&gt;" not in article and "&lt;BR&gt;" not in article
    assert "&amp;lt;br&amp;gt;" in article  # an escaped tag in the data stays text
    assert "&lt;br onclick=x&gt;" in article and "<br onclick" not in html  # only bare breaks become breaks
    assert article.count("<br>") == 2 * 5


def test_a_break_is_one_piece_of_the_diff(tmp_path, make_run_dir, make_row):
    """A rewrite that drops a break: the whole break is deleted, never a part of its tag left as text."""
    rows = [make_row("1", "so great.<br />Really", "so bad. Really", "positive", "negative", flipped=True)]
    html = build_report(make_run_dir(tmp_path / "run", rows))
    assert "<del>great</del>.<del><br></del>Really" in html and "<ins>bad</ins>.<ins> </ins>Really" in html
    assert "&lt;" not in html[html.index('<div id="example-list">'):]


def test_with_breaks_escapes_first():
    from cfaug.evaluate.report.html_report import with_breaks

    assert str(with_breaks('a<br />b<Br/>c<br>"d" & <b>e</b>')) == (
        "a<br>b<br>c<br>&#34;d&#34; &amp; &lt;b&gt;e&lt;/b&gt;")
    assert str(with_breaks("<br<script>>")) == "&lt;br&lt;script&gt;&gt;"


# --- review statistics ---------------------------------------------------------------------------------------


def _item_ids(run_dir):
    from cfaug.evaluate.pairs import load_pairs

    return {p.source_id: p.item_id for p in load_pairs(run_dir).pairs}


def test_no_review_section_without_decisions(run_dir):
    from cfaug.run.decisions import ReviewStore

    assert 'id="review"' not in build_report(run_dir) and 'href="#review"' not in build_report(run_dir)
    ReviewStore(run_dir).close()  # a store with no decision in it
    assert 'id="review"' not in build_report(run_dir)


def test_review_section_counts_rates_judge_and_agreement(run_dir):
    from cfaug.evaluate.judgements import text_hash, write_judgements
    from cfaug.run.decisions import ReviewStore

    ids = _item_ids(run_dir)
    evil = "<script>alert(1)</script>"
    with ReviewStore(run_dir) as store:
        store.record(ids["1"], "ann", "accepted")
        store.record(ids["2"], "ann", "not_flipped")
        store.record(ids["3"], "ann", "rejected")
        store.record(ids["1"], evil, "accepted")
        store.record(ids["2"], evil, "edited", fields={"text": "a bad film"})
    rows = {p["source_id"]: p for p in (json.loads(x)["counterfactuals"][0] for x in
                                        (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines())}
    # the judge calls rows 1 and 2 flipped
    write_judgements(run_dir, [{"item": ids[s], "judge": "tfidf-logreg", "predicted": "negative", "flipped": True,
                                "text_sha1": text_hash(rows[s]["text"])} for s in ("1", "2")])
    html = build_report(run_dir)
    section = html[html.index('<section id="review">'):]
    section = section[:section.index("</section>")]
    assert 'href="#review"' in html and html.index('id="review"') < html.index('<section id="labels"')
    assert evil not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in section  # a name is text
    texts = element_paths(html)
    assert any("table#review-figures" in path and "section#review" in path for path in texts["human flip rate"])
    # row 1 flipped (two accepts), row 2 tied (not_flipped vs edited), row 3 rejected: 1 of 1
    assert "100.0%: 1 of 1 rows judged flipped (1 rejected for another reason and 1 tie left out)" in section
    # against the judge the edit has no say: row 2 is not flipped by ann alone, row 1 flipped
    assert "precision 50.0% (1 of 2 it called flipped), recall 100.0% (1 of 1 people called flipped)" in section
    assert "Cohen&#39;s kappa" in section and "2 rows decided by several annotators" in section
    counts = section[section.index('id="review-counts"'):]
    assert "<th>accepted</th><th>rejected</th><th>edited</th><th>not_flipped</th><th>total</th>" in counts
    assert '<tr><th>all</th><td class="num">2</td><td class="num">1</td><td class="num">1</td>' \
           '<td class="num">1</td><td class="num">5</td></tr>' in counts
    assert 'id="review-methods"' in section  # two methods in this run: one row each


def test_a_broken_review_store_is_said_not_fatal(run_dir):
    (run_dir / "review.sqlite").write_bytes(b"\x00not sqlite" * 200)
    html = build_report(run_dir)
    assert "The review decisions could not be read" in html and "review.sqlite" in html
