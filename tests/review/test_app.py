"""The review web app through aiohttp's test client: every endpoint, the token, CSRF and Host checks,
escaping, bounded bodies, and concurrent annotators and tabs losing or duplicating no decision."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3

import pytest
from aiohttp.test_utils import TestClient, TestServer
from review_runs import SCRIPT, SCRIPT_ROW, judged_run, real_run

from cfaug.config import ConfigError
from cfaug.review.app import CSP, MAX_BODY, make_app
from cfaug.review.items import load_items
from cfaug.run.decisions import STORE_FILE, ReviewStore, StoreError

TOKEN = "test-token-0123456789"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A real zero-shot run of eight rows (see review_runs.real_run); tests copy it before deciding."""
    return real_run(tmp_path_factory.mktemp("review-app"))


@pytest.fixture
def fresh_run(run_dir, tmp_path):
    """The module's run, copied without decisions."""
    import shutil

    dst = tmp_path / "run"
    shutil.copytree(run_dir, dst, ignore=shutil.ignore_patterns(STORE_FILE + "*"))
    return dst


def serve(run_dir, test, **kwargs):
    """Run ``await test(client)`` against the app on ``run_dir``; returns its result."""

    async def main():
        app = make_app(run_dir, token=TOKEN, **kwargs)
        async with TestClient(TestServer(app)) as client:
            return await test(client)

    return asyncio.run(main())


async def login(client) -> dict:
    """Open the tokenized URL (the cookie is set), then read the session; returns it."""
    r = await client.get(f"/?token={TOKEN}", allow_redirects=False)
    assert r.status == 303 and r.headers["Location"] == "/"
    r = await client.get("/api/session")
    assert r.status == 200, await r.text()
    return await r.json()


def origin(client) -> str:
    return str(client.make_url("/")).rstrip("/")


async def post(client, path, body, csrf, **headers):
    h = {"X-CSRF-Token": csrf, "Origin": origin(client), **headers}
    r = await client.post(path, json=body, headers=h)
    return r.status, await r.json()


async def first(client, annotator, **params):
    r = await client.get("/api/item", params={"annotator": annotator, "undecided": "1", "pos": "0", **params})
    assert r.status == 200, await r.text()
    return await r.json()


# -- the page and its files ----------------------------------------------------------------------------------


def test_page_assets_cookie_and_headers(run_dir):
    async def test(client):
        r = await client.get(f"/?token={TOKEN}", allow_redirects=False)
        assert r.status == 303 and r.headers["Location"] == "/"  # the token leaves the address bar
        cookie = r.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        page = await client.get("/")
        html = await page.text()
        assert page.status == 200 and page.content_type == "text/html"
        assert page.headers["Content-Security-Policy"] == CSP and "default-src 'self'" in CSP
        assert "'unsafe-inline'" not in CSP and "frame-ancestors 'none'" in CSP
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        # no inline script or style: every script has a src, no <style>, no style= or on*= attributes
        assert re.findall(r"<script[^>]*>", html) == ['<script src="/static/review.js" defer>']
        assert "<style" not in html and not re.search(r"\sstyle=|\son[a-z]+=", html)
        assert "http://" not in html and "https://" not in html  # nothing from elsewhere
        js = await client.get("/static/review.js")
        css = await client.get("/static/review.css")
        assert js.status == 200 and js.content_type == "text/javascript"
        assert css.status == 200 and css.content_type == "text/css"
        body = await js.text()
        code = re.sub(r"//[^\n]*", "", body)  # what the script does, not what its comments say
        for sink in (".innerHTML", ".outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function("):
            assert sink not in code, sink
        assert ".textContent" in code
        assert not re.search(r"https?://", body + await css.text())  # no CDN
        for bad in ("/static/index.html", "/static/..%2Fapp.py", "/static/../app.py", "/app.py", "/static/"):
            assert (await client.get(bad)).status == 404, bad

    serve(run_dir, test)


def test_static_files_ship_in_the_package():
    from importlib import resources

    files = {p.name for p in resources.files("cfaug.review").joinpath("static").iterdir()}
    assert {"index.html", "review.js", "review.css"} <= files
    from pathlib import Path

    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert "review/static/*" in pyproject["tool"]["setuptools"]["package-data"]["cfaug"]


# -- token, Host, CSRF ---------------------------------------------------------------------------------------

ENDPOINTS = [("GET", "/"), ("GET", "/static/review.js"), ("GET", "/static/review.css"), ("GET", "/api/session"),
             ("GET", "/api/item?annotator=a"), ("POST", "/api/decisions"), ("POST", "/api/undo"),
             ("GET", "/no-such-page")]


def test_every_endpoint_needs_the_token(fresh_run):
    async def test(client):
        seen = []
        for method, path in ENDPOINTS:
            body = {"annotator": "a", "item": "x", "decision": "accepted"} if method == "POST" else None
            headers = {"Origin": origin(client)}
            missing = await client.request(method, path, json=body, headers=headers)
            sep = "&" if "?" in path else "?"
            wrong = await client.request(method, f"{path}{sep}token=not-the-token", json=body, headers=headers)
            seen.append((path, missing.status, wrong.status))
            assert missing.headers["Content-Security-Policy"] == CSP
            assert "token" in (await missing.text())
        assert all(m == 401 and w == 403 for _, m, w in seen), seen
        # a cookie with a wrong value is refused too (the cookie's name is this token's own)
        from cfaug.review.app import _cookie_name

        client.session.cookie_jar.update_cookies({_cookie_name(TOKEN): "guess"})
        assert (await client.get("/api/session")).status == 403
        # the token's length leaks nothing either: a prefix is as wrong as anything else
        assert (await client.get(f"/api/session?token={TOKEN[:-1]}")).status == 403
        # the query token alone serves a script that never logs in
        assert (await client.get(f"/api/session?token={TOKEN}")).status == 200

    serve(fresh_run, test)
    assert not ReviewStore(fresh_run).current()  # nothing was recorded


def test_host_header_must_name_this_machine(fresh_run):
    async def test(client):
        ok = await client.get(f"/api/session?token={TOKEN}", headers={"Host": "localhost:9"})
        evil = await client.get(f"/api/session?token={TOKEN}", headers={"Host": "attacker.example:8000"})
        return ok.status, evil.status, (await evil.json())["error"]

    ok, evil, message = serve(fresh_run, test)
    assert ok == 200 and evil == 403 and "host name" in message

    async def anywhere(client):
        return (await client.get(f"/api/session?token={TOKEN}", headers={"Host": "review.lab:8000"})).status

    assert serve(fresh_run, anywhere, allowed_hosts=["*"]) == 200
    assert serve(fresh_run, anywhere, allowed_hosts=["review.lab"]) == 200


def test_state_changing_requests_need_csrf_token_and_same_origin(fresh_run):
    async def test(client):
        session = await login(client)
        item = (await first(client, "ann"))["item"]["id"]
        body = {"annotator": "ann", "item": item, "decision": "accepted"}
        refused = []
        for headers in ({"Origin": origin(client)},  # no CSRF token
                        {"Origin": origin(client), "X-CSRF-Token": "forged"},
                        {"X-CSRF-Token": session["csrf"]},  # no Origin, no Referer
                        {"X-CSRF-Token": session["csrf"], "Origin": "http://attacker.example"},
                        {"X-CSRF-Token": session["csrf"], "Origin": "null"},
                        {"X-CSRF-Token": session["csrf"], "Referer": "http://attacker.example/page"}):
            for path in ("/api/decisions", "/api/undo"):
                r = await client.post(path, json=body, headers=headers)
                refused.append((r.status, (await r.json())["error"]))
        assert all(status == 403 for status, _ in refused), refused
        assert any("CSRF" in m for _, m in refused) and any("cross-origin" in m for _, m in refused)
        # a form post (what a cross-site page can send without CORS) is refused however it is dressed
        r = await client.post("/api/decisions", data="annotator=ann", headers={"Origin": origin(client)})
        assert r.status == 403
        # the same request with the token and a same-origin Referer instead of Origin is fine
        r = await client.post("/api/decisions", json=body, headers={"X-CSRF-Token": session["csrf"],
                                                                   "Referer": origin(client) + "/"})
        assert r.status == 200, await r.text()
        return item

    item = serve(fresh_run, test)
    assert [(d.item, d.decision) for d in ReviewStore(fresh_run).history()] == [(item, "accepted")]


def test_oversize_body_is_refused(fresh_run):
    async def test(client):
        session = await login(client)
        item = (await first(client, "ann"))["item"]["id"]
        big = {"annotator": "ann", "item": item, "decision": "edited", "fields": {"text": "x" * (MAX_BODY + 10)}}
        status, body = await post(client, "/api/decisions", big, session["csrf"])
        return status, body

    status, body = serve(fresh_run, test)
    assert status == 413 and "error" in body
    assert not ReviewStore(fresh_run).current()


# -- session, items, decisions -------------------------------------------------------------------------------


def test_session_describes_the_run(run_dir):
    async def test(client):
        return await login(client)

    s = serve(run_dir, test)
    items = load_items(run_dir)
    assert s["items"] == len(items.items) > 0 and s["methods"] == ["zero-shot.v1"]
    assert s["task"]["name"] == "sentiment" and set(s["task"]["labels"]) == {"positive", "negative"}
    # what the page shows: the labels as the rows spell them (the fixture's Positive / Negative)
    assert s["task"]["label_names"] == {"positive": "Positive", "negative": "Negative"}
    assert s["annotator"] is None and len(s["csrf"]) >= 32
    assert {k["action"] for k in s["keys"]} >= {"accepted", "rejected", "edit", "not_flipped", "other_label",
                                                 "skipped", "undo", "jump"}
    assert str(run_dir) not in json.dumps(s)  # the page is told no file path

    fixed = serve(run_dir, test, annotator="carol")
    assert fixed["annotator"] == "carol"


def test_item_shows_the_diff_labels_and_method(run_dir):
    async def test(client):
        await login(client)
        return await first(client, "ann")

    data = serve(run_dir, test)
    items = load_items(run_dir)
    ordered = items.ordered()
    it = data["item"]
    assert it["id"] == ordered[0].id and data["position"] == 0 and data["count"] == len(items.items)
    assert data["decided"] == 0 and it["decision"] is None
    assert it["method"] == "zero-shot.v1" and it["source_label"] and it["target_label"]
    assert it["source_label"].lower() != it["target_label"].lower()
    (field,) = it["fields"]
    assert field["role"] == "text" and field["editable"]
    # the report's word diff: the original keeps equal + deleted pieces, the rewrite equal + inserted ones
    assert "".join(t for _, t in field["left"]) == field["original"]
    assert "".join(t for _, t in field["right"]) == field["rewrite"]
    assert {op for op, _ in field["left"]} == {"equal", "delete"} and {op for op, _ in field["right"]} == {"equal",
                                                                                                          "insert"}


def test_script_in_a_text_comes_back_as_inert_json(run_dir):
    items = load_items(run_dir)
    target = next(it for it in items.items if it.source_id == SCRIPT_ROW)
    assert SCRIPT in target.rewrite["text"]

    async def test(client):
        await login(client)
        r = await client.get("/api/item", params={"annotator": "ann", "id": target.id})
        return r.status, r.content_type, r.headers, await r.text()

    status, ctype, headers, raw = serve(run_dir, test)
    assert status == 200 and ctype == "application/json"
    assert headers["Content-Security-Policy"] == CSP and headers["X-Content-Type-Options"] == "nosniff"
    assert "<script" not in raw.lower() and "</" not in raw  # escaped even inside the JSON strings
    data = json.loads(raw)
    assert SCRIPT in data["item"]["fields"][0]["rewrite"]  # and the text itself is intact


def test_every_kind_of_decision_and_the_queue(fresh_run):
    items = load_items(fresh_run)
    order = [it.id for it in items.ordered()]

    async def test(client):
        s = await login(client)
        csrf = s["csrf"]
        kinds = [("accepted", {}), ("rejected", {}), ("edited", {"fields": {"text": "A fixed rewrite."}}),
                 ("not_flipped", {}), ("other_label", {}), ("skipped", {})]
        shown = []
        for decision, extra in kinds:
            data = await first(client, "ann")
            shown.append(data["item"]["id"])
            if decision == "other_label":
                extra = {"label": data["item"]["source_label"]}
            assert data["decided"] == len(shown) - 1 and data["count"] == len(order)
            status, body = await post(client, "/api/decisions", {"annotator": "ann", "item": data["item"]["id"],
                                                                 "decision": decision, "seconds": 1.5,
                                                                 "request_id": f"r-{decision}", **extra}, csrf)
            assert status == 200, body
            # the original's own label (sentiment has no third one) is the label not flipped
            recorded = "not_flipped" if decision == "other_label" else decision
            assert body["decision"]["decision"] == recorded and body["decision"]["seq"] > 0
        # the edited item now shows the edit, diffed against the original
        r = await client.get("/api/item", params={"annotator": "ann", "id": shown[2]})
        edited = (await r.json())["item"]
        assert edited["decision"]["decision"] == "edited"
        assert edited["fields"][0]["rewrite"] == "A fixed rewrite." != edited["fields"][0]["machine"]
        # browsing (not undecided only) walks the whole order, decided items included, both ways
        r = await client.get("/api/item", params={"annotator": "ann", "pos": "1"})
        assert (await r.json())["item"]["id"] == order[1]
        r = await client.get("/api/item", params={"annotator": "ann", "pos": "1", "dir": "prev"})
        assert (await r.json())["item"]["id"] == order[0]
        # another annotator's queue is untouched by ann's decisions
        assert (await first(client, "bob"))["item"]["id"] == order[0]
        # refusals: each leaves the store as it was
        bad = [({"decision": "maybe"}, 400), ({"decision": "edited"}, 400),
               ({"decision": "edited", "fields": {"premise": "x"}}, 400),
               ({"decision": "edited", "fields": {"text": 3}}, 400),
               ({"decision": "other_label", "label": "sarcastic"}, 400), ({"item": "no#such"}, 404),
               ({"annotator": ""}, 400), ({"annotator": "x" * 65}, 400), ({"annotator": "a\nb"}, 400),
               ({"request_id": "../../etc"}, 400), ({"seconds": "soon"}, 200)]
        for change, expected in bad:
            body = {"annotator": "eve", "item": order[0], "decision": "accepted", **change}
            status, answer = await post(client, "/api/decisions", body, csrf)
            assert status == expected, (change, answer)
        r = await client.get("/api/item", params={"annotator": "ann", "min": "abc"})
        assert r.status == 400
        r = await client.get("/api/item", params={"annotator": "ann", "method": "no-such.v1"})
        assert r.status == 400
        r = await client.post("/api/decisions", data=b"{not json", headers={
            "X-CSRF-Token": csrf, "Origin": origin(client), "Content-Type": "application/json"})
        assert r.status == 400
        return shown

    shown = serve(fresh_run, test)
    assert shown == order[:6]  # each decision moved the queue on to the next undecided item
    with ReviewStore(fresh_run) as store:
        cur = store.current("ann")
        assert [(d.item, d.decision) for d in cur.values()] == list(zip(order, ["accepted", "rejected", "edited",
                                                                                "not_flipped", "not_flipped",
                                                                                "skipped"]))
        assert cur[(order[2], "ann")].fields == {"text": "A fixed rewrite."}
        assert cur[(order[4], "ann")].label is None and cur[(order[0], "ann")].seconds == 1.5
        assert [d.decision for d in store.current("eve").values()] == ["accepted"]  # the "seconds": "soon" one
        assert store.current("eve")[(order[0], "eve")].seconds is None


def test_an_empty_or_wordless_edit_is_refused(fresh_run):
    """An edit must leave some text and change a word of the machine's rewrite; case, spacing and punctuation
    alone are no edit (the page says to accept instead). The store refuses a blank text whoever sends it.
    The original's own label named as "another label" is recorded as the label not flipped."""
    items = load_items(fresh_run)
    order = [it.id for it in items.ordered()]
    machine = items.by_id()[order[0]].rewrite["text"]
    own_label = items.by_id()[order[1]].source_label

    async def test(client):
        csrf = (await login(client))["csrf"]
        answers = []
        for text in ("", "   \n\t ", machine.upper().replace(" ", "  ") + "!!"):
            status, body = await post(client, "/api/decisions", {
                "annotator": "ann", "item": order[0], "decision": "edited", "fields": {"text": text}}, csrf)
            answers.append((status, body["error"]))
        status, body = await post(client, "/api/decisions", {
            "annotator": "ann", "item": order[0], "decision": "edited", "fields": {"text": machine + " Awful."}}, csrf)
        assert status == 200, body
        status, body = await post(client, "/api/decisions", {
            "annotator": "ann", "item": order[1], "decision": "other_label", "label": own_label}, csrf)
        assert status == 200 and body["decision"]["decision"] == "not_flipped" and body["decision"]["label"] is None
        return answers

    answers = serve(fresh_run, test)
    assert [status for status, _ in answers] == [400, 400, 400]
    assert "an edited text cannot be empty" in answers[0][1] and "an edited text cannot be empty" in answers[1][1]
    assert "changes no word of the rewrite" in answers[2][1] and "accept" in answers[2][1]
    with ReviewStore(fresh_run) as store:
        assert [(d.item, d.decision) for d in store.history()] == [(order[0], "edited"), (order[1], "not_flipped")]
        with pytest.raises(ValueError, match="an edited text cannot be empty"):
            store.record(order[2], "ann", "edited", fields={"text": " \n"})


def test_undo_brings_the_item_back_and_is_idempotent(fresh_run):
    items = load_items(fresh_run)
    order = [it.id for it in items.ordered()]

    async def test(client):
        csrf = (await login(client))["csrf"]
        for i in range(3):
            await post(client, "/api/decisions", {"annotator": "ann", "item": order[i], "decision": "accepted"}, csrf)
        assert (await first(client, "ann"))["item"]["id"] == order[3]
        status, body = await post(client, "/api/undo", {"annotator": "ann", "request_id": "undo-1"}, csrf)
        assert status == 200 and body["undone"]["item"] == order[2] and body["undone"]["undone"] is True
        again = await post(client, "/api/undo", {"annotator": "ann", "request_id": "undo-1"}, csrf)
        assert again[1]["undone"]["seq"] == body["undone"]["seq"]  # a retried undo voids nothing more
        data = await first(client, "ann")
        assert data["item"]["id"] == order[2] and data["decided"] == 2
        # the other annotator has nothing to undo
        status, body = await post(client, "/api/undo", {"annotator": "bob"}, csrf)
        assert status == 200 and body["undone"] is None

    serve(fresh_run, test)
    with ReviewStore(fresh_run) as store:
        assert [d.item for d in store.current("ann").values()] == order[:2]
        assert [(d.item, d.undone) for d in store.history()] == [(order[0], False), (order[1], False),
                                                                 (order[2], True)]


def test_fixed_annotator_records_under_its_name_only(fresh_run):
    async def test(client):
        csrf = (await login(client))["csrf"]
        item = (await first(client, "carol"))["item"]["id"]
        ok = await post(client, "/api/decisions", {"item": item, "decision": "accepted"}, csrf)
        other = await post(client, "/api/decisions", {"annotator": "mallory", "item": item,
                                                      "decision": "rejected"}, csrf)
        return ok, other

    (ok, _), (other, body) = serve(fresh_run, test, annotator="carol")
    assert ok == 200 and other == 403 and "carol" in body["error"]
    assert [(d.annotator, d.decision) for d in ReviewStore(fresh_run).history()] == [("carol", "accepted")]
    for bad in ("", "  ", "x" * 65, "a\tb"):  # --annotator is checked as the page's names are: a clear error
        with pytest.raises(ConfigError, match="annotator name"):
            make_app(fresh_run, token=TOKEN, annotator=bad)


def test_filters_and_the_order_of_a_judged_run(tmp_path):
    run = judged_run(tmp_path / "judged")
    items = load_items(run)

    async def test(client):
        await login(client)
        out = {}
        for name, params in {"all": {}, "method": {"method": "zero-shot.v1"}, "range": {"min": "0.4", "max": "0.6"},
                             "both": {"method": "auto-cad.v1", "min": "0.4", "max": "0.6"}}.items():
            seen, pos = [], 0
            while True:
                r = await client.get("/api/item", params={"annotator": "ann", "pos": str(pos), **params})
                data = await r.json()
                if data["item"] is None:
                    break
                seen.append(data["item"])
                pos = data["position"] + 1
            out[name] = seen
        return out

    out = serve(run, test)
    assert [it["id"] for it in out["all"]] == [it.id for it in items.ordered()]
    assert len(out["all"]) == 9  # the row that failed the method's filters is no item
    assert {it["method"] for it in out["method"]} == {"zero-shot.v1"} and len(out["method"]) == 4
    assert sorted(it["own_confidence"] for it in out["range"]) == [0.45, 0.52, 0.6]
    assert [it["own_confidence"] for it in out["both"]] == [it.own_confidence for it in items.ordered()
                                                           if it.method == "auto-cad.v1"
                                                           and 0.4 <= it.own_confidence <= 0.6]
    # the judges disagree on row 4: it comes first, with both verdicts; then the least sure
    first = out["all"][0]
    assert first["source_id"] == "s4" and first["disagree"] is True
    assert first["own_judge"] == {"name": "tfidf-logreg", "threshold": 0.5, "flipped": True}
    assert first["independent"]["judge"] == "sst2-distilbert" and first["independent"]["flipped"] is False
    assert [it["own_confidence"] for it in out["all"][1:4]] == [0.52, 0.45, 0.6]
    agreed = next(it for it in out["all"] if it["source_id"] == "s6")
    assert agreed["independent"]["predicted"] == "negative" and agreed["disagree"] is False


# -- concurrency ---------------------------------------------------------------------------------------------


def test_concurrent_annotators_and_tabs_lose_and_duplicate_nothing(fresh_run):
    items = load_items(fresh_run)
    order = [it.id for it in items.ordered()]
    n = len(order)

    async def test(client):
        csrf = (await login(client))["csrf"]

        async def one(annotator, item, decision, rid):
            status, body = await post(client, "/api/decisions", {"annotator": annotator, "item": item,
                                                                 "decision": decision, "request_id": rid}, csrf)
            assert status == 200, body
            return body["decision"]["seq"]

        jobs = []
        for i, item in enumerate(order):
            jobs.append(one("alice", item, "accepted", f"a-{i}"))
            jobs.append(one("bob", item, "rejected", f"b-{i}"))
            # alice's second tab decides the same item again, and retries that request (same id) at once
            jobs.append(one("alice", item, "skipped", f"a2-{i}"))
            jobs.append(one("alice", item, "skipped", f"a2-{i}"))
        seqs = await asyncio.gather(*jobs)
        progress = [await first(client, who) for who in ("alice", "bob")]
        return seqs, progress

    seqs, progress = serve(fresh_run, test)
    assert all(p["item"] is None and p["decided"] == n for p in progress)
    # the retried request got the first one's decision back; every other request made one decision
    assert all(seqs[k + 2] == seqs[k + 3] for k in range(0, len(seqs), 4))
    assert len(set(seqs)) == 3 * n
    with ReviewStore(fresh_run) as store:
        history = store.history()
        assert len(history) == 3 * n and sorted(d.seq for d in history) == sorted(set(seqs))
        assert sorted(d.request_id for d in history) == sorted(
            [f"a-{i}" for i in range(n)] + [f"b-{i}" for i in range(n)] + [f"a2-{i}" for i in range(n)])
        assert {d.decision for d in store.current("bob").values()} == {"rejected"}
        assert len(store.current("alice")) == n


def test_two_servers_on_one_run_directory(fresh_run):
    """Two app instances (each its own store connection, as two processes would have) at the same time."""
    order = [it.id for it in load_items(fresh_run).ordered()]

    async def main():
        apps = [make_app(fresh_run, token=TOKEN), make_app(fresh_run, token=TOKEN)]
        async with TestClient(TestServer(apps[0])) as c1, TestClient(TestServer(apps[1])) as c2:
            csrf = [(await login(c))["csrf"] for c in (c1, c2)]
            results = await asyncio.gather(*[
                post(c, "/api/decisions", {"annotator": who, "item": item, "decision": "accepted"}, k)
                for item in order for c, k, who in ((c1, csrf[0], "ann"), (c2, csrf[1], "ben"))])
            return [status for status, _ in results]

    assert set(asyncio.run(main())) == {200}
    with ReviewStore(fresh_run) as store:
        assert len(store.history()) == 2 * len(order)
        assert {a for _, a in store.current()} == {"ann", "ben"}


def test_a_foreign_store_is_a_clear_error(fresh_run):
    con = sqlite3.connect(fresh_run / STORE_FILE)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="review.sqlite"):
        make_app(fresh_run, token=TOKEN)
