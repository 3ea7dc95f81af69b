"""Load the comparison report in headless Chromium: the ranking, the trade-off chart, the downstream bars and
the highlighted edits must render, and a review containing <script> must stay text. The screenshot is kept
in the test output (the test's tmp_path, and $CFAUG_TEST_ARTIFACTS when set).

(Named apart from tests/evaluate/report/test_report_in_chromium.py: test modules here are not packages,
so two files of one name cannot be collected together.)

Chromium is a system package, not a PyPI one: where it is missing (no root or no apt-get to install it) or
cannot start headless, the browser test is skipped with the reason (``pytest -rs`` lists it)."""

import re

from cfaug_tests_chromium import chromium, count_color, keep_artifacts, png_pixels
from report_fixture import make_compare_dir

from cfaug.compare.report import write_report
from cfaug.evaluate.report.charts import PALETTE

INS_RGB = (0xC9, 0xF2, 0xC7)  # background of <ins> in the run report's report.css
FIRST_RGB = tuple(int(PALETTE[0][i: i + 2], 16) for i in (1, 3, 5))  # the first ranked method's colour
REFERENCE_RGB = (0x9C, 0x9C, 0x9C)  # cfaug.compare.report.REFERENCE_COLOR


def test_compare_report_renders_in_chromium(browser, tmp_path):
    page = write_report(make_compare_dir(tmp_path / "cmp"))
    url = page.resolve().as_uri()

    dom = chromium(["--dump-dom", url], tmp_path / "profile-dom").stdout
    ranking = re.search(r'<table class="metrics" id="ranking-table">.*?</table>', dom, re.DOTALL).group(0)
    for name in ("auto-cad", "coba", "zero-shot", "lass"):
        assert f'data-method="{name}"' in ranking
    assert "needs an LLM endpoint" in ranking
    assert len(re.findall(r'<circle class="point"', dom)) == 2
    assert len(re.findall(r'<g class="ci"', dom)) == 6  # 3 conditions x 2 test sets
    assert "<del>wonderful</del><ins>dreadful</ins>" in dom
    assert "<title>cfaug compare" in dom and "pwned</title>" not in dom
    assert "&lt;script&gt;document.title=\"pwned\"&lt;/script&gt;" in dom

    shot = tmp_path / "compare.png"
    chromium([f"--screenshot={shot}", "--window-size=1280,2600", "--hide-scrollbars", url], tmp_path / "profile-shot")
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1280, 2600)
    assert count_color(pixels, INS_RGB) > 50, "no highlighted insertion visible in the screenshot"
    assert count_color(pixels, FIRST_RGB) > 500, "no point or bar of the first method visible in the screenshot"
    assert count_color(pixels, REFERENCE_RGB) > 300, "no reference bar visible in the screenshot"
    keep_artifacts({"compare.png": shot, "compare.html": page})
    print(f"screenshot: {shot}")


WIDTHS = """() => {
  const box = document.querySelector('#ranking-table').parentElement;
  const ths = document.querySelectorAll('#ranking-table thead th');
  return {page: document.documentElement.scrollWidth, box_right: box.getBoundingClientRect().right,
          box_scrolls: box.scrollWidth > box.clientWidth, box_overflow: getComputedStyle(box).overflowX,
          last_right: ths[ths.length - 1].getBoundingClientRect().right};
}"""


def test_the_ranking_table_fits_a_1280_pixel_window(browser, tmp_path):
    """At 1280 px the ranking table shows its last column without scrolling; in a narrower window the table
    scrolls inside its own box and the page itself never scrolls sideways."""
    import pytest

    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    from playwright.sync_api import sync_playwright

    page_file = write_report(make_compare_dir(tmp_path / "cmp"))
    with sync_playwright() as pw:
        chromium_browser = pw.chromium.launch(executable_path=browser, headless=True,
                                              args=["--no-sandbox", "--disable-gpu"])
        try:
            page = chromium_browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(page_file.resolve().as_uri())
            wide = page.evaluate(WIDTHS)
            assert wide["page"] <= 1280 and wide["last_right"] <= wide["box_right"] <= 1280, wide
            assert not wide["box_scrolls"], wide
            page.set_viewport_size({"width": 800, "height": 800})
            narrow = page.evaluate(WIDTHS)
            assert narrow["page"] <= 800 and narrow["box_right"] <= 800, narrow
            assert narrow["box_scrolls"] and narrow["box_overflow"] == "auto", narrow
        finally:
            chromium_browser.close()
