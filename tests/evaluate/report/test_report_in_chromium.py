"""Load the report in headless Chromium: the metric table and a highlighted edit must render, the page's
own script must run, and a review containing <script> must stay text. The screenshot is kept in the test
output (the test's tmp_path, and $CFAUG_TEST_ARTIFACTS when set).

Chromium is a system package, not a PyPI one: where it is missing (no root or no apt-get to install it) or
cannot start headless, the browser test is skipped with the reason (``pytest -rs`` lists it)."""

import re
from pathlib import Path

import pytest

from cfaug_tests_chromium import browser_problem, chromium, count_color, keep_artifacts, png_pixels

from cfaug.evaluate.report.html_report import write_report

INS_RGB = (0xC9, 0xF2, 0xC7)  # background of <ins> in report.css
DEL_RGB = (0xFF, 0xD7, 0xD5)  # background of <del>


def test_report_renders_in_chromium(browser, tmp_path, make_run_dir, make_row):
    evil = 'I <script>document.title="pwned"</script> loved this good film, great acting.'
    rows = [make_row("1", evil, evil.replace("loved", "hated").replace("good", "bad").replace("great", "awful"),
                     "positive", "negative", filters={"flip": True, "similarity": True}, flipped=True),
            make_row("2", "A dull plot.", "A lively plot.", "negative", "positive", passed=False,
                     filters={"flip": False, "similarity": None}, flipped=False)]
    rd = make_run_dir(tmp_path / "run", rows)
    page = write_report(rd)
    url = page.resolve().as_uri()

    dom = chromium(["--dump-dom", url], tmp_path / "profile-dom").stdout
    assert re.search(r'<table class="metrics" id="metric-table">.*edit_rate.*</table>', dom, re.S)
    assert "<del>loved</del>" in dom and "<ins>hated</ins>" in dom
    assert 'class="filters-ready"' in dom  # the page's own script ran under its CSP
    assert "<title>cfaug report" in dom and "pwned</title>" not in dom
    assert "&lt;script&gt;document.title=\"pwned\"&lt;/script&gt;" in dom

    shot = tmp_path / "report.png"
    chromium([f"--screenshot={shot}", "--window-size=1280,2600", "--hide-scrollbars", url], tmp_path / "profile-shot")
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1280, 2600)
    assert count_color(pixels, INS_RGB) > 50, "no highlighted insertion visible in the screenshot"
    assert count_color(pixels, DEL_RGB) > 50, "no highlighted deletion visible in the screenshot"
    keep_artifacts({"report.png": shot, "report.html": page})
    print(f"screenshot: {shot}")


def test_report_of_a_real_run_renders_in_chromium(browser, tmp_path, sentiment_tsv, monkeypatch):
    """The report of an auto-cad run on the packaged 40-row fixture: what the docs show (with
    $CFAUG_TEST_ARTIFACTS set, its screenshot is kept as report-run.png; docs/images/report.png is one)."""
    from cfaug.api import run_augment

    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    summary, rows = run_augment(sentiment_tsv, "auto-cad", seed=0, run_dir=tmp_path / "run",
                                output=tmp_path / "cf.jsonl", progress=False)
    assert rows
    page = write_report(summary.run_dir)
    shot = tmp_path / "report-run.png"
    chromium([f"--screenshot={shot}", "--window-size=1280,1500", "--hide-scrollbars", page.resolve().as_uri()],
             tmp_path / "profile-shot")
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1280, 1500)
    assert count_color(pixels, INS_RGB) > 200 and count_color(pixels, DEL_RGB) > 200, "no highlighted edits shown"
    keep_artifacts({"report-run.png": shot})


# --- when the browser cannot run here, the test skips and says why ------------------------------------------


def fake_browser(tmp_path: Path, body: str) -> str:
    exe = tmp_path / "chromium"
    exe.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    exe.chmod(0o755)
    return str(exe)


def test_no_browser_is_a_reason_to_skip_naming_what_installs_it(tmp_path):
    reason = browser_problem(None, tmp_path)
    assert "Chromium is not installed" in reason and "apt-get install -y chromium" in reason and "root" in reason


def test_a_browser_that_does_not_start_is_a_reason_to_skip(tmp_path):
    # e.g. Ubuntu's chromium-browser stub, or a browser missing its libraries
    stub = fake_browser(tmp_path, 'echo "Command \'/usr/bin/chromium-browser\' requires the chromium snap to be '
                                  'installed." >&2; exit 1')
    reason = browser_problem(stub, tmp_path / "profile")
    assert reason.startswith(f"Chromium ({stub}) does not start headless here")
    assert "requires the chromium snap" in reason


def test_a_browser_that_renders_is_used(tmp_path):
    ok = fake_browser(tmp_path, 'echo "<html><head></head><body><p>cfaug</p></body></html>"')
    assert browser_problem(ok, tmp_path / "profile") is None


def test_review_section_renders_in_chromium(browser, tmp_path, make_run_dir, make_row):
    from cfaug.evaluate.pairs import load_pairs
    from cfaug.run.decisions import ReviewStore

    rows = [make_row("1", "A good film.", "A bad film.", "positive", "negative", flipped=True),
            make_row("2", "A dull plot.", "A lively plot.", "negative", "positive", flipped=True)]
    rd = make_run_dir(tmp_path / "run", rows)
    ids = [p.item_id for p in load_pairs(rd).pairs]
    with ReviewStore(rd) as store:
        store.record(ids[0], "ann", "accepted")
        store.record(ids[1], "ann", "not_flipped")
        store.record(ids[0], "<b>bob</b>", "accepted")
    dom = chromium(["--dump-dom", write_report(rd).resolve().as_uri()], tmp_path / "profile-review").stdout
    section = re.search(r'<section id="review">.*?</section>', dom, re.S).group(0)
    assert "50.0%: 1 of 2 rows judged flipped" in section
    assert re.search(r'<table class="metrics" id="review-counts">.*&lt;b&gt;bob&lt;/b&gt;.*</table>', section, re.S)
    assert "<b>bob</b>" not in dom and 'class="filters-ready"' in dom  # escaped; the page's script still ran


def test_report_runs_no_inline_handler_under_its_csp(browser, tmp_path, make_run_dir, make_row):
    """The page's CSP allows its own script only (by hash): an inline handler attribute (``onsubmit=``) is
    refused and logged as a violation. The filters' form is handled by the script instead; submitting it
    (Enter in the form) neither logs a violation nor leaves the page."""
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    from playwright.sync_api import sync_playwright

    rows = [make_row("1", "A good film.", "A bad film.", "positive", "negative", flipped=True)]
    page_file = write_report(make_run_dir(tmp_path / "run", rows))
    html = page_file.read_text(encoding="utf-8")
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", html), "an inline event handler in the report"
    with sync_playwright() as pw:
        chromium_browser = pw.chromium.launch(executable_path=browser, headless=True,
                                              args=["--no-sandbox", "--disable-gpu"])
        try:
            page = chromium_browser.new_page()
            problems: list[str] = []
            page.on("console", lambda msg: msg.type == "error" and problems.append(msg.text))
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            url = page_file.resolve().as_uri()
            page.goto(url)
            page.wait_for_selector("body.filters-ready")
            page.evaluate("() => document.querySelector('form.filters').requestSubmit()")
            page.wait_for_timeout(200)
            assert page.url == url
            assert problems == []
        finally:
            chromium_browser.close()
