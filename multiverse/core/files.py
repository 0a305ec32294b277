"""Reading input files safely: regular files only, under a size cap, and strict JSON (stdlib only).

Every input a command reads (spec and experiment files, case files, label
files, gate files, a run's side files) goes through :func:`read_regular`: a
FIFO, a device or a socket is refused at once (the file is opened without
blocking and checked before a byte is read, so ``/dev/zero`` or a pipe never
hangs a command), and a file over its cap is refused after reading at most
one byte past it.  :func:`loads_strict` decodes JSON as the formats define it:
no ``NaN`` or ``Infinity``, and no key repeated within an object (the standard
library keeps the last silently).
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

__all__ = ["InputFileError", "MAX_INPUT_BYTES", "STRICT_JSON", "loads_strict", "read_regular"]

MAX_INPUT_BYTES = 1 << 30
"""Default cap of one input file (1 GiB): far above any case, label or rollout file the library reads."""

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class InputFileError(ValueError):
    """An input file that cannot be read: not a regular file, too large, unreadable.  One line, naming the file."""


def read_regular(path: str | os.PathLike[str], *, limit: int = MAX_INPUT_BYTES, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Parameters
    ----------
    path
        The file.
    limit
        Most bytes accepted; a larger file is refused after reading ``limit + 1``.
    what
        What the file is, for the message (``"spec file"``, ``"case file"``).

    Raises
    ------
    InputFileError
        If the file is missing, unreadable, not a regular file (a folder, FIFO,
        device or socket, refused before reading) or over ``limit``.
    """
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InputFileError(f"{name}: cannot read the {what} ({exc.strerror or type(exc).__name__})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((label for test, label in _KINDS if test(mode)), "not a regular file")
            raise InputFileError(f"{name}: cannot read the {what}: it is {kind}, not a regular file")
        chunks, size = [], 0
        while size <= limit:
            block = os.read(fd, min(1 << 20, limit + 1 - size))
            if not block:
                break
            chunks.append(block)
            size += len(block)
    except OSError as exc:
        raise InputFileError(f"{name}: cannot read the {what} ({exc.strerror or type(exc).__name__})") from None
    finally:
        os.close(fd)
    if size > limit:
        raise InputFileError(f"{name}: {what} too large: at most {limit:,} bytes are read")
    return b"".join(chunks)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r} in one object")
            seen.add(key)
    return mapping


STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
"""The decoder of :func:`loads_strict` (``raw_decode`` for a value inside a longer text)."""


def loads_strict(text: str) -> Any:
    """``json.loads`` with no ``NaN``/``Infinity`` and no key repeated within an object.

    Raises
    ------
    json.JSONDecodeError
        For text that is not JSON.
    ValueError
        For a non-finite constant or a repeated key (the message names it).
    RecursionError
        For nesting deeper than the interpreter's recursion limit.

    Examples
    --------
    >>> loads_strict('{"a": 1, "b": [1, 2]}')
    {'a': 1, 'b': [1, 2]}
    >>> loads_strict('{"a": 1, "a": 2}')
    Traceback (most recent call last):
    ValueError: duplicate key 'a' in one object
    """
    return STRICT_JSON.decode(text)

