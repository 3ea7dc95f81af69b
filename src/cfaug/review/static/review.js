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
    busy: false,
    mode: "view",      // view | edit | label | name
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

  // -- API ----------------------------------------------------------------------------------------------
  function newId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
  }

  async function call(method, path, params, body) {
    let url = path;
    if (params) url += "?" + new URLSearchParams(params).toString();
    const init = { method: method, headers: {}, credentials: "same-origin", cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.headers["X-CSRF-Token"] = state.session ? state.session.csrf : "";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(url, init);
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

  // A change (decision, undo): retried with the same request id when the connection fails, so the server
  // records it once; a new CSRF token is fetched once if the server was restarted meanwhile.
  async function change(path, body) {
    body.request_id = newId();
    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return await call("POST", path, null, body);
      } catch (err) {
        if (err.status === 403 && /CSRF/.test(err.message) && !renewed) {
          renewed = true;
          state.session = await call("GET", "/api/session");
          continue;
        }
        if (err.status === undefined && attempt < 4) {
          setStatus("connection lost; trying again\u2026", "warn");
          await new Promise((r) => setTimeout(r, 400 * (attempt + 1)));
          continue;
        }
        throw err;
      }
    }
  }

  function params(extra) {
    const p = { annotator: state.annotator };
    const f = state.filters;
    if (f.method) p.method = f.method;
    if (f.min !== "") p.min = f.min;
    if (f.max !== "") p.max = f.max;
    if (f.undecided) p.undecided = "1";
    return Object.assign(p, extra);
  }

  function fail(err) {
    if (err.status === 401 || (err.status === 403 && /token/.test(err.message) && !/CSRF/.test(err.message))) {
      setStatus(err.message + " (the server may have been restarted with a new token)", "error");
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
    load({ pos: 0, dir: "next" });  // a reload resumes at the first undecided item
  }

  function showFilters() {
    const f = state.filters;
    $("f-method").value = f.method;
    $("f-min").value = f.min;
    $("f-max").value = f.max;
    $("f-undecided").checked = !!f.undecided;
  }

  function readFilters() {
    state.filters = {
      method: $("f-method").value,
      min: $("f-min").value,
      max: $("f-max").value,
      undecided: $("f-undecided").checked,
    };
    sessionStorage.setItem(FILTER_KEY, JSON.stringify(state.filters));
    // the keys work again at once (they are not taken while a filter has the focus)
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    load({ pos: 0, dir: "next" });
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
    $("edit-save").addEventListener("click", saveEdit);
    $("edit-cancel").addEventListener("click", () => setMode("view"));
  }

  // -- loading and showing an item ----------------------------------------------------------------------
  async function load(where) {
    try {
      const data = await call("GET", "/api/item", params(where));
      show(data);
    } catch (err) {
      fail(err);
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
      $("empty").textContent = data.count === 0
        ? "No item matches these filters."
        : "Nothing left to review here: every item of this queue has your decision. " +
          "Untick \u201cundecided only\u201d to look through them again.";
      state.position = data.count;
      delete $("card").dataset.item;
      return;
    }
    state.position = data.position >= 0 ? data.position : state.position;
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
    fact(box, "labels", (item.source_label || "?") + " \u2192 " + (item.target_label || "?"), "labels");
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
        (item.source_label ? " (" + item.source_label + ")" : "")));
      const lt = el("div", "text");
      renderSegments(lt, f.left);
      left.appendChild(lt);
      const right = el("div", "side rewrite");
      const edited = item.decision && item.decision.decision === "edited" && f.rewrite !== f.machine;
      right.appendChild(el("h2", null, "Rewrite" + (several ? " \u00b7 " + f.role : "") +
        (item.target_label ? " (" + item.target_label + ")" : "") + (edited ? " \u2014 your edit" : "")));
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
    if (d.decision === "other_label" && d.label) text += " (" + d.label + ")";
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
      b.addEventListener("click", () => act(k.action));
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
    list.appendChild(el("dd", null, "cancel an edit or the label choice"));
  }

  // -- actions ------------------------------------------------------------------------------------------
  function setMode(mode) {
    state.mode = mode;
    $("editor").hidden = mode !== "edit";
    $("label-picker").hidden = mode !== "label";
    $("pairs").classList.toggle("editing", mode === "edit");
  }

  function act(action) {
    if (state.mode === "name") return;
    if (action === "undo") return undo();
    if (action === "move") return;
    const item = state.data && state.data.item;
    if (!item) return;
    if (action === "edit") return startEdit(item);
    if (action === "other_label") return pickLabel(item);
    decide(action);
  }

  async function decide(decision, extra) {
    const item = state.data && state.data.item;
    if (!item || state.busy) {
      if (state.busy) setStatus("still saving the last decision\u2026", "warn");
      return;
    }
    state.busy = true;
    setStatus("saving\u2026");
    const body = Object.assign({
      annotator: state.annotator, item: item.id, decision: decision,
      seconds: Math.round(performance.now() - state.shownAt) / 1000,
    }, extra || {});
    try {
      const res = await change("/api/decisions", body);
      let said = "saved: " + (DECISION_TEXT[decision] || decision);
      if (res.decision.label) said += " (" + res.decision.label + ")";
      setStatus(said, "ok");
      await load({ pos: state.position + 1, dir: "next" });
    } catch (err) {
      fail(err);
    } finally {
      state.busy = false;
    }
  }

  async function undo() {
    if (state.busy) return;
    state.busy = true;
    try {
      const res = await change("/api/undo", { annotator: state.annotator });
      if (!res.undone) {
        setStatus("nothing to undo", "warn");
      } else {
        setStatus("undone: " + (DECISION_TEXT[res.undone.decision] || res.undone.decision), "ok");
        await load({ id: res.undone.item });
      }
    } catch (err) {
      fail(err);
    } finally {
      state.busy = false;
    }
  }

  function startEdit(item) {
    const box = $("editor-fields");
    clear(box);
    for (const f of item.fields) {
      if (!f.editable) continue;
      const label = el("label", null, "Rewrite" + (item.fields.length > 1 ? " \u00b7 " + f.role : ""));
      const area = el("textarea");
      area.dataset.role = f.role;
      area.value = f.rewrite;
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

  function saveEdit() {
    const item = state.data && state.data.item;
    if (!item) return;
    const fields = {};
    let changed = false;
    for (const area of $("editor-fields").querySelectorAll("textarea")) {
      const role = area.dataset.role;
      const machine = item.fields.find((f) => f.role === role).machine;
      fields[role] = area.value;
      if (area.value !== machine) changed = true;
    }
    setMode("view");
    // the machine's own text, unchanged: that is an accept
    if (changed) decide("edited", { fields: fields });
    else decide("accepted");
  }

  function labelChoices(item) {
    const target = (item.target_label || "").toLowerCase();
    return state.session.task.labels.filter((l) => l.toLowerCase() !== target);
  }

  function pickLabel(item) {
    const box = $("label-buttons");
    clear(box);
    const choices = labelChoices(item);
    choices.forEach((lab, i) => {
      const b = el("button", "label-choice");
      b.type = "button";
      b.appendChild(el("kbd", null, String(i + 1)));
      b.appendChild(document.createTextNode(" " + lab));
      b.addEventListener("click", () => chooseLabel(lab));
      box.appendChild(b);
    });
    setMode("label");
  }

  function chooseLabel(lab) {
    const item = state.data && state.data.item;
    setMode("view");
    if (!item) return;
    // the original's own label: the rewrite did not flip it
    if ((item.source_label || "").toLowerCase() === lab.toLowerCase()) decide("not_flipped");
    else decide("other_label", { label: lab });
  }

  // -- keys ---------------------------------------------------------------------------------------------
  function bindKeys() {
    document.addEventListener("keydown", (ev) => {
      if (state.mode === "name") return;
      if (state.mode === "edit") {
        if (ev.key === "Escape") {
          ev.preventDefault();
          setMode("view");
        } else if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
          ev.preventDefault();
          saveEdit();
        }
        return;
      }
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const target = ev.target;
      const typing = ["INPUT", "SELECT", "TEXTAREA"];
      if (target && typing.indexOf(target.tagName) >= 0) return;
      if (state.mode === "label") {
        ev.preventDefault();
        if (ev.key === "Escape") return setMode("view");
        const n = parseInt(ev.key, 10);
        const item = state.data && state.data.item;
        if (item && n >= 1) {
          const choices = labelChoices(item);
          if (n <= choices.length) chooseLabel(choices[n - 1]);
        }
        return;
      }
      const key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
      const map = { a: "accepted", x: "rejected", e: "edit", n: "not_flipped", l: "other_label", " ": "skipped",
        u: "undo", Backspace: "undo" };
      if (key in map) {
        ev.preventDefault();
        if (target && target.tagName === "BUTTON") target.blur();
        act(map[key]);
      } else if (key === "ArrowRight" && !state.busy) {
        ev.preventDefault();
        load({ pos: state.position + 1, dir: "next" });
      } else if (key === "ArrowLeft" && !state.busy) {
        ev.preventDefault();
        load({ pos: state.position, dir: "prev" });
      }
    });
  }

  document.addEventListener("DOMContentLoaded", start);
})();
