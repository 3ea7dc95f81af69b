"""The review web app: one counterfactual at a time, decided from the keyboard, every decision committed to
the run directory's review store (:mod:`cfaug.run.decisions`) before the page is told it is saved.

The page (``static/index.html``, ``review.js``, ``review.css``, shipped in the package) talks to a small
JSON API; the server never sends HTML built from data, and the page builds its DOM with ``textContent``,
so a ``<script>`` in a text stays text.

Endpoints (every one needs the access token; see *Security* below):

``GET /``                     the page (``/?token=...`` sets the token cookie and redirects to ``/``)
``GET /static/<name>``        the page's script and stylesheet (a fixed list: the client names no path)
``GET /api/session``          the run (task, labels and how its rows spell them, methods, item count),
                              the annotator fixed by ``--annotator`` if any, the CSRF token, the keys
``GET /api/item``             the item to show: ``annotator``, filters (``method``, ``min``, ``max``,
                              ``undecided=1``) and either ``id`` (that item) or ``pos`` with ``dir``
                              (``next``: the first item at or after ``pos`` the filters keep, with
                              ``undecided=1`` else the first undecided one before it unless ``wrap=0``;
                              ``prev``: the last one before it); with the progress through the filtered
                              queue
``POST /api/decisions``       record a decision (JSON: ``annotator``, ``item``, ``decision``, ``fields``,
                              ``label``, ``seconds``, ``request_id``); answers once the store committed it
``POST /api/undo``            void the annotator's latest decision (JSON: ``annotator``, ``request_id``)

Security:

- every request needs the token given to :func:`make_app`: ``?token=`` (a link, a script) or the
  HttpOnly, ``SameSite=Strict`` cookie that ``/?token=`` sets; none: 401, a wrong one: 403; compared with
  :func:`hmac.compare_digest`;
- the ``Host`` header must name this machine's loopback address (``127.0.0.1``, ``localhost``, ``[::1]``)
  unless the server was told which other names to answer to, so a DNS-rebinding page cannot reach it;
- a request that changes something (POST) must carry the CSRF token of ``/api/session`` in an
  ``X-CSRF-Token`` header, and an ``Origin`` (or, without one, ``Referer``) of this very host;
- responses carry ``Content-Security-Policy: default-src 'self'`` (no inline script or style, no frames),
  ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` and ``Cache-Control: no-store``;
- request bodies are bounded (:data:`MAX_BODY`), as are names, ids and edited texts.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import json
import math
import os
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Collection
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from cfaug.config import ConfigError
from cfaug.nlp.tokens import same_words
from cfaug.nlp.word_diff import side_by_side, word_diff
from cfaug.review.items import Item, ItemSet, load_items
from cfaug.run.decisions import DECISIONS, Decision, ReviewStore

#: the largest request body accepted (an edited text is the largest thing a client sends)
MAX_BODY = 256 * 1024
#: the longest annotator name, request id and edited field
MAX_NAME = 64
MAX_REQUEST_ID = 100
MAX_FIELD = 100_000
#: host names that are this machine
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
#: the files the page loads: URL name -> (package file, content type)
STATIC = {
    "review.js": ("review.js", "text/javascript"),
    "review.css": ("review.css", "text/css"),
}
#: the keys of the page (shown on it; review.js binds them)
KEYS = [
    {"key": "a", "action": "accepted", "label": "accept"},
    {"key": "x", "action": "rejected", "label": "reject", "hint": "a bad rewrite for another reason"},
    {"key": "e", "action": "edit", "label": "edit", "hint": "the rewrite, inline"},
    {"key": "n", "action": "not_flipped", "label": "label not flipped",
     "hint": "the rewrite keeps the original's label"},
    {"key": "l", "action": "other_label", "label": "flipped to another label", "hint": "then 1-9 picks the label"},
    {"key": "Space", "action": "skipped", "label": "skip"},
    {"key": "u", "action": "undo", "label": "undo", "hint": "also Backspace: your latest decision"},
    {"key": "\u2190 \u2192", "action": "move", "label": "previous / next item"},
    {"key": "g", "action": "jump", "label": "go to an item", "hint": "by its id or its position in the queue"},
]

_NAME_BAD = re.compile(r"[\x00-\x1f\x7f]")
_REQUEST_ID = re.compile(rf"^[A-Za-z0-9_.:-]{{1,{MAX_REQUEST_ID}}}$")

APP_KEY = web.AppKey("cfaug_review", object)


class _Bad(Exception):
    """A request the client should not have sent: answered with ``status`` and the message as JSON."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _cookie_name(token: str) -> str:
    # cookies are shared by every port of a host: a name of this token's own keeps two servers apart
    return "cfaug_review_" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:12]


def _same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _host_name(host: str) -> str:
    """``127.0.0.1:8000`` -> ``127.0.0.1``; ``[::1]:8000`` -> ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class ReviewApp:
    """What the handlers share: the items, their orders, the store and each annotator's decisions."""

    def __init__(self, run_dir: str | os.PathLike[str], *, token: str, annotator: str | None,
                 allowed_hosts: Collection[str] | None, order_by: str = "judges") -> None:
        if not token:
            raise ValueError("the review app needs a non-empty access token")
        self.run_dir = Path(run_dir)
        self.token = token
        self.cookie = _cookie_name(token)
        self.csrf = secrets.token_urlsafe(32)
        self.annotator = check_annotator(annotator) if annotator is not None else None
        hosts = {h.lower() for h in (allowed_hosts or ())}
        self.any_host = "*" in hosts
        self.hosts = frozenset(LOOPBACK | {_host_name(h) for h in hosts if h != "*"})
        self.items: ItemSet = load_items(self.run_dir)
        self.items.order_by = order_by
        self.by_id: dict[str, Item] = {it.id: it for it in self.items.items}
        self.store = ReviewStore(self.run_dir)
        task = self.items.task
        self.labels: list[str] = list(task.label_space.labels)
        #: label -> how the rows spell it (``Negative``): what the page shows; decisions name the label itself
        surfaces = self.items.label_surfaces()
        self.label_names: dict[str, str] = {lab: surfaces.get(lab, lab) for lab in self.labels}
        self.edit_roles: list[str] = list(task.edit_roles)
        self.methods: list[str] = sorted({it.method for it in self.items.items if it.method})
        #: filters (method, min, max) -> (items in review order, item id -> position); a few kept
        self._orders: OrderedDict[tuple, tuple[list[Item], dict[str, int]]] = OrderedDict()
        #: annotator -> item id -> their live decision (read from the store once, then kept up to date)
        self._decided: dict[str, dict[str, Decision]] = {}
        #: held while the store is read into ``_decided``, so an older read never replaces a newer state
        self._reading = asyncio.Lock()
        self.order(None, None, None)  # the queue the page opens on, ready before the first request

    # -- state ---------------------------------------------------------------------------------------------
    def order(self, method: str | None, lo: float | None, hi: float | None) -> tuple[list[Item], dict[str, int]]:
        key = (method, lo, hi)
        if key in self._orders:
            self._orders.move_to_end(key)
            return self._orders[key]
        kwargs: dict[str, Any] = {}
        if method:
            kwargs["method"] = method
        if lo is not None or hi is not None:
            kwargs["confidence"] = (lo, hi)
        items = list(self.items.ordered(**kwargs))
        entry = (items, {it.id: i for i, it in enumerate(items)})
        self._orders[key] = entry
        while len(self._orders) > 8:
            self._orders.popitem(last=False)
        return entry

    async def decided(self, annotator: str, *, refresh: bool = False) -> dict[str, Decision]:
        """``annotator``'s live decisions by item. Changes made here are applied after any read of the
        store in progress (the lock), so that a read older than a change never replaces it."""
        async with self._reading:
            if refresh or annotator not in self._decided:
                current = await self._in_thread(self.store.current, annotator)
                self._decided[annotator] = {item: d for (item, who), d in current.items() if who == annotator}
            return self._decided[annotator]

    async def _in_thread(self, fn, *args, **kwargs):
        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args, **kwargs))

    async def record(self, annotator: str, item: str, decision: str, **kw: Any) -> Decision:
        rec = await self._in_thread(self.store.record, item, annotator, decision, **kw)
        mine = await self.decided(annotator)
        # a retried request returns its first decision: what is live is the latest one not undone
        if not rec.undone and (item not in mine or mine[item].seq <= rec.seq):
            mine[item] = rec
        return rec

    async def undo(self, annotator: str, request_id: str | None) -> Decision | None:
        undone = await self._in_thread(self.store.undo, annotator, request_id=request_id)
        await self.decided(annotator, refresh=True)  # an earlier decision on the same item may be live again
        return undone

    def close(self) -> None:
        self.store.close()

    # -- answers -------------------------------------------------------------------------------------------
    def item_json(self, item: Item, decision: Decision | None) -> dict[str, Any]:
        shown = dict(item.rewrite)
        if decision is not None and decision.decision == "edited" and decision.fields:
            shown.update({k: v for k, v in decision.fields.items() if k in shown})
        fields = []
        roles = list(dict.fromkeys([*item.original, *shown]))
        for role in roles:
            orig, new = item.original.get(role, ""), shown.get(role, "")
            left, right = side_by_side(word_diff(orig, new))
            fields.append({
                "role": role, "original": orig, "rewrite": new, "machine": item.rewrite.get(role, ""),
                "editable": role in self.edit_roles,
                "left": [[s.op, s.text] for s in left], "right": [[s.op, s.text] for s in right]})
        meta = item.row.get("meta") if isinstance(item.row.get("meta"), dict) else {}
        own = meta.get("own_judge") if isinstance(meta.get("own_judge"), dict) else {}
        return {
            "id": item.id, "source_id": _text(item.source_id), "method": _text(item.method),
            "source_label": _text(item.source_label), "target_label": _text(item.target_label),
            "own_confidence": _number(item.own_confidence),
            "own_judge": None if item.own_confidence is None and not own else {
                "name": _text(own.get("name")), "threshold": _number(item.own_threshold),
                "flipped": item.own_flipped},
            "independent": _plain(item.independent) if item.independent else None,
            "disagree": item.judges_disagree, "passed": item.passed,
            "fields": fields,
            "decision": None if decision is None else decision_json(decision),
        }


def edit_problem(item: Item, fields: dict[str, str]) -> str | None:
    """Why ``fields`` (role -> edited text) cannot be saved as an edit of ``item``'s rewrite, or None: a text
    that is empty or whitespace only, or texts that change no word of the machine's rewrite (only case,
    spacing or punctuation, compared by :func:`cfaug.nlp.tokens.same_words`). The page says the same."""
    for role, text in fields.items():
        if not text.strip():
            return (f"an edited text cannot be empty ({role}): write the rewrite as it should be, or reject it "
                    "(x)")
    if all(same_words(text, item.rewrite.get(role, "")) for role, text in fields.items()):
        return ("the edit changes no word of the rewrite (only case, spacing or punctuation, if anything): accept "
                "the rewrite as it is (a), or change a word")
    return None


def decision_json(d: Decision) -> dict[str, Any]:
    return d.to_dict()


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _plain(value: Any) -> Any:
    """``value`` as strict JSON can hold it (NaN and infinities become null: the page uses JSON.parse)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _dumps(obj: Any) -> str:
    """JSON with ``<``, ``>`` and ``&`` written as escapes: even a client that took it for HTML would
    find no tag in it."""
    return (json.dumps(obj, ensure_ascii=False, allow_nan=False)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _json(obj: Any, status: int = 200) -> web.Response:
    return web.json_response(obj, status=status, dumps=_dumps)


def check_annotator(name: Any) -> str:
    """``name`` stripped, if it can name an annotator; else ConfigError (``--annotator``'s check)."""
    try:
        return _check_name(name)
    except _Bad as exc:
        raise ConfigError(f"annotator name {str(name)[:80]!r}: {exc}") from None


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise _Bad("an annotator name is needed")
    name = name.strip()
    if len(name) > MAX_NAME or _NAME_BAD.search(name):
        raise _Bad(f"an annotator name is at most {MAX_NAME} characters, without control characters")
    return name


def _annotator(state: ReviewApp, given: Any) -> str:
    if state.annotator is not None:
        if given not in (None, "") and (not isinstance(given, str) or given.strip() != state.annotator):
            raise _Bad(f"this server records decisions as {state.annotator!r} (its --annotator)", 403)
        return state.annotator
    return _check_name(given)


def _float_param(query, name: str) -> float | None:
    raw = query.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise _Bad(f"{name} must be a number, got {raw[:40]!r}") from None
    if not math.isfinite(value):
        raise _Bad(f"{name} must be a finite number")
    return value


# -- middleware --------------------------------------------------------------------------------------------


@web.middleware
async def _security(request: web.Request, handler):
    started = time.perf_counter()
    try:
        response = await _guarded(request, handler)
    except web.HTTPException as exc:  # no route (404), wrong method (405), body too large (413)...
        message = exc.text or exc.reason
        response = _refuse(exc.status, message.strip(), request)
        for k, v in exc.headers.items():
            if k.lower() not in ("content-type", "content-length"):
                response.headers[k] = v
    except _Bad as exc:
        response = _json({"error": str(exc)}, status=exc.status)
    for k, v in SECURITY_HEADERS.items():
        response.headers.setdefault(k, v)
    # the server's own time on the request (bench/review.py reads it; so do the browser's dev tools)
    response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.2f}"
    return response


def _refuse(status: int, message: str, request: web.Request) -> web.Response:
    if request.path.startswith("/api/"):
        return _json({"error": message}, status=status)
    return web.Response(status=status, text=message + "\n", content_type="text/plain")


async def _guarded(request: web.Request, handler):
    state: ReviewApp = request.app[APP_KEY]
    host = _host_name(request.headers.get("Host", ""))
    if not state.any_host and host not in state.hosts:
        return _refuse(403, f"this server does not answer to the host name {host[:100]!r}", request)
    given = request.query.get("token")
    if given is None:
        given = request.cookies.get(state.cookie)
    if given is None:
        return _refuse(401, "the access token is missing: open the URL that 'cfaug review serve' printed "
                            "(http://HOST:PORT/?token=...)", request)
    if not _same(given, state.token):
        return _refuse(403, "wrong access token: open the URL that 'cfaug review serve' printed", request)
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        origin = request.headers.get("Origin") or request.headers.get("Referer")
        if not origin:
            return _refuse(403, "a request that changes something needs an Origin header", request)
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or parts.netloc.lower() != request.headers.get("Host", "").lower():
            return _refuse(403, "cross-origin request refused", request)
        if not _same(request.headers.get("X-CSRF-Token"), state.csrf):
            return _refuse(403, "the CSRF token is missing or wrong: reload the page", request)
    return await handler(request)


# -- handlers ----------------------------------------------------------------------------------------------


async def index(request: web.Request) -> web.StreamResponse:
    state: ReviewApp = request.app[APP_KEY]
    if "token" in request.query:
        # keep the token out of the address bar and the history: a cookie carries it from here on
        response = web.Response(status=303, headers={"Location": "/"})
        response.set_cookie(state.cookie, state.token, httponly=True, samesite="Strict", path="/")
        return response
    return web.Response(body=_asset("index.html"), content_type="text/html", charset="utf-8")


async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in STATIC:
        raise web.HTTPNotFound(text="no such file\n")
    file, ctype = STATIC[name]
    return web.Response(body=_asset(file), content_type=ctype, charset="utf-8")


@functools.cache
def _asset(name: str) -> bytes:
    return resources.files("cfaug.review").joinpath("static", name).read_bytes()


async def session(request: web.Request) -> web.Response:
    state: ReviewApp = request.app[APP_KEY]
    cfg = state.items.task
    body: dict[str, Any] = {
        "run": state.run_dir.name, "csrf": state.csrf, "annotator": state.annotator,
        "task": {"name": getattr(cfg, "name", None), "labels": state.labels, "label_names": state.label_names,
                 "edit_roles": state.edit_roles},
        "methods": state.methods, "items": len(state.items.items), "decisions": list(DECISIONS),
        "keys": KEYS, "max_field": MAX_FIELD,
    }
    name = request.query.get("annotator")
    if name or state.annotator:
        who = _annotator(state, name)
        body["decided"] = len(await state.decided(who, refresh=True))
    return _json(body)


async def item(request: web.Request) -> web.Response:
    state: ReviewApp = request.app[APP_KEY]
    q = request.query
    who = _annotator(state, q.get("annotator"))
    method = q.get("method") or None
    if method is not None and method not in state.methods:
        raise _Bad(f"no item of method {method[:100]!r} in this run")
    lo, hi = _float_param(q, "min"), _float_param(q, "max")
    undecided = q.get("undecided", "0") in ("1", "true", "yes")
    order, ids = state.order(method, lo, hi)
    mine = await state.decided(who)
    position, chosen = -1, None
    if "id" in q:
        chosen = state.by_id.get(q["id"])
        if chosen is None:
            raise _Bad("no such item", 404)
        position = ids.get(chosen.id, -1)
    else:
        try:
            pos = int(q.get("pos", "0"))
        except ValueError:
            raise _Bad("pos must be a whole number") from None
        backwards = q.get("dir", "next") == "prev"
        pos = max(0, min(pos, len(order)))
        steps = range(pos - 1, -1, -1) if backwards else range(pos, len(order))
        for i in steps:
            if not undecided or order[i].id not in mine:
                position, chosen = i, order[i]
                break
        wrap = q.get("wrap", "1") not in ("0", "false", "no")
        if chosen is None and undecided and not backwards and wrap:
            for i in range(pos):  # wrap round: an item left undecided earlier in the queue
                if order[i].id not in mine:
                    position, chosen = i, order[i]
                    break
    decided_here = (sum(1 for i in mine if i in ids) if len(mine) < len(ids)
                    else sum(1 for i in ids if i in mine))
    return _json({
        "item": None if chosen is None else state.item_json(chosen, mine.get(chosen.id)),
        "position": position, "count": len(order), "decided": decided_here,
        "decided_all": len(mine), "items": len(state.items.items)})


async def _json_body(request: web.Request) -> dict[str, Any]:
    if request.content_type != "application/json":
        raise _Bad("send JSON (Content-Type: application/json)", 415)
    try:
        body = await request.json()
    except ValueError:
        raise _Bad("the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise _Bad("the body must be a JSON object")
    return body


def _request_id(body: dict[str, Any]) -> str | None:
    rid = body.get("request_id")
    if rid is None:
        return None
    if not isinstance(rid, str) or not _REQUEST_ID.match(rid):
        raise _Bad(f"request_id must be 1 to {MAX_REQUEST_ID} letters, digits or -_.:")
    return rid


async def decide(request: web.Request) -> web.Response:
    state: ReviewApp = request.app[APP_KEY]
    body = await _json_body(request)
    who = _annotator(state, body.get("annotator"))
    item_id = body.get("item")
    if not isinstance(item_id, str) or item_id not in state.by_id:
        raise _Bad("no such item", 404)
    decision = body.get("decision")
    if decision not in DECISIONS:
        raise _Bad(f"decision must be one of {', '.join(DECISIONS)}")
    it = state.by_id[item_id]
    fields = label = None
    if decision == "edited":
        fields = body.get("fields")
        if not isinstance(fields, dict) or not fields:
            raise _Bad("an edit needs fields: {role: new text}")
        for role, text in fields.items():
            if role not in it.rewrite or role not in state.edit_roles:
                raise _Bad(f"this item has no editable text field {str(role)[:40]!r}")
            if not isinstance(text, str) or len(text) > MAX_FIELD:
                raise _Bad(f"an edited text is a string of at most {MAX_FIELD} characters")
        problem = edit_problem(it, fields)
        if problem:
            raise _Bad(problem)
    if decision == "other_label":
        label = body.get("label")
        if label not in state.labels:
            raise _Bad(f"label must be one of {', '.join(state.labels)}")
        if label == it.source_label:  # the original's own label: the rewrite did not flip it
            decision, label = "not_flipped", None
    seconds = body.get("seconds")
    seconds = float(seconds) if _number(seconds) is not None and 0 <= seconds <= 7 * 86400 else None
    try:
        rec = await state.record(who, item_id, decision, fields=fields, label=label, seconds=seconds,
                                 request_id=_request_id(body))
    except ValueError as exc:
        raise _Bad(str(exc)) from None
    mine = await state.decided(who)
    return _json({"decision": decision_json(rec), "decided_all": len(mine)})


async def undo(request: web.Request) -> web.Response:
    state: ReviewApp = request.app[APP_KEY]
    body = await _json_body(request)
    who = _annotator(state, body.get("annotator"))
    undone = await state.undo(who, _request_id(body))
    mine = await state.decided(who)
    return _json({"undone": None if undone is None else decision_json(undone),
                              "decided_all": len(mine)})


def make_app(run_dir: str | os.PathLike[str], *, token: str, annotator: str | None = None,
             allowed_hosts: Collection[str] | None = None, order_by: str = "judges") -> web.Application:
    """The review app on ``run_dir`` (its items are read now; the review store is opened or created).

    ``token``: the access token every request must carry; ``annotator``: record every decision under this
    name (the page then asks none); ``allowed_hosts``: host names the server answers to besides the
    loopback ones (``"*"``: any, for a server bound to all interfaces); ``order_by``: the review order
    (:attr:`~cfaug.review.items.ItemSet.order_by`)."""
    state = ReviewApp(run_dir, token=token, annotator=annotator, allowed_hosts=allowed_hosts, order_by=order_by)
    app = web.Application(middlewares=[_security], client_max_size=MAX_BODY)
    app[APP_KEY] = state
    app.router.add_get("/", index)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/api/session", session)
    app.router.add_get("/api/item", item)
    app.router.add_post("/api/decisions", decide)
    app.router.add_post("/api/undo", undo)

    async def close(_app: web.Application) -> None:
        state.close()

    app.on_cleanup.append(close)
    return app
