"""Load the report in headless Chromium: the metric table and a highlighted edit must render, the page's
own script must run, and a review containing <script> must stay text. The screenshot is kept in the test
output (the test's tmp_path, and $CFAUG_TEST_ARTIFACTS when set)."""

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
pytestmark = pytest.mark.skipif(BROWSER is None, reason="Chromium is not installed (apt-get install -y chromium)")

INS_RGB = (0xC9, 0xF2, 0xC7)  # background of <ins> in report.css
DEL_RGB = (0xFF, 0xD7, 0xD5)  # background of <del>


def chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    cmd = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           f"--user-data-dir={profile}", *args]
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


def test_report_renders_in_chromium(tmp_path, make_run_dir, make_row):
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
