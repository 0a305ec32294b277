/* Shared helpers of the viewer's pages: the data loader, safe element building, URL fragments.
   Every text from the data goes into the page as a text node or an attribute value, never as
   markup, so a transcript can hold "<script>" and it shows as text. */
"use strict";

const MV = {
  data: {},
  waiting: {},
  /* Called by each data file: MV.put("<key>", value). */
  put(key, value) {
    this.data[key] = value;
    const waiting = this.waiting[key] || [];
    delete this.waiting[key];
    waiting.forEach((entry) => entry.resolve(value));
  },
  /* Load data/<key>.js once (a script element, since browsers block fetch() from file://). */
  load(key) {
    if (key in this.data) return Promise.resolve(this.data[key]);
    return new Promise((resolve, reject) => {
      const first = !(key in this.waiting);
      (this.waiting[key] = this.waiting[key] || []).push({ resolve, reject });
      if (!first) return;
      const script = document.createElement("script");
      script.src = "data/" + key + ".js";
      script.onerror = () => {
        const waiting = this.waiting[key] || [];
        delete this.waiting[key];
        waiting.forEach((entry) => entry.reject(new Error("cannot load data/" + key + ".js")));
      };
      document.head.appendChild(script);
    });
  },
};

/* el("td", {class: "x", title: "..."}, "text", childNode, ...): text children become text nodes. */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function readFragment() {
  return new URLSearchParams(window.location.hash.slice(1));
}

function writeFragment(params) {
  const text = params.toString().replace(/%2C/g, ",").replace(/%3A/g, ":");
  history.replaceState(null, "", text ? "#" + text : window.location.pathname);
}

const SEVERITY = { "0": "0", "1": "1", "2": "2", "-1": "missing", "-2": "n/a" };
const SEVERITY_TITLE = { "0": "full adherence", "1": "partial deviation", "2": "clear breach",
  "-1": "missing", "-2": "not applicable" };

function severityCell(code, extra) {
  const key = String(code);
  return el("span", { class: "sev sev" + key.replace("-", "m"), title: extra || SEVERITY_TITLE[key] }, SEVERITY[key] ?? key);
}

/* First clear-breach turn: a turn, 0 clean, -1 undecided (missing), -2 not applicable. */
function firstText(value) {
  if (value === null || value === undefined || value === -2) return "n/a";
  if (value === -1) return "missing";
  if (value === 0) return "clean";
  return String(value);
}

function chunkKey(n, size) {
  return "conv-" + String(Math.floor(n / size)).padStart(5, "0");
}

function reportError(message) {
  const box = document.getElementById("error");
  if (box) box.textContent = message;
}
