"""Reading and deciding on the review page, in a real headless Chromium driven with Playwright, at a desktop's
size (1280x800) and a phone's (390x844): each new item opens at its top while the status line and the decision
buttons stay in view (on a phone they never move); an empty edit, or one that changes no word, is refused;
-> at the end of the undecided queue stays and says so; a click or Esc leaves the jump field and the keys are
the page's again; the arrow keys in a confidence box step it and keep the focus; ``g`` clears the status line.

One server for the module; each test reviews under a name of its own, so its queue starts undecided.
Chromium is the system's (review_page.py); where it cannot run here, the tests are skipped with the reason."""

from __future__ import annotations

import pytest
from review_page import AppThread, launch_chromium, open_as, shown, wait_for
from review_runs import judged_row, write_run

from cfaug.review.items import load_items
from cfaug.run.decisions import ReviewStore

ITEMS = 8
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
def long_text(i: int, paragraphs: int, word: str = "thin") -> str:
    """A review of short paragraphs, IMDB style (``<br /><br />`` between them): taller than either screen,
    and quick to diff."""
    return f"Review {i}: " + "<br /><br />".join(f"Scene {k}: the cast does what it can with {word} lines."
                                                 for k in range(paragraphs))


@pytest.fixture(scope="module")
def chromium():
    yield from launch_chromium()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A run of :data:`ITEMS` long reviews (longer than either screen, of different lengths) and its server."""
    rows = []
    for i in range(ITEMS):
        row = judged_row(i, confidence=round(0.05 + 0.1 * i, 2), text=long_text(i, 18 + 4 * (i % 3)))
        row["original_Text"] = long_text(i, 18 + 4 * (i % 3), word="fine")
        rows.append(row)
    run = write_run(tmp_path_factory.mktemp("review-reading") / "run", rows)
    app = AppThread(run)
    yield run, app
    app.close()


def review_order(run) -> list[str]:
    return [it.id for it in load_items(run).ordered()]


def decisions(run, annotator: str) -> dict[str, str]:
    with ReviewStore(run) as store:
        return {item: d.decision for (item, _), d in store.current(annotator).items()}


GEOMETRY = """() => {
  const box = (node) => { const b = node.getBoundingClientRect();
                          return {top: b.top, bottom: b.bottom, left: b.left, right: b.right}; };
  // whether the middle of ``node`` is in the viewport and not covered by anything else
  const seen = (node) => { const b = node.getBoundingClientRect();
    const x = (b.left + b.right) / 2, y = (b.top + b.bottom) / 2;
    if (y < 0 || y > window.innerHeight || x < 0 || x > window.innerWidth) return false;
    const hit = document.elementFromPoint(x, y); return !!hit && (hit === node || node.contains(hit)); };
  const accept = document.querySelector('#actions button[data-action="accepted"]');
  const last = document.querySelector('#keys');
  return {scrollY: window.scrollY, height: window.innerHeight,
          scrollable: document.documentElement.scrollHeight > window.innerHeight + 50,
          card: box(document.getElementById('card')), original: box(document.querySelector('#pairs .original .text')),
          accept: box(accept), acceptSeen: seen(accept), statusSeen: seen(document.getElementById('status')),
          lastSeen: (() => { const b = last.getBoundingClientRect(); const y = b.bottom - 5;
                             const hit = document.elementFromPoint(b.left + 5, y);
                             return !!hit && (hit === last || last.contains(hit)); })()};
}"""


def geometry(page) -> dict:
    return page.evaluate(GEOMETRY)


def to_the_bottom(page) -> dict:
    page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_timeout(50)
    return geometry(page)


def at_its_top(g: dict) -> bool:
    return 0 <= g["card"]["top"] < g["height"] / 2 and 0 <= g["original"]["top"] < g["height"]


@pytest.mark.parametrize("screen", list(VIEWPORTS))
def test_each_item_opens_at_its_top_with_status_and_buttons_in_view(chromium, served, screen):
    from playwright.sync_api import expect

    run, app = served
    order = review_order(run)
    context = chromium.new_context(viewport=VIEWPORTS[screen])
    page, watch = open_as(context, app.url, f"scroll-{screen}")
    shown(page, order[0])
    first = geometry(page)
    assert first["scrollable"] and at_its_top(first)
    assert first["statusSeen"] and first["acceptSeen"]
    # read to the end of the item: nothing of the page is hidden under the bar of buttons
    end = to_the_bottom(page)
    assert end["scrollY"] > 0 and end["lastSeen"], end
    assert end["statusSeen"] and end["acceptSeen"], end
    page.keyboard.press("a")
    shown(page, order[1])
    expect(page.locator("#status")).to_have_text("saved: accepted")
    after = geometry(page)
    assert at_its_top(after), after  # the next item starts at its top, not partway down
    assert after["statusSeen"] and after["acceptSeen"]
    # the buttons stay where they were, wherever the page is scrolled and whatever the item's length
    assert after["accept"] == first["accept"] == end["accept"]
    end = to_the_bottom(page)
    assert end["accept"] == first["accept"] and end["statusSeen"]
    page.keyboard.press("ArrowRight")  # moving without deciding opens the item at its top too
    shown(page, order[2])
    assert at_its_top(geometry(page))
    to_the_bottom(page)
    page.keyboard.press("ArrowLeft")
    shown(page, order[1])
    assert at_its_top(geometry(page))
    assert decisions(run, f"scroll-{screen}") == {order[0]: "accepted"}
    assert watch.problems == []
    context.close()


def test_an_empty_edit_or_one_that_changes_no_word_is_refused(chromium, served):
    from playwright.sync_api import expect

    run, app = served
    order = review_order(run)
    machine = load_items(run).by_id()[order[0]].rewrite["text"]
    context = chromium.new_context(viewport=VIEWPORTS["desktop"])
    page, watch = open_as(context, app.url, "edit-check")
    status, editor = page.locator("#status"), page.locator("#editor textarea")
    shown(page, order[0])
    page.keyboard.press("e")
    expect(editor).to_be_focused()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.press("Control+Enter")
    expect(status).to_contain_text("an edited text cannot be empty")
    expect(page.locator("#editor")).to_be_visible()  # still editing: nothing was saved
    expect(editor).to_be_focused()
    page.keyboard.type("   ")  # whitespace only
    page.keyboard.press("Control+Enter")
    expect(status).to_contain_text("an edited text cannot be empty")
    # the machine's words with other case, spacing and punctuation: no word changed
    editor.fill(machine.upper().replace(".", "!").replace(": ", " :  "))
    page.keyboard.press("Control+Enter")
    expect(status).to_contain_text("changes no word")
    shown(page, order[0])
    # a space written as an HTML character reference: the page sends it, the server (whose check of the
    # words is the final one) refuses it, and the text comes back to the editor to be changed
    spelled = machine.replace("Scene 1:", "Scene&#32;1:")
    editor.fill(spelled)
    page.keyboard.press("Control+Enter")
    expect(status).to_have_text("not saved: the edit changes no word of the rewrite (only case, spacing or "
                                "punctuation, if anything): accept the rewrite as it is (a), or change a word")
    expect(editor).to_have_value(spelled)
    expect(editor).to_be_focused()
    page.wait_for_timeout(200)
    assert decisions(run, "edit-check") == {}
    page.keyboard.press("Escape")
    expect(page.locator("#editor")).to_be_hidden()
    page.keyboard.press("e")  # a real edit is saved
    editor.fill(machine.replace("thin lines", "no lines at all"))
    page.keyboard.press("Control+Enter")
    shown(page, order[1])
    expect(status).to_have_text("saved: edited")
    assert decisions(run, "edit-check") == {order[0]: "edited"}
    # the browser logs the 400 of the edit the server refused, and nothing else
    assert [p for p in watch.problems if "400 (Bad Request)" not in p] == []
    assert len(watch.problems) == 1
    context.close()


def test_right_arrow_at_the_end_of_the_undecided_queue_stays_and_says_so(chromium, served):
    from playwright.sync_api import expect

    run, app = served
    order = review_order(run)
    who = "arrow-end"
    with ReviewStore(run) as store:  # everything decided but the third item and the last
        for item in order[:2] + order[3:-1]:
            store.record(item, who, "rejected")
    context = chromium.new_context(viewport=VIEWPORTS["desktop"])
    page, watch = open_as(context, app.url, who)
    status = page.locator("#status")
    shown(page, order[2])
    page.keyboard.press("ArrowRight")
    shown(page, order[-1])
    page.keyboard.press("ArrowRight")  # no later undecided item: the item stays, and the status says why
    expect(status).to_have_text("no later undecided item in this queue; 1 undecided before this one: \u2190 goes "
                                "back to it")
    page.wait_for_timeout(200)
    shown(page, order[-1])
    page.keyboard.press("ArrowLeft")
    shown(page, order[2])
    page.keyboard.press("a")  # the next undecided item is the last one
    shown(page, order[-1])
    page.keyboard.press("ArrowRight")
    expect(status).to_have_text("no later undecided item in this queue: this is the last one undecided")
    page.wait_for_timeout(200)
    shown(page, order[-1])
    expect(page.locator("#facts .where")).to_have_text(f"item {ITEMS} of {ITEMS}")
    page.keyboard.press("x")
    expect(page.locator("#empty")).to_contain_text("Nothing left to review here")
    assert decisions(run, who)[order[-1]] == "rejected"
    assert watch.problems == []
    context.close()


def test_a_click_or_esc_leaves_the_fields_and_the_keys_work_again(chromium, served):
    from playwright.sync_api import expect

    run, app = served
    order = review_order(run)
    who = "focus-check"
    context = chromium.new_context(viewport=VIEWPORTS["desktop"])
    page, watch = open_as(context, app.url, who)
    status, field = page.locator("#status"), page.locator("#jump-input")
    shown(page, order[0])
    page.keyboard.press("a")
    shown(page, order[1])
    expect(status).to_have_text("saved: accepted")
    page.keyboard.press("g")  # the status of the last save is not left beside the jump field
    expect(field).to_be_focused()
    expect(status).to_have_text("")
    page.keyboard.type("3")
    page.click("#pairs .original .text")  # a click elsewhere on the page: the jump is left
    expect(page.locator("#jump-form")).to_be_hidden()
    expect(field).not_to_be_focused()
    page.keyboard.press("x")  # a key of the page's, not one typed into the jump field
    shown(page, order[2])
    assert decisions(run, who) == {order[0]: "accepted", order[1]: "rejected"}
    # Esc leaves the jump field too
    page.keyboard.press("g")
    expect(field).to_be_focused()
    page.keyboard.press("Escape")
    expect(field).not_to_be_focused()
    page.keyboard.press("n")
    shown(page, order[3])
    # a click into a confidence box: its arrow keys step it and it keeps the focus; Esc gives the keys back
    page.click("#f-min")
    expect(page.locator("#f-min")).to_be_focused()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    expect(page.locator("#f-min")).to_have_value("0.1")
    expect(page.locator("#progress-text")).to_contain_text("filtered")  # the lowest confidence, 0.05, is out
    expect(page.locator("#f-min")).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(page.locator("#f-min")).to_have_value("0.05")
    expect(page.locator("#f-min")).to_be_focused()
    wait_for(lambda: decisions(run, who) == {order[0]: "accepted", order[1]: "rejected", order[2]: "not_flipped"},
             "the three decisions")
    page.keyboard.press("Escape")
    expect(page.locator("#f-min")).not_to_be_focused()
    kept = load_items(run).ordered(confidence=(0.05, None))
    after = next(it.id for it in kept if it.id not in decisions(run, who))
    shown(page, after)
    page.keyboard.press("a")
    wait_for(lambda: decisions(run, who).get(after) == "accepted", "the accept after Esc")
    assert watch.problems == []
    context.close()
