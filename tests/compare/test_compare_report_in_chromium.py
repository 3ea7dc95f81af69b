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
