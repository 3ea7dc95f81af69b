"""The review page's flow from the keyboard, in a real headless Chromium driven with Playwright: the arrows at
either end of the queue keep the item shown; keys pressed while a decision is saved wait their turn, in order;
a restart keeps the server's address and token (CFAUG_REVIEW_TOKEN's, or the one kept in the run directory) and
the page retries until it is back, losing no key; Esc leaves a field; ``g`` jumps to an item. Chromium is the system's (review_page.py); where it cannot run here, the tests are skipped with the
reason."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from review_page import AppThread, launch_chromium, open_as, shown, tab_to, wait_for
from review_runs import judged_row, write_run

from cfaug.review.address import TOKEN_FILE, last_address, remember, stored_token
from cfaug.review.items import load_items
from cfaug.run.decisions import ReviewStore

ITEMS = 16
URL = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=(\S+)$")


@pytest.fixture(scope="module")
def chromium():
    yield from launch_chromium()


def flow_run(path: Path) -> Path:
    """A finished run of :data:`ITEMS` sentiment rewrites whose own judge's confidences run from 0.03 to 0.93."""
    return write_run(path, [judged_row(i, confidence=round(0.03 + 0.06 * i, 2)) for i in range(ITEMS)])


def review_order(run: Path, **filters) -> list[str]:
    return [it.id for it in load_items(run).ordered(**filters)]


def decisions(run: Path, annotator: str = "alice") -> dict[str, str]:
    with ReviewStore(run) as store:
        return {item: d.decision for (item, _), d in store.current(annotator).items()}


@pytest.fixture
def server(tmp_path):
    run = flow_run(tmp_path / "run")
    app = AppThread(run)
    yield run, app
    app.close()


def test_arrows_at_the_ends_of_the_queue_keep_the_item(chromium, server):
    from playwright.sync_api import expect

    run, app = server
    order = review_order(run)
    context = chromium.new_context()
    page, watch = open_as(context, app.url, "alice")
    status, card = page.locator("#status"), page.locator("#card")
    shown(page, order[0])
    # the labels as the rows spell them, not the task's lowercase names
    expect(page.locator("#facts .labels .fact-value")).to_have_text("Positive \u2192 Negative")
    expect(page.locator("#pairs .original h2")).to_have_text("Original (Positive)")
    page.keyboard.press("ArrowLeft")  # the first item: nothing before it, and the item stays
    expect(status).to_have_text("no earlier item in this queue")
    shown(page, order[0])
    expect(card).to_be_visible()
    expect(page.locator("#empty")).to_be_hidden()
    page.keyboard.press("a")  # the keys still work
    shown(page, order[1])
    expect(status).to_have_text("saved: accepted")
    page.keyboard.press("ArrowRight")
    shown(page, order[2])
    expect(status).to_have_text("")  # the previous item's "saved" is not said of this one
    page.keyboard.press("ArrowLeft")
    shown(page, order[1])
    page.keyboard.press("ArrowLeft")  # undecided only: the first item is decided, so none is before this one
    expect(status).to_have_text("no earlier item in this queue")
    shown(page, order[1])
    page.keyboard.press("a")
    shown(page, order[2])
    assert decisions(run) == {order[0]: "accepted", order[1]: "accepted"}

    # every item, decided or not: the arrows walk the whole queue and stop at both ends
    tab_to(page, "f-undecided")
    page.keyboard.press("Space")
    shown(page, order[0])
    page.keyboard.press("ArrowLeft")
    expect(status).to_have_text("no earlier item in this queue")
    page.keyboard.press("ArrowRight")
    shown(page, order[1])
    expect(status).to_have_text("")
    for _ in range(ITEMS):  # past the last item
        page.keyboard.press("ArrowRight")
    expect(status).to_have_text("no later item in this queue")
    shown(page, order[-1])
    expect(page.locator("#facts .where")).to_have_text(f"item {ITEMS} of {ITEMS}")
    page.keyboard.press("ArrowLeft")
    shown(page, order[-2])
    page.keyboard.press("x")
    assert watch.problems == []
    wait_for(lambda: decisions(run).get(order[-2]) == "rejected", "the rejection of the last item but one")
    context.close()


def test_keys_pressed_while_saving_wait_their_turn(chromium, tmp_path):
    """Over a slow connection (each request waits 0.15 s) ten keys 30 ms apart are all recorded, in order;
    a key typed while the editor it follows waits is typed into the editor."""
    from playwright.sync_api import expect

    run = flow_run(tmp_path / "run")
    order = review_order(run)
    app = AppThread(run, delay=0.15)
    try:
        context = chromium.new_context()
        page, watch = open_as(context, app.url, "alice")
        shown(page, order[0])
        keys = ["a", "x", "n", "a", " ", "x", "a", "n", "x", "a"]
        for key in keys:
            page.keyboard.press(key)
            page.wait_for_timeout(30)
        shown(page, order[10])
        expect(page.locator("#status")).to_have_text("saved: accepted")
        named = {"a": "accepted", "x": "rejected", "n": "not_flipped", " ": "skipped"}
        with ReviewStore(run) as store:
            history = [(d.item, d.decision) for d in store.history()]
        assert history == [(order[i], named[k]) for i, k in enumerate(keys)]

        # accept, then edit the next one, typing before the editor is open, and save: all in turn
        machine = load_items(run).by_id()[order[11]].rewrite["text"]
        page.keyboard.press("a")
        page.keyboard.press("e")
        page.keyboard.type(" Truly bad.")
        page.keyboard.press("Control+Enter")
        shown(page, order[12])
        expect(page.locator("#status")).to_have_text("saved: edited")
        with ReviewStore(run) as store:
            live = store.current("alice")
        assert live[(order[10], "alice")].decision == "accepted"
        assert live[(order[11], "alice")].fields == {"text": machine + " Truly bad."}
        assert watch.problems == []
        context.close()
    finally:
        app.close()


def test_esc_leaves_a_field_and_the_keys_work_again(chromium, server):
    from playwright.sync_api import expect

    run, app = server
    filtered = review_order(run, confidence=(0.2, None))
    context = chromium.new_context()
    page, watch = open_as(context, app.url, "alice")
    tab_to(page, "f-min")
    page.keyboard.type("0.2")
    page.keyboard.press("Tab")
    expect(page.locator("#progress-text")).to_contain_text("filtered")
    shown(page, filtered[0])
    expect(page.locator("#f-max")).to_be_focused()
    page.keyboard.press("a")  # a key for the field (a number field takes no letter), not a decision
    page.wait_for_timeout(300)
    assert decisions(run) == {}
    page.keyboard.press("Escape")
    expect(page.locator("#f-max")).not_to_be_focused()
    page.keyboard.press("a")
    shown(page, filtered[1])
    assert decisions(run) == {filtered[0]: "accepted"}
    # the same from the checkbox and from the method list
    for field in ("f-undecided", "f-method"):
        tab_to(page, field)
        page.keyboard.press("Escape")
        expect(page.locator("#" + field)).not_to_be_focused()
    page.keyboard.press("x")
    shown(page, filtered[2])
    assert decisions(run) == {filtered[0]: "accepted", filtered[1]: "rejected"}
    assert watch.problems == []
    context.close()


def test_g_jumps_to_an_item_by_position_or_id(chromium, server):
    from playwright.sync_api import expect

    run, app = server
    order = review_order(run)
    context = chromium.new_context()
    page, watch = open_as(context, app.url, "alice")
    status, field = page.locator("#status"), page.locator("#jump-input")
    expect(page.locator("#key-list")).to_contain_text("go to an item")
    shown(page, order[0])
    page.keyboard.press("a")
    shown(page, order[1])
    page.keyboard.press("g")
    expect(field).to_be_focused()
    page.keyboard.type("1")  # a position: the first item, decided or not
    page.keyboard.press("Enter")
    shown(page, order[0])
    expect(status).to_have_text("")
    expect(page.locator("#jump-form")).to_be_hidden()
    expect(page.locator("#decision")).to_contain_text("accepted")
    page.keyboard.press("g")
    page.keyboard.type(order[9])  # an item id
    page.keyboard.press("Enter")
    shown(page, order[9])
    expect(page.locator("#facts .where")).to_have_text(f"item 10 of {ITEMS}")
    page.keyboard.press("g")
    page.keyboard.type("99")
    page.keyboard.press("Enter")
    expect(status).to_contain_text(f"no position 99 in this queue (it has {ITEMS} items)")
    page.keyboard.press("g")
    page.keyboard.type("nothing#0")
    page.keyboard.press("Enter")
    expect(status).to_have_text("no item \u201cnothing#0\u201d in this run")
    shown(page, order[9])
    page.keyboard.press("g")
    page.keyboard.type("3")
    page.keyboard.press("Escape")  # cancelled: nothing moves, and the keys are the page's again
    expect(page.locator("#jump-form")).to_be_hidden()
    page.keyboard.press("x")
    wait_for(lambda: decisions(run).get(order[9]) == "rejected", "the rejection of the item jumped to")
    # typed while a decision is still being saved: the jump waits its turn
    page.keyboard.press("g")
    page.keyboard.type("5")
    page.keyboard.press("Enter")
    shown(page, order[4])
    # the browser logs the API's 404 for the unknown id; nothing else went wrong
    assert [p for p in watch.problems if "404 (Not Found)" not in p] == []
    context.close()


# -- the server as a user runs it ---------------------------------------------------------------------------


class Serve:
    """``python -m cfaug review serve RUN_DIR --no-browser [extra]`` (``token``: as CFAUG_REVIEW_TOKEN), until
    it printed its URL."""

    def __init__(self, run_dir: Path, *extra: str, token: str | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if k != "CFAUG_REVIEW_TOKEN"}
        if token:
            env["CFAUG_REVIEW_TOKEN"] = token
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cfaug", "review", "serve", str(run_dir), "--no-browser", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(ln) for ln in self.proc.stdout] + [lines.put(None)],
                         daemon=True).start()
        deadline = time.monotonic() + 90
        while True:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                self.proc.kill()
                raise AssertionError(f"no URL printed; stderr: {self.proc.stderr.read()}")
            m = URL.match(line.strip())
            if m:
                break
        self.url, self.port = line.strip(), int(m.group(1))

    def stop(self) -> str:
        """Ctrl-C; returns what it wrote on stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return self.proc.stderr.read()


def test_a_restart_keeps_the_address_and_the_page_waits_for_it(chromium, tmp_path):
    from playwright.sync_api import expect

    run = flow_run(tmp_path / "run")
    order = review_order(run)
    token = "restart-test-token-0123456789abcdef"
    first = Serve(run, token=token)
    second = None
    try:
        assert last_address(run) == ("127.0.0.1", first.port)  # recorded for the next start
        context = chromium.new_context()
        page, watch = open_as(context, first.url, "alice")
        status = page.locator("#status")
        shown(page, order[0])
        page.keyboard.press("a")
        shown(page, order[1])
        first.proc.kill()  # SIGKILL: no goodbye
        first.proc.wait(timeout=30)
        page.keyboard.press("x")  # while nothing answers
        expect(status).to_have_text("server unreachable, retrying\u2026")
        shown(page, order[1])
        second = Serve(run, token=token)  # no --port: the last server's
        assert second.port == first.port and second.url == first.url
        shown(page, order[2])  # the waiting key went through once the server was back
        expect(status).to_have_text("saved: rejected")
        page.keyboard.press("n")
        shown(page, order[3])
        assert decisions(run) == {order[0]: "accepted", order[1]: "rejected", order[2]: "not_flipped"}
        # the browser logs each refused connection, and the 403 that made the page fetch the new server's
        # CSRF token; nothing else went wrong
        assert [p for p in watch.problems if "ERR_CONNECTION_REFUSED" not in p and "403 (Forbidden)" not in p] == []
        context.close()
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
        if second is not None:
            second.stop()


def test_a_restart_without_a_fixed_token_keeps_the_page_and_every_key(chromium, tmp_path):
    """Without CFAUG_REVIEW_TOKEN the run's token is kept in the run directory (readable by its owner only), so
    the page open on the killed server carries on with the restarted one, and the keys pressed meanwhile are
    all recorded, in order; the status line counts them while the server is away."""
    from playwright.sync_api import expect

    run = flow_run(tmp_path / "run")
    order = review_order(run)
    first = Serve(run)
    second = None
    try:
        token_file = run / TOKEN_FILE
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert first.url.endswith(stored_token(run)[0])
        context = chromium.new_context()
        page, watch = open_as(context, first.url, "alice")
        status = page.locator("#status")
        shown(page, order[0])
        page.keyboard.press("a")
        shown(page, order[1])
        first.proc.kill()
        first.proc.wait(timeout=30)
        for key in ("x", "n", "a"):  # while nothing answers
            page.keyboard.press(key)
        expect(status).to_have_text("server unreachable, retrying\u2026 (2 more waiting)")
        second = Serve(run)  # neither --port nor a token given
        assert second.url == first.url
        shown(page, order[4])
        expect(status).to_have_text("saved: accepted")
        assert decisions(run) == {order[0]: "accepted", order[1]: "rejected", order[2]: "not_flipped",
                                  order[3]: "accepted"}
        with ReviewStore(run) as store:
            assert [d.item for d in store.history()] == order[:4]  # each once, in order
        assert [p for p in watch.problems if "ERR_CONNECTION_REFUSED" not in p and "403 (Forbidden)" not in p] == []
        context.close()
        # the first start said which port it took, the second that it took the same one
        assert f"listening on port {first.port} (a free one; the next start on this run directory takes it " \
               "again)" in first.proc.stderr.read()
        err = second.stop()
        assert f"listening on port {first.port}, as the last server on this run directory did" in err
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
        if second is not None:
            second.stop()


def test_a_taken_port_falls_back_to_a_free_one_and_says_so(tmp_path):
    run = flow_run(tmp_path / "run")
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        taken = blocker.getsockname()[1]
        remember(run, "127.0.0.1", taken)
        server = Serve(run)
        err = server.stop()
    assert server.port != taken
    assert f"port {taken}, where the last server on this run directory listened, is taken" in err
    assert "serving on a free port instead" in err
    assert last_address(run) == ("127.0.0.1", server.port)


def test_every_interface_prints_an_address_for_other_machines(tmp_path):
    run = flow_run(tmp_path / "run")
    token = "any-host-test-token-0123456789abcdef"
    server = Serve(run, "--host", "0.0.0.0", "--port", "0", token=token)
    err = server.stop()
    assert server.url == f"http://127.0.0.1:{server.port}/?token={token}"  # this machine, on stdout
    hostname = socket.gethostname()
    if hostname != "localhost":
        assert f"from another machine: http://{hostname}:{server.port}/?token={token}" in err
    # with the token fixed, a start without --host and --port listens where the last one did
    again = Serve(run, token=token)
    err = again.stop()
    assert again.port == server.port and "listening on 0.0.0.0 (not only this machine)" in err
