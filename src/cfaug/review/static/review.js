// cfaug review: the page's script. It builds every element with textContent (never innerHTML), so the texts
// under review stay text whatever they hold; it talks to the JSON API of cfaug/review/app.py.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const NAME_KEY = "cfaug-review-annotator";
  const FILTER_KEY = "cfaug-review-filters";
  const BR = /(<br\s*\/?>)/i;

  const state = {
    session: null,
    annotator: null,
    data: null,        // the last /api/item answer
    position: 0,       // where the shown item sits in the filtered queue
    shownAt: 0,        // when it was shown (for the time spent on it)
    mode: "view",      // view | edit | label | jump | name
    unreachable: false,
    saving: false,     // a decision is being sent
    filters: { method: "", min: "", max: "", undecided: true },
  };

  // -- DOM helpers --------------------------------------------------------------------------------------
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  // A piece of text, with the <br> of IMDB-style reviews shown as line breaks.
  function appendText(parent, text) {
    for (const part of String(text).split(BR)) {
      if (!part) continue;
      if (BR.test(part)) parent.appendChild(document.createElement("br"));
      else parent.appendChild(document.createTextNode(part));
    }
  }

  function setStatus(text, kind) {
    const node = $("status");
    node.textContent = text || "";
    node.className = kind || "";
  }

  // " (N more waiting)": the keys and clicks that wait behind the one acted on now
  function waitingNote() {
    return queue.length ? " (" + queue.length + " more waiting)" : "";
  }

  // The status of a decision on its way, or of a server that does not answer, with the count of what waits.
  function progressStatus() {
    if (state.unreachable) setStatus("server unreachable, retrying\u2026" + waitingNote(), "warn");
    else if (state.saving) setStatus("saving\u2026" + waitingNote());
  }

  // -- the queue of work: keys, buttons and filters act one after another, in the order they came -------
  // A key pressed while a decision is saved or the next item loads waits here; none is dropped.
  const queue = [];
  let draining = false;

  function enqueue(job) {
    queue.push(job);
    if (!draining) drain();
    else progressStatus();
  }

  function waiting() {
    return draining || queue.length > 0;
  }

  async function drain() {
    draining = true;
    try {
      while (queue.length) {
        const job = queue.shift();
        try {
          await job();
        } catch (err) {
          fail(err);
        }
      }
    } finally {
      draining = false;
    }
  }

  function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  // -- API ----------------------------------------------------------------------------------------------
  function newId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
  }

  // One request. While the server cannot be reached (stopped, restarting) it is tried again, with growing
  // pauses, until it answers: a change carries its request id, so the server records it once.
  async function call(method, path, params, body) {
    let url = path;
    if (params) url += "?" + new URLSearchParams(params).toString();
    const init = { method: method, headers: {}, credentials: "same-origin", cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.headers["X-CSRF-Token"] = state.session ? state.session.csrf : "";
      init.body = JSON.stringify(body);
    }
    let response;
    for (let attempt = 0; ; attempt++) {
      try {
        response = await fetch(url, init);
        break;
      } catch (err) {  // no answer at all (a TypeError: the connection was refused or lost)
        state.unreachable = true;
        progressStatus();
        await sleep(Math.min(5000, 250 * Math.pow(2, Math.min(attempt, 5))));
      }
    }
    if (state.unreachable) {
      state.unreachable = false;
      setStatus("server reachable again", "ok");
    }
    let data;
    try {
      data = await response.json();
    } catch (e) {
      data = { error: response.status + " " + response.statusText };
    }
    if (!response.ok) {
      const err = new Error(data.error || response.statusText);
      err.status = response.status;
      throw err;
    }
    return data;
  }

  // A change (decision, undo), with a request id of its own (a retry is recorded once); a new CSRF token
  // is fetched once if the server was restarted meanwhile.
  async function change(path, body) {
    body.request_id = newId();
    try {
      return await call("POST", path, null, body);
    } catch (err) {
      if (err.status === 403 && /CSRF/.test(err.message)) {
        state.session = await call("GET", "/api/session");
        return await call("POST", path, null, body);
      }
      throw err;
    }
  }

  // The query of /api/item: the annotator, the filters and ``extra``; ``every``: the undecided filter off
  // (a jump to a position goes to the item there, decided or not).
  function params(extra, every) {
    const p = { annotator: state.annotator };
    const f = state.filters;
    if (f.method) p.method = f.method;
    if (f.min !== "") p.min = f.min;
    if (f.max !== "") p.max = f.max;
    if (f.undecided && !every) p.undecided = "1";
    return Object.assign(p, extra);
  }

  function fail(err) {
    if (err.status === 401 || (err.status === 403 && /token/.test(err.message) && !/CSRF/.test(err.message))) {
      // nothing more can be sent without the new address: say so, and how many keys that leaves unsent
      const unsent = queue.length;
      queue.length = 0;
      setStatus("the server no longer takes this page's access token: it was restarted with a new one (or " +
        "stopped and another took its port); open the URL it printed" +
        (unsent ? ". " + unsent + " key" + (unsent === 1 ? "" : "s") + " pressed since were not sent" : "") +
        " (" + err.message + ")", "error");
    } else {
      setStatus("error: " + err.message, "error");
    }
  }

  // -- start --------------------------------------------------------------------------------------------
  async function start() {
    bindKeys();
    bindControls();
    try {
      state.session = await call("GET", "/api/session");
    } catch (err) {
      fail(err);
      return;
    }
    const s = state.session;
    $("run").textContent = s.run + " \u00b7 " + (s.task.name || "") + " \u00b7 " + s.items + " items";
    renderKeys(s.keys);
    const methods = $("f-method");
    for (const m of s.methods) {
      const opt = el("option", null, m);
      opt.value = m;
      methods.appendChild(opt);
    }
    try {
      const saved = JSON.parse(sessionStorage.getItem(FILTER_KEY) || "null");
      if (saved) Object.assign(state.filters, saved);
    } catch (e) { /* a damaged entry: keep the defaults */ }
    if (state.filters.method && s.methods.indexOf(state.filters.method) < 0) state.filters.method = "";
    showFilters();
    const fixed = s.annotator;
    const name = fixed || sessionStorage.getItem(NAME_KEY);
    if (name) begin(name);
    else askName();
  }

  function askName() {
    state.mode = "name";
    $("name-form").hidden = false;
    for (const id of ["toolbar", "card", "actions", "empty"]) $(id).hidden = true;
    const input = $("name-input");
    input.value = state.annotator || "";
    input.focus();
  }

  function begin(name) {
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    state.annotator = name;
    if (!state.session.annotator) sessionStorage.setItem(NAME_KEY, name);
    $("name-form").hidden = true;
    $("who").textContent = "annotator: " + name;
    $("rename").hidden = !!state.session.annotator;
    $("toolbar").hidden = false;
    $("keys").hidden = false;
    state.mode = "view";
    enqueue(() => load({ pos: 0, dir: "next" }));  // a reload resumes at the first undecided item
  }

  function showFilters() {
    const f = state.filters;
    $("f-method").value = f.method;
    $("f-min").value = f.min;
    $("f-max").value = f.max;
    $("f-undecided").checked = !!f.undecided;
  }

  // A filter changed. A number box keeps the focus (its arrow keys step it); the others give the keys back.
  function readFilters(ev) {
    state.filters = {
      method: $("f-method").value,
      min: $("f-min").value,
      max: $("f-max").value,
      undecided: $("f-undecided").checked,
    };
    sessionStorage.setItem(FILTER_KEY, JSON.stringify(state.filters));
    // the keys work again at once (they are not taken while a filter has the focus)
    const numberBox = ev && ev.target && ev.target.type === "number";
    if (!numberBox && document.activeElement && document.activeElement !== document.body) {
      document.activeElement.blur();
    }
    enqueue(() => load({ pos: 0, dir: "next" }));
  }

  function bindControls() {
    $("name-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const name = $("name-input").value.trim();
      if (name) begin(name);
    });
    $("rename").addEventListener("click", askName);
    $("filters").addEventListener("change", readFilters);
    $("filters").addEventListener("submit", (ev) => ev.preventDefault());
    // Enter in a number box: the value is taken (a change) and the keys are the page's again
    $("filters").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && ev.target.type === "number") ev.target.blur();
    });
    // a click (or tap) outside the open jump field closes it, as Esc does: the next key is the page's
    document.addEventListener("pointerdown", (ev) => {
      if (state.mode === "jump" && !$("jump-form").contains(ev.target)) closeJump();
    }, true);
    // the bar at the bottom (status, buttons) covers the end of the page: room is kept for it
    const dock = $("dock");
    const room = () => {
      const h = dock.offsetHeight + "px";
      document.body.style.paddingBottom = h;
      document.documentElement.style.scrollPaddingBottom = h;  // a focused field is not scrolled under it
    };
    if (window.ResizeObserver) new ResizeObserver(room).observe(dock);
    room();
    $("edit-save").addEventListener("click", () => {
      const at = performance.now();
      enqueue(() => saveEdit(at));
    });
    $("edit-cancel").addEventListener("click", () => enqueue(() => setMode("view")));
    $("jump-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const value = takeJump();
      enqueue(() => jumpTo(value));
    });
  }

  // -- loading and showing an item ----------------------------------------------------------------------
  async function load(where, every) {
    show(await call("GET", "/api/item", params(where, every)));
  }

  // Left and right arrows: the previous / next item of the queue; at either end the item shown stays, and
  // the status says why nothing moved (with "undecided only", how many undecided items are left before it).
  async function move(dir) {
    setStatus("");
    const where = dir === "prev" ? { pos: state.position, dir: "prev" }
      : { pos: state.position + 1, dir: "next", wrap: "0" };
    const data = await call("GET", "/api/item", params(where));
    if (!data.item && state.data && state.data.item) {
      setStatus(dir === "prev" ? "no earlier item in this queue" : endOfQueue(data), "warn");
      return;
    }
    show(data);
  }

  // What \u2192 says at the end of the queue.
  function endOfQueue(data) {
    if (!state.filters.undecided) return "no later item in this queue";
    const here = state.data.item;
    const hereUndecided = !!here && !here.decision && state.data.position >= 0;
    const left = data.count - data.decided - (hereUndecided ? 1 : 0);
    if (left <= 0) {
      return "no later undecided item in this queue: " +
        (hereUndecided ? "this is the last one undecided" : "every item of it has your decision");
    }
    return "no later undecided item in this queue; " + left + " undecided before this one: \u2190 goes back to " +
      (left === 1 ? "it" : "them");
  }

  // g: a small field for an item's id or its position in the queue (1 = the first)
  function openJump() {
    if (!state.data) return;
    setStatus("");  // what it said was about the item before
    state.mode = "jump";
    const input = $("jump-input");
    input.value = "";
    input.placeholder = state.data.count ? "1\u2013" + state.data.count + " or an item id" : "an item id";
    $("jump-form").hidden = false;
    input.focus();
  }

  function closeJump() {
    $("jump-form").hidden = true;
    if (state.mode === "jump") state.mode = "view";
    if (document.activeElement === $("jump-input")) $("jump-input").blur();
  }

  // Enter in the jump field: the field's value, and the field closed.
  function takeJump() {
    const value = $("jump-input").value.trim();
    closeJump();
    return value;
  }

  async function jumpTo(value) {
    if (!value) return;
    setStatus("");
    if (/^[0-9]+$/.test(value)) {
      const n = parseInt(value, 10);
      const count = state.data ? state.data.count : 0;
      if (n < 1 || n > count) {
        setStatus("no position " + n + " in this queue (it has " + count + " items): give 1\u2013" + count +
          " or an item id", "warn");
        return;
      }
      await load({ pos: n - 1, dir: "next" }, true);
      return;
    }
    try {
      await load({ id: value });
    } catch (err) {
      if (err.status === 404) setStatus("no item \u201c" + value + "\u201d in this run", "warn");
      else throw err;
    }
  }

  function show(data) {
    state.data = data;
    setMode("view");
    const bar = $("bar");
    bar.max = Math.max(1, data.count);
    bar.value = data.decided;
    $("progress-text").textContent = data.decided + " of " + data.count + " decided" +
      (data.count !== data.items ? " (filtered; " + data.decided_all + " of " + data.items + " in all)" : "");
    const item = data.item;
    if (!item) {
      $("card").hidden = true;
      $("actions").hidden = true;
      $("empty").hidden = false;
      const left = data.count - data.decided;
      $("empty").textContent = data.count === 0
        ? "No item matches these filters."
        : left <= 0
          ? "Nothing left to review here: every item of this queue has your decision. " +
            "Untick \u201cundecided only\u201d to look through them again."
          : "End of the queue; " + left + " of its " + data.count + " items are still undecided: \u2190 goes " +
            "back, \u201cundecided only\u201d goes to them.";
      state.position = data.count;
      delete $("card").dataset.item;
      return;
    }
    state.position = data.position >= 0 ? data.position : state.position;
    window.scrollTo(0, 0);  // a new item is read from its top, wherever the last one was left
    $("empty").hidden = true;
    $("card").hidden = false;
    $("card").dataset.item = item.id;
    $("actions").hidden = false;
    renderFacts(item, data);
    renderPairs(item);
    renderDecision(item.decision);
    renderActions();
    state.shownAt = performance.now();
  }

  function fact(parent, name, value, className) {
    const box = el("span", "fact" + (className ? " " + className : ""));
    box.appendChild(el("span", "fact-name", name));
    box.appendChild(el("span", "fact-value", value));
    parent.appendChild(box);
    return box;
  }

  // A label as the run's rows spell it ("Negative"); the page sends the label itself ("negative").
  function labelName(label) {
    const names = state.session && state.session.task.label_names;
    return names && Object.prototype.hasOwnProperty.call(names, label) ? names[label] : label;
  }

  function pct(x) {
    return x === null || x === undefined ? "\u2013" : (100 * x).toFixed(1) + "%";
  }

  function renderFacts(item, data) {
    const box = $("facts");
    clear(box);
    const where = data.position >= 0
      ? "item " + (data.position + 1) + " of " + data.count
      : "item (outside these filters)";
    fact(box, "", where, "where");
    fact(box, "labels", (item.source_label ? labelName(item.source_label) : "?") + " \u2192 " +
      (item.target_label ? labelName(item.target_label) : "?"), "labels");
    fact(box, "method", item.method || "?");
    const own = item.own_judge;
    if (own) {
      let ownText = pct(item.own_confidence) + " (" + (own.name || "judge");
      if (own.threshold !== null) ownText += ", threshold " + own.threshold;
      if (own.flipped !== null) ownText += own.flipped ? ", flipped" : ", not flipped";
      fact(box, "own judge P(target)", ownText + ")");
    }
    const ind = item.independent;
    if (ind) {
      const parts = [];
      const name = ind.judge || ind.name;
      if (name) parts.push(String(name));
      const pred = ind.predicted || ind.label || ind.prediction;
      if (pred !== undefined && pred !== null) parts.push("says " + pred);
      const p = ind.target_prob !== undefined ? ind.target_prob : ind.p_target;
      if (typeof p === "number") parts.push("P(target) " + pct(p));
      if (typeof ind.flipped === "boolean") parts.push(ind.flipped ? "flipped" : "not flipped");
      fact(box, "independent judge", parts.join(", ") || JSON.stringify(ind), "independent");
    }
    if (item.disagree) fact(box, "", "judges disagree", "disagree");
    if (!item.passed) fact(box, "", "failed the method's filters", "failed");
    fact(box, "source", item.source_id || "?", "muted");
  }

  function renderSegments(parent, segments) {
    for (const [op, text] of segments) {
      if (op === "delete") {
        const d = el("del");
        appendText(d, text);
        parent.appendChild(d);
      } else if (op === "insert") {
        const i = el("ins");
        appendText(i, text);
        parent.appendChild(i);
      } else {
        appendText(parent, text);
      }
    }
  }

  function renderPairs(item) {
    const box = $("pairs");
    clear(box);
    const several = item.fields.length > 1;
    for (const f of item.fields) {
      const row = el("div", "pair");
      const left = el("div", "side original");
      left.appendChild(el("h2", null, "Original" + (several ? " \u00b7 " + f.role : "") +
        (item.source_label ? " (" + labelName(item.source_label) + ")" : "")));
      const lt = el("div", "text");
      renderSegments(lt, f.left);
      left.appendChild(lt);
      const right = el("div", "side rewrite");
      const edited = item.decision && item.decision.decision === "edited" && f.rewrite !== f.machine;
      right.appendChild(el("h2", null, "Rewrite" + (several ? " \u00b7 " + f.role : "") +
        (item.target_label ? " (" + labelName(item.target_label) + ")" : "") + (edited ? " \u2014 your edit" : "")));
      const rt = el("div", "text");
      renderSegments(rt, f.right);
      right.appendChild(rt);
      row.appendChild(left);
      row.appendChild(right);
      box.appendChild(row);
    }
  }

  const DECISION_TEXT = {
    accepted: "accepted", rejected: "rejected", edited: "edited", not_flipped: "label not flipped",
    other_label: "flipped to another label", skipped: "skipped",
  };

  function renderDecision(d) {
    const box = $("decision");
    clear(box);
    if (!d) return;
    let text = "Your decision: " + (DECISION_TEXT[d.decision] || d.decision);
    if (d.decision === "other_label" && d.label) text += " (" + labelName(d.label) + ")";
    box.appendChild(el("span", "badge " + d.decision, text));
  }

  function renderActions() {
    const nav = $("actions");
    clear(nav);
    for (const k of state.session.keys) {
      if (k.action === "move") continue;
      const b = el("button", "action " + k.action);
      b.type = "button";
      b.dataset.action = k.action;
      b.appendChild(el("kbd", null, k.key));
      b.appendChild(document.createTextNode(" " + k.label));
      b.addEventListener("click", () => {
        const at = performance.now();
        enqueue(() => act(k.action, at));
      });
      nav.appendChild(b);
    }
  }

  function renderKeys(keys) {
    const list = $("key-list");
    clear(list);
    for (const k of keys) {
      list.appendChild(el("dt", null, k.key));
      list.appendChild(el("dd", null, k.hint ? k.label + " (" + k.hint + ")" : k.label));
    }
    list.appendChild(el("dt", null, "Ctrl+Enter"));
    list.appendChild(el("dd", null, "save an edit"));
    list.appendChild(el("dt", null, "Esc"));
    list.appendChild(el("dd", null, "cancel an edit, the label choice or the jump; leave a field (a filter): " +
      "the keys work again"));
    list.appendChild(el("dt", null, "any key"));
    list.appendChild(el("dd", null, "pressed while a decision is saved: waits its turn (keys act in order)"));
  }

  // -- actions ------------------------------------------------------------------------------------------
  function setMode(mode) {
    if (mode !== "edit" && $("editor").contains(document.activeElement)) document.activeElement.blur();
    state.mode = mode;
    $("editor").hidden = mode !== "edit";
    $("label-picker").hidden = mode !== "label";
    $("pairs").classList.toggle("editing", mode === "edit");
  }

  // An action of a key or a button (run from the queue); ``at``: when the key was pressed.
  async function act(action, at) {
    if (state.mode === "name") return;
    if (action === "undo") return undo();
    if (action === "move") return;
    if (action === "jump") return openJump();
    const item = state.data && state.data.item;
    if (!item) return;
    if (action === "edit") return startEdit(item);
    if (action === "other_label") return pickLabel(item);
    return decide(action, null, at);
  }

  // Record a decision on the item shown, then show the next one; the queue waits for both.
  async function decide(decision, extra, at) {
    const item = state.data && state.data.item;
    if (!item) return;
    state.saving = true;
    progressStatus();
    const pressed = at === undefined ? performance.now() : at;
    // a key pressed before its item was shown (it waited in the queue) measured no time on it
    const seconds = pressed >= state.shownAt ? Math.round(pressed - state.shownAt) / 1000 : null;
    const body = Object.assign({ annotator: state.annotator, item: item.id, decision: decision, seconds: seconds },
      extra || {});
    let res;
    try {
      res = await change("/api/decisions", body);
    } finally {
      state.saving = false;
    }
    let said = "saved: " + (DECISION_TEXT[decision] || decision);
    if (res.decision.label) said += " (" + labelName(res.decision.label) + ")";
    setStatus(said, "ok");
    await load({ pos: state.position + 1, dir: "next" });
  }

  async function undo() {
    const res = await change("/api/undo", { annotator: state.annotator });
    if (!res.undone) {
      setStatus("nothing to undo", "warn");
    } else {
      setStatus("undone: " + (DECISION_TEXT[res.undone.decision] || res.undone.decision), "ok");
      await load({ id: res.undone.item });
    }
  }

  // ``texts``: role -> the text to start from (an edit the server refused); default the rewrite shown.
  function startEdit(item, texts) {
    const box = $("editor-fields");
    clear(box);
    for (const f of item.fields) {
      if (!f.editable) continue;
      const label = el("label", null, "Rewrite" + (item.fields.length > 1 ? " \u00b7 " + f.role : ""));
      const area = el("textarea");
      area.dataset.role = f.role;
      area.value = texts && Object.prototype.hasOwnProperty.call(texts, f.role) ? texts[f.role] : f.rewrite;
      area.rows = Math.min(20, Math.max(3, Math.ceil(f.rewrite.length / 90) + 1));
      area.maxLength = state.session.max_field;
      label.appendChild(area);
      box.appendChild(label);
    }
    setMode("edit");
    const first = box.querySelector("textarea");
    if (first) {
      first.focus();
      first.setSelectionRange(first.value.length, first.value.length);
    }
  }

  // The words of a text run together, as the server compares an edit with the rewrite (cfaug.nlp.tokens.
  // same_words): case, spacing, punctuation and markup such as <br /> make no difference.
  const MARKUP = /<\/?[A-Za-z][\w:.-]*(?:\s[^<>]*?)?\/?\s*>/g;
  function wordForms(text) {
    const words = (t) => (t.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) || []).join("");
    return [words(String(text).replace(MARKUP, " ")), words(String(text))];
  }

  function sameWords(a, b) {
    const fa = wordForms(a);
    return wordForms(b).some((f) => fa.indexOf(f) >= 0);
  }

  // The edited texts (role -> text), or null with the editor left open and the status saying why they cannot
  // be saved: an empty text, or one that changes no word of the rewrite (the server refuses both too).
  function takeEdit() {
    const item = state.data && state.data.item;
    if (!item || state.mode !== "edit") return null;
    const fields = {};
    let changed = false;
    let empty = null;
    for (const area of $("editor-fields").querySelectorAll("textarea")) {
      const role = area.dataset.role;
      const machine = item.fields.find((f) => f.role === role).machine;
      fields[role] = area.value;
      if (!area.value.trim() && !empty) empty = area;
      if (!sameWords(area.value, machine)) changed = true;
    }
    const refused = empty ? "an edited text cannot be empty: write the rewrite as it should be, or Esc and " +
        "reject it (x)"
      : !changed ? "the edit changes no word of the rewrite (only case, spacing or punctuation, if anything): " +
        "change a word, or Esc and accept it as it is (a)" : null;
    if (refused) {
      setStatus(refused, "warn");
      const area = empty || $("editor-fields").querySelector("textarea");
      if (area) area.focus();
      return null;
    }
    setMode("view");
    return fields;
  }

  async function saveEdit(at) {
    const fields = takeEdit();
    if (!fields) return;
    const item = state.data.item;
    try {
      await decide("edited", { fields: fields }, at);
    } catch (err) {
      if (err.status !== 400 || !state.data || state.data.item !== item) throw err;
      // refused by the server (its check of the words is the final one): the text comes back to be changed
      startEdit(item, fields);
      setStatus("not saved: " + err.message, "warn");
    }
  }

  function labelChoices(item) {
    const target = (item.target_label || "").toLowerCase();
    return state.session.task.labels.filter((l) => l.toLowerCase() !== target);
  }

  function pickLabel(item) {
    const choices = labelChoices(item);
    const own = (item.source_label || "").toLowerCase();
    if (own && choices.length && choices.every((l) => l.toLowerCase() === own)) {
      // two labels: the only other one is the original's, and that is "label not flipped"
      setStatus("the only other label is the original\u2019s (" + labelName(item.source_label) + "): that is n, " +
        "label not flipped", "warn");
      return;
    }
    const box = $("label-buttons");
    clear(box);
    choices.forEach((lab, i) => {
      const b = el("button", "label-choice");
      b.type = "button";
      b.appendChild(el("kbd", null, String(i + 1)));
      b.appendChild(document.createTextNode(" " + labelName(lab)));
      b.addEventListener("click", () => {
        const at = performance.now();
        enqueue(() => chooseLabel(lab, at));
      });
      box.appendChild(b);
    });
    setMode("label");
  }

  async function chooseLabel(lab, at) {
    const item = state.data && state.data.item;
    if (state.mode !== "label" || !item) return;
    setMode("view");
    // the original's own label: the rewrite did not flip it
    if ((item.source_label || "").toLowerCase() === lab.toLowerCase()) return decide("not_flipped", null, at);
    return decide("other_label", { label: lab }, at);
  }

  // -- keys ---------------------------------------------------------------------------------------------
  const ACTIONS = Object.assign(Object.create(null), { a: "accepted", x: "rejected", e: "edit", n: "not_flipped",
    l: "other_label", " ": "skipped", u: "undo", Backspace: "undo", g: "jump" });
  const TYPING = ["INPUT", "SELECT", "TEXTAREA"];

  // A key typed while it waited in the queue, into the field that is open now (the editor, the jump field).
  function typeInto(field, key) {
    if (key.length !== 1 && key !== "Enter" && key !== "Backspace") return;
    const from = field.selectionStart === null ? field.value.length : field.selectionStart;
    const to = field.selectionEnd === null ? from : field.selectionEnd;
    if (key === "Backspace") {
      if (from === to && from > 0) field.setRangeText("", from - 1, to, "end");
      else field.setRangeText("", from, to, "end");
    } else {
      field.setRangeText(key === "Enter" ? "\n" : key, from, to, "end");
    }
  }

  // What a key does once its turn in the queue comes, in the mode the keys before it left.
  async function handleKey(key, at) {
    const mode = state.mode;
    if (mode === "name") return;
    if (mode === "edit" || mode === "jump") {
      const field = mode === "edit" ? document.activeElement : $("jump-input");
      if (key === "Escape") {
        if (mode === "edit") setMode("view");
        else closeJump();
      } else if (mode === "edit" && key === "Ctrl+Enter") {
        await saveEdit(at);
      } else if (mode === "jump" && key === "Enter") {
        await jumpTo(takeJump());
      } else if (field && TYPING.indexOf(field.tagName) >= 0) {
        typeInto(field, key);
      }
      return;
    }
    if (mode === "label") {
      if (key === "Escape") {
        setMode("view");
        return;
      }
      const n = parseInt(key, 10);
      const item = state.data && state.data.item;
      if (item && n >= 1) {
        const choices = labelChoices(item);
        if (n <= choices.length) await chooseLabel(choices[n - 1], at);
      }
      return;
    }
    const lower = key.length === 1 ? key.toLowerCase() : key;
    if (lower in ACTIONS) return act(ACTIONS[lower], at);
    if (key === "ArrowRight") return move("next");
    if (key === "ArrowLeft") return move("prev");
  }

  function bindKeys() {
    document.addEventListener("keydown", (ev) => {
      if (state.mode === "name") return;
      const target = ev.target;
      const inField = !!target && TYPING.indexOf(target.tagName) >= 0;
      const at = performance.now();
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && (state.mode === "edit" || waiting())) {
        ev.preventDefault();
        enqueue(() => handleKey("Ctrl+Enter", at));
        return;
      }
      if (state.mode === "edit" && inField) {
        if (ev.key === "Escape") {  // cancel the edit; other keys are typed into it
          ev.preventDefault();
          enqueue(() => handleKey("Escape", at));
        }
        return;
      }
      if (state.mode === "jump" && inField) {
        if (ev.key === "Escape") {
          ev.preventDefault();
          closeJump();
        }
        return;
      }
      if (inField) {
        // a filter has the focus: the keys are its own, but Esc leaves it and the page's keys work again
        if (ev.key === "Escape") {
          ev.preventDefault();
          target.blur();
        }
        return;
      }
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const key = ev.key;
      const lower = key.length === 1 ? key.toLowerCase() : key;
      const ours = lower in ACTIONS || key === "ArrowLeft" || key === "ArrowRight" || key === "Escape" ||
        /^[1-9]$/.test(key);
      // while earlier keys wait, a typed key waits too: it may be for the editor or the jump field they open
      const later = waiting() && (key.length === 1 || key === "Enter" || key === "Backspace");
      if (!ours && !later) return;
      ev.preventDefault();
      // a key held down repeats: that walks through items (the arrows) but never decides one item after another
      if (ev.repeat && key !== "ArrowLeft" && key !== "ArrowRight") return;
      if (target && target.tagName === "BUTTON") target.blur();
      enqueue(() => handleKey(key, at));
    });
  }

  document.addEventListener("DOMContentLoaded", start);
})();
