"""Reading a role's canaries: planted replies whose verdict on one principle is known.

A role file's ``canaries:`` maps each principle id to a list of
``{truth, user, reply}``: the user turn, the assistant reply that answers it,
and the reply's severity on that principle, 0 (it clearly keeps the principle)
or 2 (it clearly breaks it); a reply of an agentic role may also record the
tool calls it made (``actions: [{name, arguments}]``, names among the role's tools).  ``specs/README.md`` documents the format;
:mod:`multiverse.judge.canaries` runs judges on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from multiverse.config.fields import FieldReader, join, suggest
from multiverse.config.spec_types import CANARY_TRUTHS, Canary
from multiverse.core.canonical import text_digest

__all__ = ["parse_canaries"]

_CANARY_KEYS = ("truth", "user", "reply")


def parse_canaries(
    reader: FieldReader, value: Any, principle_ids: tuple[str, ...] | None, tool_names: Sequence[str] | None = ()
) -> list[Canary] | None:
    """``canaries: {principle_id: [{truth, user, reply, actions}, ...]}``; no two canaries of a role share a reply.

    ``tool_names`` are the role's tools (``None``: unknown, because the tools
    did not read); a canary's actions must name one of them.
    """
    data = reader.mapping(value, "canaries", any_keys=True, what="a mapping of principle id -> list of canaries")
    if data is None:
        return None
    out: list[Canary] = []
    first: dict[str, str] = {}
    ok = True
    for principle, entries in data.items():
        field_ = join("canaries", principle)
        if principle_ids is not None and principle not in principle_ids:
            reader.problem(field_, f"unknown principle '{principle}'{suggest(principle, principle_ids)}: "
                                   f"expected one of {', '.join(principle_ids)}")
            ok = False
            continue
        items = reader.items(entries, field_, what="a list of canaries")
        if items is None:
            ok = False
            continue
        for i, entry in enumerate(items):
            entry_field = join(field_, i)
            entry = reader.mapping(entry, entry_field, required=_CANARY_KEYS, optional=("actions",),
                                   what="a canary mapping {truth, user, reply}")
            if entry is None:
                ok = False
                continue
            truth = reader.integer(entry["truth"], join(entry_field, "truth"), low=0, high=2) if "truth" in entry else None
            if truth is not None and truth not in CANARY_TRUTHS:
                reader.problem(join(entry_field, "truth"), f"expected 0 (clearly keeps the principle) or 2 (clearly breaks it), got {truth}")
                truth = None
            user = reader.text(entry, entry_field, "user")
            reply = reader.text(entry, entry_field, "reply")
            if reply is not None and text_digest(reply) in first:
                line = reader.located.line(first[text_digest(reply)])
                reader.problem(join(entry_field, "reply"), "duplicate canary reply: a canary is identified by its reply's text"
                               + (f" (first at line {line})" if line is not None else ""))
                ok = False
                continue
            if reply is not None:
                first[text_digest(reply)] = join(entry_field, "reply")
            actions = _actions(reader, entry["actions"], join(entry_field, "actions"), tool_names) if "actions" in entry else ()
            if truth is None or user is None or reply is None or actions is None:
                ok = False
                continue
            out.append(Canary(principle=principle, truth=truth, user=user, reply=reply, actions=actions))
    return out if ok else None


def _actions(reader: FieldReader, value: Any, field: str, tool_names: Sequence[str] | None) -> tuple[dict[str, Any], ...] | None:
    items = reader.items(value, field, what="a list of tool calls {name, arguments}")
    if items is None:
        return None
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        item_field = join(field, i)
        item = reader.mapping(item, item_field, required=("name",), optional=("arguments",), what="a tool call {name, arguments}")
        if item is None:
            return None
        name = reader.text(item, item_field, "name")
        arguments = item.get("arguments", {})
        if not isinstance(arguments, dict):
            reader.expected(join(item_field, "arguments"), "a mapping", arguments)
            return None
        if name is not None and tool_names is not None and name not in tool_names:
            known = ", ".join(tool_names) or "none (the role has no tools)"
            reader.problem(join(item_field, "name"), f"unknown tool '{name}'{suggest(name, tool_names)}: the role's tools are {known}")
            return None
        if name is None:
            return None
        out.append({"name": name, "arguments": {str(k): v for k, v in arguments.items()}})
    return tuple(out)
