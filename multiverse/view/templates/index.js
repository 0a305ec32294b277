/* The index page: provenance, counts, and the conversation table (or the units two raters
   disagree on), filtered and sorted from the URL fragment so a view can be shared. */
"use strict";

const PAGE_SIZE = 100;
const FILTER_COLUMNS = ["system", "role", "user_sim", "condition", "replicate", "item", "mode", "strategy",
  "target_principle", "origin", "ended"];
const SPEC_KEYS = ["judge", "standard", "rule"];

const INDEX = MV.data.index;
const COL = Object.fromEntries(INDEX.columns.map((name, i) => [name, i]));
/* Text columns arrive as codes into per-column dictionaries: decode them once. */
for (const [name, values] of Object.entries(INDEX.dictionaries || {})) {
  const at = COL[name];
  for (const row of INDEX.rows) row[at] = values[row[at]];
}
const ROLE_PRINCIPLES = {};

function renderProvenance() {
  const p = INDEX.provenance;
  document.getElementById("title").textContent = "multiverse viewer: " + (p.experiment || p.path || "cube");
  document.getElementById("subtitle").textContent = (p.created || "") + (p.source ? " · " + p.source : "");
  const facts = document.getElementById("facts");
  const shown = ["experiment", "path", "plan_digest", "experiment_digest", "multiverse_version", "created", "campaign_judge",
    "source", "spec_digests", "dependency_versions", "warnings"];
  for (const key of shown) {
    if (p[key] === undefined || p[key] === null || p[key] === "" || (Array.isArray(p[key]) && !p[key].length)) continue;
    const value = typeof p[key] === "object" ? JSON.stringify(p[key]) : String(p[key]);
    facts.append(el("dt", {}, key.replace(/_/g, " ")), el("dd", {}, value));
  }
}

function renderCounts() {
  const c = INDEX.counts;
  const cards = document.getElementById("cards");
  const card = (label, value, id) => el("div", { class: "card", id }, el("b", {}, String(value)), label);
  cards.append(card("conversations", c.conversations, "count-conversations"));
  for (const [state, n] of Object.entries(c.ended)) cards.append(card(state.replace(/_/g, " "), n, "count-" + state));
  let valid = 0, missing = 0;
  for (const j of Object.values(c.judgments)) { valid += j.valid; missing += j.missing; }
  cards.append(card("valid judgments", valid, "count-valid"), card("missing judgments", missing, "count-missing"));
  const failed = Object.values(c.failures || {}).reduce((a, b) => a + b, 0);
  cards.append(card("recorded failures" + (c.calls ? " in " + c.calls + " calls" : ""), failed, "count-failures"));
  const trust = INDEX.trust || {};
  const table = el("table", { class: "grid", id: "missing-table" },
    el("thead", {}, el("tr", {}, el("th", {}, "judge"), el("th", {}, "valid"), el("th", {}, "missing"),
      el("th", {}, "missing by reason"), el("th", {}, "canaries (pooled, 95% intervals)"), el("th", {}, "probe effect"))));
  const body = el("tbody");
  for (const [judge, j] of Object.entries(c.judgments)) {
    const reasons = Object.entries(j.missing_by_reason).map(([r, n]) => r + " " + n).join(", ") || "none recorded";
    const t = trust[judge] || {};
    const canaries = el("td", { class: "canaries" }, t.canaries || "not judged");
    if (t.no_signal) canaries.prepend(el("span", { class: "badge breach no-signal" }, "no signal"), " ");
    body.append(el("tr", { "data-judge": judge }, el("td", {}, judge), el("td", {}, j.valid), el("td", {}, j.missing),
      el("td", {}, reasons), canaries, el("td", { class: "probe" }, t.probe || "")));
  }
  table.append(body);
  const failures = Object.entries(c.failures || {}).map(([r, n]) => r + " " + n).join(", ");
  const remarks = ["Failed calls by reason: " + (failures || "none") + "."];
  if (!INDEX.has_transcripts) remarks.push("No transcript store: conversation pages show judgments only.");
  else if (!INDEX.has_reasons) remarks.push("The transcript store keeps no judge reasons: pages show severities only.");
  document.getElementById("missing").append(el("h2", {}, "Judgments per judge"), table,
    el("p", { class: "muted", id: "remarks" }, remarks.join(" ")));
  if (c.sequential) renderLooks(c.sequential);
  if ((INDEX.notes || []).length) {
    document.getElementById("missing").append(el("ul", { class: "muted notes" }, ...INDEX.notes.map((note) => el("li", {}, note))));
  }
}

/* A sequential run's stopping record: every look's confidence-sequence interval (valid at every look). */
function renderLooks(record) {
  const head = ["look", "item pairs", "estimate", "interval", "half-width", "items per cell"];
  const table = el("table", { class: "grid", id: "looks-table" },
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))));
  const body = el("tbody");
  for (const look of record.looks) {
    const items = Object.entries(look.items).map(([cell, n]) => cell + " " + n).join(", ");
    body.append(el("tr", {}, el("td", {}, look.look), el("td", {}, look.draws), el("td", {}, look.estimate),
      el("td", {}, "[" + look.interval[0] + ", " + look.interval[1] + "]"), el("td", {}, look.half_width), el("td", {}, items)));
  }
  table.append(body);
  const target = record.precision.contrast.join(" - ") + ", half-width target " + record.target_half_width;
  document.getElementById("missing").append(el("h2", {}, "Sequential run"),
    el("p", { class: "muted", id: "looks-remark" }, "Contrast " + target + "; stopped: " + record.stopped +
      ". Intervals are a confidence sequence, valid at every look at once."), table);
}

function values(params, key) {
  const raw = params.get(key);
  return raw === null || raw === "" ? null : raw.split(",");
}

/* The row test of the fragment's filters (built once per render). */
function matcher(params, ids) {
  const wanted = FILTER_COLUMNS.map((key) => [COL[key], values(params, key)]).filter(([, v]) => v)
    .map(([at, v]) => [at, new Set(v)]);
  const principle = params.get("principle");
  const violated = params.get("violated");
  const disagree = params.get("disagree");
  const query = (params.get("q") || "").toLowerCase();
  return (row) => {
    for (const [at, set] of wanted) if (!set.has(String(row[at]))) return false;
    if (principle && !(ROLE_PRINCIPLES[row[COL.role]] || []).includes(principle)) return false;
    if (violated && !(row[COL["first:" + violated]] > 0)) return false;
    if (disagree === "yes" && !(row[COL.disagree] > 0)) return false;
    if (disagree === "no" && row[COL.disagree] > 0) return false;
    if (query && !row.some((v) => String(v).toLowerCase().includes(query)) &&
        !(ids && String(ids[row[0]]).toLowerCase().includes(query))) return false;
    return true;
  };
}

function select(label, key, options, params, rerender) {
  const current = params.get(key) || "";
  const node = el("select", { name: key, "data-filter": key, onchange: (e) => {
    const next = readFragment();
    if (e.target.value) next.set(key, e.target.value); else next.delete(key);
    next.delete("page");
    writeFragment(next);
    rerender();
  } }, el("option", { value: "" }, "any"));
  const all = options.map(String);
  if (current && !all.includes(current)) all.unshift(current);
  for (const option of all) node.append(el("option", { value: option, selected: option === current }, option));
  return el("label", {}, label, node);
}

function distinct(column) {
  const seen = new Set(INDEX.rows.map((row) => row[COL[column]]));
  return [...seen].filter((v) => v !== "").sort((a, b) => (typeof a === "number" ? a - b : String(a).localeCompare(String(b))));
}

function renderFilters(params, rerender) {
  const box = document.getElementById("filters");
  box.replaceChildren();
  for (const key of FILTER_COLUMNS) {
    const options = distinct(key);
    if (options.length > 1 || params.get(key)) box.append(select(key.replace(/_/g, " "), key, options, params, rerender));
  }
  const principles = [...new Set(Object.values(ROLE_PRINCIPLES).flat())].sort();
  box.append(select("principle of role", "principle", principles, params, rerender));
  box.append(select("violated (judge)", "violated", INDEX.judges, params, rerender));
  box.append(select("judges disagree", "disagree", ["yes", "no"], params, rerender));
  const search = el("input", { type: "search", name: "q", value: params.get("q") || "", placeholder: "text in any column" });
  search.addEventListener("change", () => {
    const next = readFragment();
    if (search.value) next.set("q", search.value); else next.delete("q");
    next.delete("page");
    writeFragment(next);
    rerender();
  });
  box.append(el("label", {}, "search", search));
  box.append(el("label", {}, "\u00a0", el("button", { type: "button", id: "clear", onclick: () => {
    writeFragment(new URLSearchParams());
    rerender();
  } }, "clear filters")));
}

function specOf(params) {
  const spec = Object.fromEntries(SPEC_KEYS.map((k) => [k, params.get(k)]));
  return spec.judge && spec.standard && spec.rule ? spec : null;
}

function sortRows(rows, params, scoreOf) {
  const sort = params.get("sort");
  if (!sort) return rows;
  const desc = sort.startsWith("-");
  const key = desc ? sort.slice(1) : sort;
  const get = key === "score" ? (row) => scoreOf(row) : (row) => row[COL[key]];
  const keyed = rows.map((row) => [get(row), row]);
  keyed.sort((a, b) => {
    const x = a[0], y = b[0];
    if (x === y) return a[1][0] - b[1][0];
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return desc ? -order : order;
  });
  return keyed.map((pair) => pair[1]);
}

function header(columns, params, rerender) {
  const sort = params.get("sort") || "";
  const tr = el("tr");
  for (const [key, label] of columns) {
    const cls = sort === key ? "sorted-asc" : sort === "-" + key ? "sorted-desc" : null;
    tr.append(el("th", { class: cls, "data-sort": key, onclick: () => {
      const next = readFragment();
      next.set("sort", sort === key ? "-" + key : key);
      writeFragment(next);
      rerender();
    } }, label));
  }
  return tr;
}

function pager(total, params, rerender) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const page = Math.min(pages, Math.max(1, parseInt(params.get("page") || "1", 10) || 1));
  const go = (p) => () => { const next = readFragment(); next.set("page", String(p)); writeFragment(next); rerender(); };
  const box = document.getElementById("pager");
  box.replaceChildren(
    el("span", { id: "match-count" }, total + " of " + INDEX.rows.length + " conversations"),
    el("button", { type: "button", disabled: page <= 1, onclick: go(page - 1) }, "previous"),
    el("span", {}, "page " + page + " of " + pages),
    el("button", { type: "button", disabled: page >= pages, onclick: go(page + 1) }, "next"));
  return page;
}

function labelsOf(row) {
  return ["system", "role", "user_sim", "condition", "replicate", "item"].map((k) => row[COL[k]]);
}

async function renderConversations(params, rerender) {
  document.getElementById("table-title").textContent = "Conversations";
  const spec = specOf(params);
  let scores = null;
  if (spec) {
    const key = INDEX.scores.files[spec.judge];
    scores = key ? (await MV.load(key))[spec.standard + "|" + spec.rule] : null;
  }
  const scoreOf = (row) => (scores ? scores[row[0]] : null);
  const banner = document.getElementById("banner");
  banner.replaceChildren();
  if (spec) {
    const unit = INDEX.scores.units[spec.rule] || "";
    banner.append(el("div", { class: "banner", id: "spec-banner" }, "Specification: judge " + spec.judge + ", standard " +
      spec.standard + ", rule " + spec.rule + (unit ? " (" + unit + ")" : "") +
      (scores ? "; its score is the last column." : "; no scores for this specification.")));
  }
  const ids = params.get("q") ? await MV.load("ids") : null;
  const matching = sortRows(INDEX.rows.filter(matcher(params, ids)), params, scoreOf);
  const page = pager(matching.length, params, rerender);
  const columns = [["n", "#"], ["system", "system"], ["role", "role"], ["user_sim", "user sim"], ["condition", "condition"],
    ["replicate", "rep"], ["item", "item"], ["mode", "cell"], ["origin", "origin"], ["ended", "ended"], ["turns", "turns"],
    ...INDEX.judges.map((j) => ["first:" + j, "first breach: " + j]), ["disagree", "disagreements"]];
  if (scores) columns.push(["score", "score"]);
  const table = document.getElementById("table");
  table.tHead.replaceChildren(header(columns, params, rerender));
  const body = el("tbody");
  for (const row of matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE)) {
    const cell = [row[COL.mode], row[COL.strategy], row[COL.target_principle]].filter((v) => v).join(" / ");
    const tr = el("tr", { "data-n": row[0] },
      el("td", {}, el("a", { href: "conversation.html#n=" + row[0] }, String(row[0]))),
      ...labelsOf(row).map((v) => el("td", {}, String(v))),
      el("td", { class: "cell" }, cell), el("td", {}, row[COL.origin]), el("td", {}, row[COL.ended]), el("td", {}, row[COL.turns]),
      ...INDEX.judges.map((j) => el("td", { class: row[COL["first:" + j]] > 0 ? "breach" : null }, firstText(row[COL["first:" + j]]))),
      el("td", {}, String(row[COL.disagree])));
    if (scores) {
      const value = scoreOf(row);
      tr.append(el("td", { class: "score" }, value === null ? "missing" : String(value)));
    }
    body.append(tr);
  }
  table.replaceChild(body, table.tBodies[0]);
}

async function renderUnits(params, rerender) {
  const a = params.get("a"), b = params.get("b"), standard = params.get("standard") || "severity";
  document.getElementById("table-title").textContent = "Units where " + a + " and " + b + " disagree";
  document.getElementById("filters").replaceChildren(el("button", { type: "button", id: "clear", onclick: () => {
    writeFragment(new URLSearchParams()); rerender(); } }, "back to all conversations"));
  const key = INDEX.units[standard + "|" + a + "|" + b] || INDEX.units[standard + "|" + b + "|" + a];
  const banner = document.getElementById("banner");
  if (!key) {
    banner.replaceChildren(el("div", { class: "banner" }, "No unit list for this pair."));
    return;
  }
  const swapped = !INDEX.units[standard + "|" + a + "|" + b];
  const units = (await MV.load(key)).map((u) => (swapped ? [u[0], u[1], u[2], u[4], u[3]] : u));
  banner.replaceChildren(el("div", { class: "banner", id: "units-banner" }, units.length + " units (turn x principle) rated by both " +
    a + " and " + b + " with different " + (standard === "severity" ? "severities" : standard + " codes") + "."));
  const rows = units;
  const page = pager(rows.length, params, rerender);
  document.getElementById("match-count").textContent = rows.length + " units";
  const columns = [["n", "#"], ["system", "system"], ["role", "role"], ["user_sim", "user sim"], ["condition", "condition"],
    ["replicate", "rep"], ["item", "item"], ["turn", "turn"], ["principle", "principle"], ["a", a], ["b", b]];
  const table = document.getElementById("table");
  table.tHead.replaceChildren(el("tr", {}, ...columns.map(([, label]) => el("th", {}, label))));
  const body = el("tbody");
  for (const [n, turn, principle, codeA, codeB] of rows.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE)) {
    const row = INDEX.rows[n];
    body.append(el("tr", { "data-n": n, "data-turn": turn, "data-principle": principle },
      el("td", {}, el("a", { href: "conversation.html#n=" + n + "&turn=" + turn }, String(n))),
      ...labelsOf(row).map((v) => el("td", {}, String(v))),
      el("td", {}, String(turn)), el("td", {}, principle),
      el("td", {}, severityCell(codeA)), el("td", {}, severityCell(codeB))));
  }
  table.replaceChild(body, table.tBodies[0]);
}

function render() {
  const params = readFragment();
  const run = params.get("view") === "units" ? renderUnits : renderConversations;
  if (params.get("view") !== "units") renderFilters(params, render);
  document.body.dataset.ready = "";
  run(params, render).then(() => {
    if (window.location.hash && params.get("view")) document.getElementById("table-section").scrollIntoView();
    document.body.dataset.ready = window.location.hash || "#";
  }).catch((error) => reportError(String(error)));
}

for (const [role, principles] of Object.entries(INDEX.role_principles || {})) ROLE_PRINCIPLES[role] = principles;
renderProvenance();
renderCounts();
document.getElementById("to-table").addEventListener("click", () => document.getElementById("table-section").scrollIntoView());
window.addEventListener("hashchange", render);
render();
