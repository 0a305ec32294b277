"""YAML loading that remembers where every key came from, and spec problems.

PyYAML's composed node tree already records each node's line; this module turns
that tree into plain Python values plus a map from key paths to line numbers, so
validators can say ``path:line: field: message`` without a second parser.

Limits keep any input cheap to refuse: a file over :data:`MAX_FILE_BYTES` is
refused before it is read, and the values a file expands to (aliases repeat
whole subtrees, so 1 KB can name billions of values) are counted while they are
built, stopping at :data:`MAX_VALUES`; nesting deeper than Python's recursion
limit is refused too.  Each is one :class:`Problem`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from multiverse.core.files import InputFileError, read_regular


@dataclass(frozen=True)
class Problem:
    """One problem in a spec file, printed as ``path:line: field: message``."""

    path: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        line = "-" if self.line is None else str(self.line)
        return f"{self.path}:{line}: {_visible(self.field) or '<file>'}: {_visible(self.message)}"


def _visible(text: str) -> str:
    """``text`` with every character that does not print (controls, zero-width and direction marks) escaped.

    A key of a user's file can hold them; printed raw, a right-to-left override
    would reorder the rest of the line on a terminal.
    """
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


class SpecError(ValueError):
    """Raised when a spec file has problems; carries every :class:`Problem`."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(frozen=True)
class Located:
    """Parsed YAML data together with the line of every key path.

    ``lines`` maps a dotted field path (``principles.2.criteria.breach``) to the
    1-based line where that key or item starts.
    """

    data: Any
    lines: dict[str, int]
    path: str

    def line(self, field: str) -> int | None:
        """Line of ``field``, or of its nearest enclosing field that has one."""
        while field:
            if field in self.lines:
                return self.lines[field]
            field = field.rpartition(".")[0]
        return self.lines.get("", 1)

    def problem(self, field: str, message: str) -> Problem:
        """A :class:`Problem` located at ``field``."""
        return Problem(self.path, self.line(field), field, message)


MAX_FILE_BYTES = 262_144
"""Largest spec file read (256 KiB, nine times the largest shipped role); a larger one is refused at once."""
MAX_VALUES = 200_000
"""Most values (mapping keys, items and scalars, aliases expanded) one file may hold."""


class _TooManyValues(Exception):
    """The file expands past :data:`MAX_VALUES` values."""


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's C loader when PyYAML was built with it (about ten times faster), else the pure one."""


class _DuplicateKey(Exception):
    """A mapping key met twice: its dotted field, its line and the line of its first use.

    Keys are compared as text, as every reader of the data compares them:
    ``1`` and ``"1"`` are one key (YAML tells them apart, a label cannot).
    """

    def __init__(self, key: Any, field: str, line: int, first: int):
        super().__init__(field)
        self.key, self.field, self.line, self.first = key, field, line, first


def _to_python(node: yaml.Node, prefix: str, lines: dict[str, int], construct: Any, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooManyValues
    lines.setdefault(prefix, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        first_lines: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = construct(key_node)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, "found unhashable key", key_node.start_mark
                ) from None
            field = f"{prefix}.{key}" if prefix else str(key)
            line = key_node.start_mark.line + 1
            if str(key) in first_lines:
                raise _DuplicateKey(key, field, line, first_lines[str(key)])
            first_lines[str(key)] = lines[field] = line
            out[key] = _to_python(value_node, field, lines, construct, budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [
            _to_python(item, f"{prefix}.{i}" if prefix else str(i), lines, construct, budget)
            for i, item in enumerate(node.value)
        ]
    return construct(node)


def load_located(path: str | Path) -> Located:
    """Read a YAML file into :class:`Located` data.

    Raises
    ------
    SpecError
        With one :class:`Problem` when the file is unreadable, not a regular
        file (a FIFO or device is refused before reading), not UTF-8, over
        :data:`MAX_FILE_BYTES`, empty, not YAML (a control character is named
        with its line and column), past :data:`MAX_VALUES` or
        nested too deeply, or has a duplicate mapping key (the problem then
        names the key's dotted field, ``roles.triage``, and the line of its
        first use).
    """
    path_str = str(path)
    try:
        raw = read_regular(path, limit=MAX_FILE_BYTES, what="spec file")
    except InputFileError as exc:
        message = str(exc).removeprefix(f"{path_str}: ")
        if "too large" in message:
            message = f"file too large: a spec file may hold at most {MAX_FILE_BYTES:,} bytes"
        raise SpecError([Problem(path_str, None, "", message)]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError([Problem(path_str, line, "", f"not UTF-8 text (byte {exc.start})")]) from None
    return parse_located(text, path_str)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of character ``offset`` of ``text``."""
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def parse_located(text: str, path: str = "<string>") -> Located:
    """Parse YAML text into :class:`Located` data (see :func:`load_located`)."""
    try:
        node = yaml.compose(text, Loader=_Loader)
        if node is None:
            raise SpecError([Problem(path, 1, "", "empty file: expected a YAML mapping")])
        lines: dict[str, int] = {}
        constructor = yaml.constructor.SafeConstructor()
        data = _to_python(node, "", lines, lambda n: constructor.construct_object(n, deep=True), [MAX_VALUES])
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise SpecError([Problem(path, line, "", f"invalid YAML: {_one_line(exc.problem or exc.context)}")]) from None
    except yaml.reader.ReaderError as exc:
        line, column = _position(text, exc.position)
        message = f"invalid YAML: control character #x{exc.character:04x} at column {column} (not allowed in YAML)"
        raise SpecError([Problem(path, line, "", message)]) from None
    except yaml.YAMLError as exc:
        raise SpecError([Problem(path, None, "", f"invalid YAML: {_one_line(exc)}")]) from None
    except _TooManyValues:
        message = f"too many values: aliases expand this file past {MAX_VALUES:,} values"
        raise SpecError([Problem(path, None, "", message)]) from None
    except RecursionError:
        raise SpecError([Problem(path, None, "", "nested too deeply")]) from None
    except SpecError:
        raise
    except (ValueError, OverflowError) as exc:
        # e.g. a timestamp or number PyYAML's constructor cannot build
        raise SpecError([Problem(path, None, "", f"invalid YAML value: {' '.join(str(exc).split())[:120]}")]) from None
    except _DuplicateKey as dup:
        message = f"duplicate key '{dup.key}' (first at line {dup.first})"
        raise SpecError([Problem(path, dup.line, dup.field, message)]) from None
    return Located(data=data, lines=lines, path=path)
