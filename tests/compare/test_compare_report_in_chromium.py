"""Load the comparison report in headless Chromium: the ranking, the trade-off chart, the downstream bars and
the highlighted edits must render, and a review containing <script> must stay text. The screenshot is kept
in the test output (the test's tmp_path, and $CFAUG_TEST_ARTIFACTS when set).

(Named apart from tests/evaluate/report/test_report_in_chromium.py: test modules here are not packages,
so two files of one name cannot be collected together.)

Chromium is a system package, not a PyPI one: where it is missing (no root or no apt-get to install it) or
cannot start headless, the browser test is skipped with the reason (``pytest -rs`` lists it)."""

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from report_fixture import make_compare_dir

from cfaug.compare.report import write_report
from cfaug.evaluate.report.charts import PALETTE

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

INS_RGB = (0xC9, 0xF2, 0xC7)  # background of <ins> in the run report's report.css
FIRST_RGB = tuple(int(PALETTE[0][i: i + 2], 16) for i in (1, 3, 5))  # the first ranked method's colour
REFERENCE_RGB = (0x9C, 0x9C, 0x9C)  # cfaug.compare.report.REFERENCE_COLOR


def browser_problem(browser: str | None, profile: Path) -> str | None:
    """Why ``browser`` cannot run the test here (None: it renders a page headless)."""
    if browser is None:
        return ("Chromium is not installed; the HTML report's browser test needs it (a system package, not on "
                "PyPI: as root on Debian/Ubuntu, apt-get install -y chromium, which .ci/run does); the rest of "
                "the suite does not")
    cmd = [browser, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", "data:text/html,<p>cfaug</p>"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Chromium ({browser}) does not start headless here: {exc}"
    if res.returncode != 0 or "<p>cfaug</p>" not in res.stdout:
        said = [ln.strip() for ln in res.stderr.splitlines() if ln.strip()]
        return (f"Chromium ({browser}) does not start headless here (exit status {res.returncode})"
                + (f": {said[-1][:300]}" if said else ""))
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> str:
    """The browser, or a skip saying why there is none that works."""
    problem = browser_problem(BROWSER, tmp_path_factory.mktemp("chromium-probe"))
    if problem:
        pytest.skip(problem)
    return BROWSER


def chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    cmd = [BROWSER, *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=True)


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes) into rows of raw RGB pixels."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos: pos + 4])
        kind, body = data[pos + 4: pos + 8], data[pos + 8: pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, rows, prev = zlib.decompress(idat), [], bytearray(width * bpp)
    stride = width * bpp
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1: (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(b for j in range(0, stride, bpp) for b in line[j: j + 3]))
        prev = line
    return width, height, rows


def count_color(rows: list[bytes], rgb: tuple[int, int, int]) -> int:
    needle = bytes(rgb)
    return sum(sum(1 for j in range(0, len(r), 3) if r[j: j + 3] == needle) for r in rows)


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
    keep = os.environ.get("CFAUG_TEST_ARTIFACTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "compare.png")
        shutil.copy(page, Path(keep) / "compare.html")
    print(f"screenshot: {shot}")


def test_no_browser_is_a_reason_to_skip(tmp_path):
    reason = browser_problem(None, tmp_path)
    assert "Chromium is not installed" in reason and "apt-get install -y chromium" in reason
