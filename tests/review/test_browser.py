"""The review page in a real headless Chromium, driven from the keyboard with Playwright's Python API:
accept, reject, edit, undo, label not flipped, skip; a ``<script>`` in a rewrite stays text; a reload
resumes at the first undecided item; two annotators (and a second tab) at once.

Chromium is the system's, started through Playwright (review_page.py); where it cannot run here, the tests
are skipped with the reason (``pytest -rs`` lists it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from review_page import WAIT_MS, AppThread, Watch, launch_chromium, open_as, shown
from review_runs import SCRIPT, SCRIPT_ROW, real_run

from cfaug_tests_chromium import keep_artifacts

from cfaug.review.items import load_items
from cfaug.run.decisions import ReviewStore


@pytest.fixture(scope="module")
def chromium(run_dir):  # after the run: augment runs an event loop, which Playwright's would be in the way of
    yield from launch_chromium()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return real_run(tmp_path_factory.mktemp("review-browser"))


@pytest.fixture
def server(run_dir, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    app = AppThread(run)
    yield run, app
    app.close()


def screenshot(page, tmp_path: Path, name: str) -> None:
    page.screenshot(path=str(tmp_path / name), full_page=True)
    keep_artifacts({name: tmp_path / name})


def test_keyboard_accept_reject_edit_undo_and_reload(chromium, server, tmp_path):
    from playwright.sync_api import expect

    run, app = server
    order = [it.id for it in load_items(run).ordered()]
    script_item = next(it.id for it in load_items(run).items if it.source_id == SCRIPT_ROW)
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page, watch = open_as(context, app.url, "alice")
    status = page.locator("#status")
    shown(page, order[0])
    expect(page.locator("#keys")).to_contain_text("accept")
    expect(page.locator("#who")).to_have_text("annotator: alice")
    expect(page.locator("#pairs del").first).to_be_visible()  # the edits are highlighted
    expect(page.locator("#pairs ins").first).to_be_visible()

    def decisions() -> dict[str, tuple]:
        with ReviewStore(run) as store:
            return {item: (d.decision, d.fields, d.label) for (item, _), d in store.current("alice").items()}

    page.keyboard.press("a")
    shown(page, order[1])
    expect(status).to_have_text("saved: accepted")
    assert decisions() == {order[0]: ("accepted", None, None)}  # committed before the page was told

    page.keyboard.press("x")
    shown(page, order[2])
    assert decisions()[order[1]] == ("rejected", None, None)

    # the third item's rewrite holds a <script> element: shown as text, never run
    assert order[2] == script_item
    expect(page.locator("#pairs .rewrite .text")).to_contain_text(SCRIPT)
    assert page.locator("#pairs script").count() == 0
    assert page.evaluate("() => window.__pwned") is None

    page.keyboard.press("e")
    editor = page.locator("#editor textarea")
    expect(editor).to_be_focused()
    editor.fill("The acting is wooden and the story is clumsy.")
    page.keyboard.press("Control+Enter")
    shown(page, order[3])
    expect(status).to_have_text("saved: edited")
    assert decisions()[order[2]] == ("edited", {"text": "The acting is wooden and the story is clumsy."}, None)

    page.keyboard.press("u")  # undo: the edited item comes back, undecided
    shown(page, order[2])
    expect(status).to_have_text("undone: edited")
    assert order[2] not in decisions()
    expect(page.locator("#pairs .rewrite .text")).to_contain_text(SCRIPT)  # the machine's text again

    page.keyboard.press("n")
    shown(page, order[3])
    page.keyboard.press("l")  # flipped to another label: for sentiment the only other is the source's own
    expect(status).to_have_text("the only other label is the original\u2019s (Negative): that is n, label not flipped")
    expect(page.locator("#label-picker")).to_be_hidden()
    page.keyboard.press("1")  # no picker: the number does nothing
    page.keyboard.press("n")
    shown(page, order[4])
    page.keyboard.press(" ")
    shown(page, order[5])
    assert decisions() == {order[0]: ("accepted", None, None), order[1]: ("rejected", None, None),
                           order[2]: ("not_flipped", None, None), order[3]: ("not_flipped", None, None),
                           order[4]: ("skipped", None, None)}
    bar = page.locator("#bar")
    assert bar.get_attribute("value") == "5" and bar.get_attribute("max") == str(len(order))
    screenshot(page, tmp_path, "review-page.png")

    # a reload resumes at the first undecided item, under the name kept for this tab
    page.reload()
    shown(page, order[5])
    expect(page.locator("#who")).to_have_text("annotator: alice")
    # browsing back (not undecided only) shows an earlier decision
    page.uncheck("#f-undecided")
    shown(page, order[0])
    expect(page.locator("#decision")).to_contain_text("accepted")
    page.keyboard.press("ArrowRight")
    shown(page, order[1])
    expect(page.locator("#decision")).to_contain_text("rejected")
    assert watch.problems == []
    context.close()


def test_two_annotators_and_a_second_tab(chromium, server):
    from playwright.sync_api import expect

    run, app = server
    order = [it.id for it in load_items(run).ordered()]
    alice_ctx = chromium.new_context()
    bob_ctx = chromium.new_context()
    alice, watch_a = open_as(alice_ctx, app.url, "alice")
    bob, watch_b = open_as(bob_ctx, app.url, "bob")
    shown(alice, order[0])
    shown(bob, order[0])
    alice.keyboard.press("a")
    shown(alice, order[1])
    bob.keyboard.press("x")  # bob's queue does not skip what alice decided: an item can have several people
    shown(bob, order[1])
    alice.keyboard.press("a")
    bob.keyboard.press("a")
    shown(alice, order[2])
    shown(bob, order[2])
    # a second tab of alice's browser asks its own name (kept per tab) and shares her cookie
    tab = alice_ctx.new_page()
    Watch(tab)
    tab.goto(app.base + "/")
    expect(tab.locator("#name-form")).to_be_visible(timeout=WAIT_MS)
    tab.fill("#name-input", "alice")
    tab.press("#name-input", "Enter")
    shown(tab, order[2])  # her first undecided item
    tab.keyboard.press("n")
    shown(tab, order[3])
    alice.reload()
    shown(alice, order[3])
    with ReviewStore(run) as store:
        live = {(item, who): d.decision for (item, who), d in store.current().items()}
    assert live == {(order[0], "alice"): "accepted", (order[1], "alice"): "accepted",
                    (order[2], "alice"): "not_flipped", (order[0], "bob"): "rejected",
                    (order[1], "bob"): "accepted"}
    assert watch_a.problems == [] and watch_b.problems == []
    alice_ctx.close()
    bob_ctx.close()


def test_without_the_token_the_page_is_refused(chromium, server):
    _, app = server
    context = chromium.new_context()
    page = context.new_page()
    response = page.goto(app.base + "/")
    assert response.status == 401 and "token" in page.content()
    response = page.goto(app.base + "/?token=wrong")
    assert response.status == 403
    context.close()
