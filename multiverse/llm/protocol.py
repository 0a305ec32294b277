"""The structured-prompt protocol shared by the prompt builders and the offline world.

Every prompt template (simulated user, consistency monitor, planner, judge) is a
versioned text file whose ``$inputs`` placeholder becomes ONE fenced JSON block
of structured inputs, inside the system message, besides the prose a real model
reads.  ``sim/`` models parse that block (:func:`multiverse.sim.read.json_block`),
so the offline world depends only on its request.  A template's sha256 digest
goes into :attr:`multiverse.llm.request.Request.template_digest`, so editing a
template never serves a stale cached reply.

Templates use :class:`string.Template` placeholders (``$inputs``) rather than
``str.format`` so that the JSON examples in their prose need no brace escaping.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from multiverse.core.canonical import plain

__all__ = ["PromptTemplate", "encode_inputs", "fenced_json", "load_template", "reply_json"]

_REPLY_FENCE = re.compile(r"```(?:json)?[ \t]*\n(.*?)\n?```", re.DOTALL)


def json_default(value: Any) -> Any:
    """``json.dumps``'s ``default``: frozen mappings as objects, anything else through :func:`plain`."""
    if isinstance(value, Mapping):
        return dict(value)
    return plain(value)


def encode_inputs(inputs: Any) -> str:
    """The structured inputs as the one-line JSON text of the fenced block (sorted keys, ``", "`` and ``": "``).

    One line rather than indented: the standard library encodes indented JSON in
    pure Python, several times slower, and campaigns render tens of thousands
    of prompts.  Without indentation the encoding of a value inside a container
    is the value's own encoding, so callers may encode the parts of an input
    once and join them (:func:`multiverse.judge.model.judge_requests` does).
    """
    return json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=json_default)


def fenced_json(inputs: Any) -> str:
    """The structured inputs as one fenced ``json`` block (sorted keys, one line: :func:`encode_inputs`)."""
    return f"```json\n{encode_inputs(inputs)}\n```"


@dataclass(frozen=True)
class PromptTemplate:
    """A versioned prompt template.

    Attributes
    ----------
    name
        The template's name (its file stem, e.g. ``judge_v1``).
    text
        The raw template text.
    digest
        sha256 (hex) of the raw text: the request's ``template_digest``.
    """

    name: str
    text: str
    digest: str

    def render(self, inputs: Any) -> str:
        """The system message: the template with ``$inputs`` replaced by the fenced JSON block.

        Raises
        ------
        KeyError
            If the template has a placeholder other than ``$inputs``.
        """
        return self.render_encoded(encode_inputs(inputs))

    def render_encoded(self, encoded: str) -> str:
        """The system message for inputs already encoded by :func:`encode_inputs` (see :meth:`render`)."""
        return string.Template(self.text).substitute(inputs=f"```json\n{encoded}\n```").strip()


def _read(path: Path) -> PromptTemplate:
    text = path.read_text(encoding="utf-8")
    if "$inputs" not in text and "${inputs}" not in text:
        raise ValueError(f"{path}: a prompt template needs an $inputs placeholder for its JSON block")
    return PromptTemplate(path.stem, text, hashlib.sha256(text.encode("utf-8")).hexdigest())


@lru_cache(maxsize=256)
def load_template(name: str, *, directory: Path) -> PromptTemplate:
    """Load a template by name from ``directory``, or from a path to a ``.txt`` file.

    Parameters
    ----------
    name
        A template name (``user_v1``: the file ``<directory>/user_v1.txt``) or a
        path to a template file of one's own (anything ending in ``.txt``).
    directory
        The folder of the packaged templates.

    Raises
    ------
    FileNotFoundError
        If no such template exists; the message lists the packaged ones.

    Notes
    -----
    Templates are read once per process: edit a template, then start a new
    process (its new digest then keys new cache entries).
    """
    path = Path(name) if name.endswith(".txt") else directory / f"{name}.txt"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in directory.glob("*.txt")))
        raise FileNotFoundError(f"prompt template {name!r} not found; packaged templates: {known}")
    return _read(path.resolve())


def reply_json(text: str) -> Any:
    """The JSON value a model's reply carries, or ``None``.

    Accepted forms, tried in order: the whole reply is JSON; the reply holds
    exactly one fenced code block (```` ```json ```` or ```` ``` ````) with JSON
    in it; the reply is prose around one JSON object (the text from its first
    ``{`` to its last ``}`` parses).  Strings may hold raw control characters
    (``json.loads(strict=False)``): grammar-constrained local models write line
    breaks inside a reason unescaped, and reading them changes no value.
    Nothing looser: invalid JSON is not repaired (a trailing comma stays
    unparseable), and two objects in prose do not parse.
    """
    stripped = text.strip()
    candidates = [stripped]
    fences = _REPLY_FENCE.findall(stripped)
    if len(fences) == 1:
        candidates.append(fences[0].strip())
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate, strict=False)
        except (json.JSONDecodeError, RecursionError):
            continue
    return None
