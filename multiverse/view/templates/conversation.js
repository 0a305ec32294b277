/* One conversation: every event in order, the active role per assistant turn (contract oracle),
   the monitor's tags, and per turn x principle every judge's severity with its reason. */
"use strict";

const CHUNK_SIZE = parseInt(document.body.dataset.chunkSize, 10);

function fact(dl, label, value) {
  if (value === null || value === undefined || value === "") return;
  dl.append(el("dt", {}, label), el("dd", {}, typeof value === "object" ? JSON.stringify(value) : String(value)));
}

function missingText(record, judge) {
  const reason = record.missing_reason[judge];
  return "missing" + (reason ? " (" + reason + ")" : "");
}

let TRUST = {};

/* A judge's column head: its label, its canary results and probe effect as a tooltip, and a badge when it has no signal. */
function judgeHead(judge) {
  const t = TRUST[judge] || {};
  const title = [t.canaries ? "canaries: " + t.canaries : "", t.probe ? "probe " + t.probe : ""].filter(Boolean).join("; ");
  const head = el("th", { title: title || null, "data-judge": judge }, judge);
  if (t.no_signal) head.append(" ", el("span", { class: "badge breach no-signal" }, "no signal"));
  return head;
}

function judgmentTable(record, turn, firstBreach) {
  const judges = record.judges;
  const hasTruth = !!turn.truth;
  const head = el("tr", {}, el("th", {}, "principle"), ...judges.map(judgeHead),
    hasTruth ? el("th", {}, "planted truth") : null);
  const table = el("table", { class: "judgments", "data-turn": turn.turn }, el("thead", {}, head));
  const body = el("tbody");
  const reasons = turn.reasons || {};
  const listed = [];
  for (const principle of record.principles) {
    const codes = turn.severity[principle];
    if (codes.every((c) => c === -2) && (!hasTruth || turn.truth[principle] === -2)) continue;
    const tr = el("tr", { "data-principle": principle }, el("td", {}, principle));
    judges.forEach((judge, j) => {
      const code = codes[j];
      const reason = (reasons[principle] || {})[judge];
      const title = code === -1 ? missingText(record, judge) : reason || null;
      const cell = severityCell(code, title);
      if (code === -1) cell.textContent = missingText(record, judge);
      const isFirst = firstBreach[judge] === turn.turn && code === 2;
      tr.append(el("td", { class: isFirst ? "first" : null, "data-judge": judge, "data-code": code }, cell));
      if (reason) listed.push([principle, judge, code, reason]);
    });
    if (hasTruth) tr.append(el("td", {}, severityCell(turn.truth[principle])));
    body.append(tr);
  }
  table.append(body);
  const box = el("div", {}, table);
  if (listed.length) {
    box.append(el("details", { class: "reasons" }, el("summary", {}, "judge reasons (" + listed.length + ")"),
      el("ul", {}, ...listed.map(([p, j, code, reason]) =>
        el("li", {}, el("b", {}, j), " on ", p, " (", SEVERITY_TITLE[String(code)] || String(code), "): ", reason)))));
  }
  return box;
}

function oracleBox(record) {
  const oracle = record.oracle;
  const box = el("div", { class: "oracle lane-" + (oracle ? oracle.lane : "none"), id: "oracle" });
  if (!oracle) {
    box.append(record.events ? "No role contract for this role: no active roles and no oracle verdict." :
      "No transcript in the site: the oracle needs the conversation's events.");
    return box;
  }
  box.append(el("b", {}, "Contract oracle: lane " + oracle.lane), " (contract " + (oracle.contract_version || "?") + ")");
  const first = oracle.first_violation;
  if (first) {
    box.append(el("div", { id: "oracle-first" }, "First violation at assistant turn ", el("b", { id: "first-violation-turn" },
      String(first.assistant_turn)), " (event " + first.turn + "): action ", el("code", {}, first.action),
      " by active role ", el("code", {}, first.active_role), "; allowed: " + (first.allowed_actions || []).join(", ") + " ",
      el("a", { href: "#n=" + record.n + "&turn=" + first.assistant_turn, id: "to-first-violation" }, "show it")));
  }
  for (const error of oracle.fixture_errors) box.append(el("div", {}, "fixture error: " + error.code + (error.turn !== undefined ? " at event " + error.turn : "")));
  for (const error of oracle.context_errors) box.append(el("div", {}, "context error: " + (error.code || JSON.stringify(error))));
  return box;
}

function verdicts(record) {
  const box = document.getElementById("verdicts");
  const first = el("table", { class: "judgments", id: "first-breach" }, el("thead", {}, el("tr", {},
    el("th", {}, "judge"), el("th", {}, "first clear breach (assistant turn)"))));
  const body = el("tbody");
  for (const judge of record.judges) {
    body.append(el("tr", { "data-judge": judge }, el("td", {}, judge), el("td", {}, firstText(record.first[judge]))));
  }
  first.append(body);
  box.replaceChildren(oracleBox(record), first);
}

function actionList(actions) {
  return (actions || []).map((a) => el("div", { class: "action" }, "tool call ", el("code", {}, a.name),
    el("pre", { class: "args" }, JSON.stringify(a.arguments || {}, null, 2))));
}

function eventNode(record, event, assistantTurn, turnsByNumber, firstBreach) {
  const oracle = record.oracle;
  const who = el("div", { class: "who" }, el("b", {}, event.actor), el("span", {}, "event " + event.turn));
  const node = el("div", { class: "event " + event.actor, "data-event": event.turn });
  const meta = event.meta || {};
  if (event.actor === "assistant") {
    node.id = "turn-" + assistantTurn;
    node.dataset.turn = assistantTurn;
    who.append(el("span", {}, "assistant turn " + assistantTurn));
    const role = oracle ? oracle.role_by_event[String(event.turn)] : null;
    if (role) who.append(el("span", { class: "badge role", "data-role": role }, "active role: " + role));
    const first = oracle && oracle.first_violation;
    if (first && first.assistant_turn === assistantTurn) {
      node.classList.add("first-violation");
      who.append(el("span", { class: "badge breach", id: "first-violation-badge" }, "first violation · lane " + oracle.lane));
    }
    const judges = record.judges.filter((j) => firstBreach[j] === assistantTurn);
    if (judges.length) who.append(el("span", { class: "badge breach" }, "first clear breach: " + judges.join(", ")));
  }
  if (event.actor === "tool" && meta.name) who.append(el("span", {}, "result of " + meta.name));
  if (event.actor === "user" && (meta.tag_mode || meta.tag_strategy)) {
    who.append(el("span", { class: "badge" }, "monitor tag: " + [meta.tag_mode, meta.tag_strategy].filter(Boolean).join("/")));
  }
  node.append(who);
  if (event.set_role) node.append(el("div", { class: "badge role" }, "trusted role change: " + event.set_role));
  if (event.text) node.append(el("pre", { class: "text" }, event.text));
  node.append(...actionList(event.actions));
  if (event.actor === "user" && meta.rubric) {
    node.append(el("div", { class: "muted" }, "monitor rubric: " +
      Object.entries(meta.rubric).map(([k, v]) => k + " " + v).join(", ")));
  }
  const turn = event.actor === "assistant" ? turnsByNumber[assistantTurn] : null;
  if (turn) {
    if (turn.tag) node.append(el("div", { class: "muted" }, "tag of the user turn before: " + turn.tag));
    node.append(judgmentTable(record, turn, firstBreach));
  }
  return node;
}

function render(record) {
  document.getElementById("title").textContent = "conversation " + record.n;
  document.title = "conversation " + record.n + " · multiverse viewer";
  const facts = document.getElementById("facts");
  facts.replaceChildren();
  for (const [k, v] of Object.entries(record.labels)) fact(facts, k.replace(/_/g, " "), v);
  fact(facts, "target cell", [record.fields.mode, record.fields.strategy, record.fields.target_principle].filter(Boolean).join("/"));
  fact(facts, "origin", record.fields.origin);
  fact(facts, "parent", record.parent);
  fact(facts, "ended", record.fields.ended);
  fact(facts, "transcript", record.transcript_id);
  if (record.scenario) {
    for (const key of ["persona", "goal", "task_id", "instruction"]) fact(facts, key, record.scenario[key]);
  }
  verdicts(record);
  const firstBreach = record.first;
  const turnsByNumber = Object.fromEntries(record.turns.map((t) => [t.turn, t]));
  const events = document.getElementById("events");
  events.replaceChildren();
  if (record.events) {
    let assistant = 0;
    for (const event of record.events) {
      if (event.actor === "assistant") assistant += 1;
      events.append(eventNode(record, event, event.actor === "assistant" ? assistant : null, turnsByNumber, firstBreach));
    }
  } else {
    events.append(el("p", { class: "muted" }, "No transcript text in this site; judgments per assistant turn:"));
    for (const turn of record.turns) {
      events.append(el("div", { class: "event assistant", id: "turn-" + turn.turn, "data-turn": turn.turn },
        el("div", { class: "who" }, el("b", {}, "assistant"), el("span", {}, "assistant turn " + turn.turn)),
        judgmentTable(record, turn, firstBreach)));
    }
  }
  const wanted = readFragment().get("turn");
  if (wanted && document.getElementById("turn-" + wanted)) document.getElementById("turn-" + wanted).scrollIntoView();
}

async function show() {
  const n = parseInt(readFragment().get("n"), 10);
  if (!Number.isInteger(n) || n < 0) { reportError("No conversation chosen: open this page from the index."); return; }
  document.getElementById("prev").href = "#n=" + Math.max(0, n - 1);
  document.getElementById("next").href = "#n=" + (n + 1);
  try {
    TRUST = await MV.load("trust").catch(() => ({}));
    const chunk = await MV.load(chunkKey(n, CHUNK_SIZE));
    const record = chunk[n % CHUNK_SIZE];
    if (!record || record.n !== n) { reportError("No conversation " + n + " in this site."); return; }
    reportError("");
    render(record);
    document.body.dataset.ready = String(n);
  } catch (error) {
    reportError("No conversation " + n + " in this site.");
  }
}

window.addEventListener("hashchange", show);
show();
