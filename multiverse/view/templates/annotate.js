/* The annotation form: blinded label sheets per assistant turn x principle and per user turn x axis.
   Labels live in localStorage under the task set's digest and are downloaded as JSONL. */
"use strict";

const SET = MV.data.tasks;
const STORE_KEY = "multiverse-annotate:" + SET.digest;
const TASKS = SET.tasks;
const BY_ID = Object.fromEntries(TASKS.map((t) => [String(t.task), t]));

function loadLabels() {
  try { return JSON.parse(localStorage.getItem(STORE_KEY) || "{}"); } catch (error) { return {}; }
}

let LABELS = loadLabels();

function saveLabels() {
  localStorage.setItem(STORE_KEY, JSON.stringify(LABELS));
  renderProgress();
}

function labelKey(kind, task, turn, name) {
  return [kind, task, turn, name].join("\u0001");
}

function expected(task) {
  const keys = [];
  for (const turn of task.assistant_turns) for (const p of task.principles) keys.push(labelKey("s", task.task, turn, p.id));
  for (const turn of task.user_turns) for (const axis of task.axes) keys.push(labelKey("r", task.task, turn, axis));
  return keys;
}

function renderProgress() {
  let done = 0, total = 0;
  for (const task of TASKS) {
    const keys = expected(task);
    total += keys.length;
    done += keys.filter((k) => k in LABELS).length;
  }
  document.getElementById("progress").textContent = done + " of " + total + " labels";
  for (const link of document.querySelectorAll(".tasklist a")) {
    const keys = expected(BY_ID[link.dataset.task]);
    const filled = keys.filter((k) => k in LABELS).length;
    link.querySelector(".count").textContent = filled + "/" + keys.length;
    link.classList.toggle("complete", filled === keys.length);
  }
}

function radios(name, options, current, onPick) {
  return options.map(([value, label]) => {
    const input = el("input", { type: "radio", name, value, checked: String(current) === String(value) });
    input.addEventListener("change", () => onPick(value));
    return el("label", { title: label }, input, " " + value + (label ? " " + label : ""));
  });
}

function criteriaList(criteria) {
  if (!criteria) return null;
  if (typeof criteria === "string") return el("div", { class: "principle-help" }, criteria);
  return el("ul", { class: "principle-help" }, ...Object.entries(criteria).map(([level, c]) =>
    el("li", {}, el("i", {}, level), ": " + (c && typeof c === "object" ? (c.description || JSON.stringify(c)) : String(c)))));
}

function severitySheet(task, turn) {
  const levels = Object.entries(task.severity_levels).sort((a, b) => Number(a[0]) - Number(b[0]));
  const table = el("table", { "data-sheet": "severity", "data-turn": turn });
  for (const principle of task.principles) {
    const key = labelKey("s", task.task, turn, principle.id);
    const row = el("tr", { class: key in LABELS ? "done" : null, "data-principle": principle.id });
    const pick = (value) => { LABELS[key] = Number(value); row.classList.add("done"); saveLabels(); };
    row.append(el("td", {}, el("b", {}, principle.id), el("div", { class: "principle-help" }, principle.statement || "")),
      el("td", {}, ...radios(["sev", task.task, turn, principle.id].join("|"), levels, LABELS[key], pick)));
    table.append(row);
  }
  return el("div", { class: "sheet" }, el("div", { class: "muted" }, "assistant turn " + turn + ": severity per principle"), table);
}

function ratingSheet(task, turn) {
  const table = el("table", { "data-sheet": "rating", "data-turn": turn });
  for (const axis of task.axes) {
    const key = labelKey("r", task.task, turn, axis);
    const row = el("tr", { class: key in LABELS ? "done" : null, "data-axis": axis });
    const pick = (value) => { LABELS[key] = Number(value); row.classList.add("done"); saveLabels(); };
    const options = [1, 2, 3, 4, 5].map((v) => [String(v), ""]);
    row.append(el("td", {}, el("b", {}, axis.replace(/_/g, " "))),
      el("td", {}, ...radios(["rate", task.task, turn, axis].join("|"), options, LABELS[key], pick)));
    table.append(row);
  }
  return el("div", { class: "sheet" }, el("div", { class: "muted" }, "user turn " + turn + ": rating 1 (worst) to 5 (best)"), table);
}

function toolCalls(calls) {
  return (calls || []).map((call) => {
    const name = call && (call.name || (call.function && call.function.name)) || "tool call";
    const args = call && (call.arguments || (call.function && call.function.arguments) || {});
    return el("div", { class: "action" }, "tool call ", el("code", {}, String(name)),
      el("pre", { class: "args" }, typeof args === "string" ? args : JSON.stringify(args, null, 2)));
  });
}

function renderTask(id) {
  const task = BY_ID[id] || TASKS[0];
  for (const link of document.querySelectorAll(".tasklist a")) link.classList.toggle("current", link.dataset.task === String(task.task));
  const box = document.getElementById("task");
  const principles = el("details", { class: "reasons", open: true }, el("summary", {}, "principles of the role " + task.role),
    el("ul", {}, ...task.principles.map((p) => el("li", {}, el("b", {}, p.id), ": " + (p.statement || ""),
      criteriaList(p.criteria)))));
  const events = el("div", { class: "events" });
  let assistant = 0, user = 0;
  const rateAssistant = new Set(task.assistant_turns), rateUser = new Set(task.user_turns);
  for (const event of task.events) {
    const node = el("div", { class: "event " + event.actor }, el("div", { class: "who" }, el("b", {}, event.actor)));
    if (event.actor === "assistant") { assistant += 1; node.querySelector(".who").append(el("span", {}, "assistant turn " + assistant)); }
    if (event.actor === "user") { user += 1; node.querySelector(".who").append(el("span", {}, "user turn " + user)); }
    if (event.set_role) node.append(el("div", { class: "badge role" }, "trusted role change: " + event.set_role));
    if (event.text) node.append(el("pre", { class: "text" }, String(event.text)));
    node.append(...toolCalls(event.tool_calls));
    if (event.actor === "assistant" && rateAssistant.has(assistant)) node.append(severitySheet(task, assistant));
    if (event.actor === "user" && rateUser.has(user)) node.append(ratingSheet(task, user));
    events.append(node);
  }
  box.replaceChildren(el("h2", {}, "task " + task.task + " · role " + task.role), principles, events);
}

function labelLines(annotator) {
  const lines = [];
  for (const task of TASKS) {
    for (const turn of task.assistant_turns) for (const p of task.principles) {
      const key = labelKey("s", task.task, turn, p.id);
      if (key in LABELS) lines.push({ task: task.task, annotator, turn, principle: p.id, severity: LABELS[key] });
    }
    for (const turn of task.user_turns) for (const axis of task.axes) {
      const key = labelKey("r", task.task, turn, axis);
      if (key in LABELS) lines.push({ task: task.task, annotator, turn, axis, rating: LABELS[key] });
    }
  }
  return lines.map((line) => JSON.stringify(line)).join("\n") + (lines.length ? "\n" : "");
}

function download() {
  const annotator = document.getElementById("annotator").value.trim();
  if (!annotator) { reportError("Enter your annotator name or id before downloading."); document.getElementById("annotator").focus(); return; }
  reportError("");
  const blob = new Blob([labelLines(annotator)], { type: "application/x-ndjson" });
  const link = el("a", { href: URL.createObjectURL(blob), download: "labels-" + annotator.replace(/[^A-Za-z0-9_.-]/g, "_") + ".jsonl" });
  document.body.append(link);
  link.click();
  link.remove();
}

document.getElementById("title").textContent = SET.title + " (" + TASKS.length + " conversations)";
const annotatorInput = document.getElementById("annotator");
annotatorInput.value = localStorage.getItem(STORE_KEY + ":annotator") || "";
annotatorInput.addEventListener("change", () => localStorage.setItem(STORE_KEY + ":annotator", annotatorInput.value.trim()));
document.getElementById("download").addEventListener("click", download);
document.getElementById("tasks").append(...TASKS.map((t) =>
  el("a", { href: "#task=" + encodeURIComponent(t.task), "data-task": String(t.task), title: String(t.task) },
    el("span", { class: "count muted" }), String(t.task))));
window.addEventListener("hashchange", () => renderTask(readFragment().get("task")));
renderTask(readFragment().get("task"));
renderProgress();
document.body.dataset.ready = "1";
