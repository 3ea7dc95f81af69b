"""The review page in a real headless Chromium, for the browser tests (test_browser, test_page_flow): the
app served from a thread of its own, Chromium started through Playwright, and what a test does on the page.

Chromium is the system's (Debian's ``chromium``, which .ci/run installs as root), started through
``executable_path``; Playwright's own browser download is never used. Where Chromium or the playwright
package is missing, or Chromium cannot start headless here, :func:`launch_chromium` skips the test with
the reason (``pytest -rs`` lists it)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cfaug_tests_chromium import BROWSER

TOKEN = "browser-test-token-0123456789"
WAIT_MS = 15_000


def skip_reason() -> str | None:
    """Why the review page's browser tests cannot run here (None: they can)."""
    if BROWSER is None:
        return ("Chromium is not installed; the review page's browser test needs it (a system package, not on "
                "PyPI: as root on Debian/Ubuntu, apt-get install -y chromium, which .ci/run does)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]' installs it)"
    return None


def launch_chromium() -> Iterator:
    """A module fixture's body: the system's Chromium under Playwright, or a skip saying why not."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=BROWSER, headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        except Error as exc:
            pytest.skip(f"Chromium ({BROWSER}) does not start headless here: {str(exc).splitlines()[0][:300]}")
        yield browser
        browser.close()


class AppThread:
    """The review app on 127.0.0.1 (a free port), served by an event loop of its own in a background thread
    (Playwright's sync API holds the main thread's loop). ``delay``: seconds each API request waits before
    it is handled, as over a slow connection."""

    def __init__(self, run_dir: Path, *, delay: float = 0.0, **kwargs) -> None:
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.delay = delay
        self.thread = threading.Thread(target=self._serve, args=(run_dir, kwargs), daemon=True)
        self.thread.start()
        self.ready.wait(timeout=60)
        if self.error is not None:
            raise self.error
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/?token={TOKEN}"

    def _serve(self, run_dir: Path, kwargs: dict) -> None:
        from aiohttp import web

        from cfaug.review.app import make_app

        app = make_app(run_dir, token=TOKEN, **kwargs)
        if self.delay:
            @web.middleware
            async def slow(request, handler):
                if request.path.startswith("/api/"):
                    await asyncio.sleep(self.delay)
                return await handler(request)

            app.middlewares.insert(0, slow)

        async def main() -> None:
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            try:
                await web.TCPSite(runner, "127.0.0.1", 0).start()
                self.port = runner.addresses[0][1]
                self.stop = asyncio.Event()
                self.loop = asyncio.get_running_loop()
                self.ready.set()
                await self.stop.wait()
            finally:
                await runner.cleanup()

        try:
            asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            self.error = exc
            self.ready.set()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(timeout=30)


class Watch:
    """A page's script errors, console errors (CSP violations among them) and dialogs."""

    def __init__(self, page) -> None:
        self.problems: list[str] = []
        page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        page.on("console", lambda msg: msg.type == "error" and self.problems.append(f"console: {msg.text}"))
        page.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss()))


def open_as(context, url: str, name: str):
    """A new tab of ``context`` on ``url``, with ``name`` typed as the annotator's; returns it and its
    :class:`Watch`."""
    from playwright.sync_api import expect

    page = context.new_page()
    watch = Watch(page)
    page.goto(url)
    assert page.url.endswith("/") and "token" not in page.url  # the token left the address bar
    expect(page.locator("#name-form")).to_be_visible(timeout=WAIT_MS)
    page.fill("#name-input", name)
    page.press("#name-input", "Enter")
    expect(page.locator("#card")).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#name-form")).to_be_hidden()
    return page, watch


def shown(page, item: str) -> None:
    """Waits until the card shows ``item``."""
    from playwright.sync_api import expect

    expect(page.locator("#card")).to_have_attribute("data-item", item, timeout=WAIT_MS)


def tab_to(page, element_id: str, limit: int = 40) -> None:
    """Presses Tab until the element ``element_id`` has the focus (the keyboard's way to a field)."""
    for _ in range(limit):
        if page.evaluate("() => document.activeElement && document.activeElement.id") == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached #{element_id}")


def wait_for(check: Callable[[], bool], what: str, timeout: float = WAIT_MS / 1000) -> None:
    """Waits until ``check()`` is true (polling), else fails naming ``what``."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
