"""Headless Chromium for the browser tests of the HTML reports: finding the system's browser, why it cannot
run here (the reason a test is skipped with), running it on a page, reading the pixels of its screenshots, and
keeping them in $CFAUG_TEST_ARTIFACTS.
Loaded by tests/conftest.py as ``cfaug_tests_chromium``; its ``browser`` fixture skips with the reason."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def browser_problem(browser: str | None, profile: Path) -> str | None:
    """Why ``browser`` cannot run the test here (None: it renders a page headless)."""
    if browser is None:
        return ("Chromium is not installed; the browser tests need it (a system package, not on "
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


def keep_artifacts(files: dict[str, Path]) -> None:
    """Copies each file to ``$CFAUG_TEST_ARTIFACTS/NAME`` (``files``: name -> path) when that variable is
    set, so that a browser test's screenshots and pages outlive its temporary folder."""
    keep = os.environ.get("CFAUG_TEST_ARTIFACTS")
    if not keep:
        return
    Path(keep).mkdir(parents=True, exist_ok=True)
    for name, path in files.items():
        shutil.copy(path, Path(keep) / name)
