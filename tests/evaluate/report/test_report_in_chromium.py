"""Load the report in headless Chromium: the metric table and a highlighted edit must render, the page's
own script must run, and a review containing <script> must stay text. The screenshot is kept in the test
output (the test's tmp_path, and $CFAUG_TEST_ARTIFACTS when set).

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

from cfaug.evaluate.report.html_report import write_report

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

INS_RGB = (0xC9, 0xF2, 0xC7)  # background of <ins> in report.css
DEL_RGB = (0xFF, 0xD7, 0xD5)  # background of <del>


def browser_problem(browser: str | None, profile: Path) -> str | None:
    """Why ``browser`` cannot run the test here (None: it renders a page headless)."""
    if browser is None:
        return ("Chromium is not installed; the HTML report's browser test needs it (a system package, not on "
                "PyPI: as root on Debian/Ubuntu, apt-get install -y chromium, which .ci/run does); the rest of "
                "the suite does not")
    cmd = [browser, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", "data:text/html,<p>cfaug</p>"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
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
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes) into rows of raw pixels."""
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
    keep = os.environ.get("CFAUG_TEST_ARTIFACTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
        shutil.copy(page, Path(keep) / "report.html")
    print(f"screenshot: {shot}")


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
