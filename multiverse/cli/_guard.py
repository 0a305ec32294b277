"""How every subcommand ends: documented exit codes, one-line errors, no traceback, no secret.

:func:`run_command` runs a subcommand's ``main`` and turns what it raises into
one line on stderr and an exit code:

====  =========================================================================
code  meaning
====  =========================================================================
0     success
1     a violation or a blocking result (e.g. ``inspect`` on a violating case)
2     bad input: an invalid spec, a refused or unwritable output folder, an
      unusable cache, a damaged cube or transcript store, an input that is not
      a regular file or is too large, a full disk, a bad option value
      (:class:`CommandError`, :data:`BAD_INPUT`)
3     stopped short, resumable: a spend cap or an offline cache miss
70    an internal error (a bug, never a verdict on the input): one line naming
      the file the redacted traceback was written to (:func:`write_traceback`);
      ``EX_SOFTWARE`` of ``sysexits.h``, so it cannot be read as a violation
130   interrupted (Ctrl-C, SIGINT): one line saying how to resume
143   terminated (SIGTERM, 128 + 15): ends as Ctrl-C does, staging folders
      removed, one line saying how to resume
====  =========================================================================

While the command runs, everything it prints goes through
:func:`multiverse.llm.redact.redact` (secrets in URLs, headers, tokens, the
environment's keys), line by line; ``inspect`` is left out, as its fixed output
is the case file's own content and it must start fast.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, TextIO

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_STOPPED",
    "EXIT_TERMINATED",
    "BAD_INPUT",
    "CommandError",
    "Terminated",
    "report_failure",
    "run_command",
    "write_traceback",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_STOPPED = 3
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
UNREDACTED_COMMANDS = frozenset({"inspect"})
"""Commands whose output is not passed through the redaction (see the module docstring)."""
RESUME_HINTS = {
    "run": "every finished model call is cached; rerun the same command to resume",
}


BAD_INPUT: tuple[tuple[str, str], ...] = (
    ("multiverse.core.outputs", "OutputDirError"),
    ("multiverse.llm.cache", "CacheError"),
    ("multiverse.cube.integrity", "DamagedStoreError"),
    ("multiverse.core.transcript", "StoreError"),
    ("multiverse.core.files", "InputFileError"),
    ("multiverse.llm.credentials", "MissingCredentials"),
    ("multiverse.contract._rules", "CaseFormatError"),
    ("multiverse.view.site", "SiteError"),
    ("multiverse.data", "DataError"),
    ("multiverse._run.backends", "BackendError"),
)
"""``(module, exception)`` raised on bad input, wherever a command lets them through: exit 2 with their one line."""


class Terminated(KeyboardInterrupt):
    """SIGTERM: the command was stopped as on Ctrl-C (staging removed) and ends with exit 143."""


_terminated = threading.Event()


def _terminate(signum: int, frame: Any) -> None:
    """SIGTERM stops the command as Ctrl-C does.

    Inside asyncio's runner its SIGINT handler is called (it cancels the main
    task, and the runner raises ``KeyboardInterrupt`` where it runs); elsewhere
    :class:`Terminated` is raised at once.  Raising a plain
    ``KeyboardInterrupt`` from here could land inside code run by ``exec`` (a
    dataclass being built during an import), which makes CPython end the
    process by SIGINT after it returned 143.
    """
    _terminated.set()
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not signal.default_int_handler:
        handler(signal.SIGINT, frame)
    else:
        raise Terminated


class CommandError(Exception):
    """A failure a command reports as one line (``multiverse <command>: <message>``) and an exit code."""

    def __init__(self, message: str, *, code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(" ".join(str(message).split()))
        self.code = code


class _RedactingStream:
    """A text stream that redacts each complete line (ended by ``\n`` or ``\r``) before passing it on.

    What follows the last line end waits for the next write or ``flush``, so a
    secret split over two writes is still seen whole.
    """

    def __init__(self, stream: TextIO, redact: Callable[[str], str]) -> None:
        self._stream = stream
        self._redact = redact
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        end = max(self._pending.rfind("\n"), self._pending.rfind("\r")) + 1  # progress bars redraw with \r
        if end:
            self._stream.write(self._redact(self._pending[:end]))
            self._pending = self._pending[end:]
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._stream.write(self._redact(self._pending))
            self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _loaded_type(module: str, name: str) -> type | None:
    """``module.name`` if that module is already imported (an exception of it cannot arise otherwise)."""
    found = sys.modules.get(module)
    return getattr(found, name, None) if found is not None else None


def _is(exc: BaseException, module: str, name: str) -> bool:
    kind = _loaded_type(module, name)
    return kind is not None and isinstance(exc, kind)


def write_traceback(command: str, exc: BaseException) -> str:
    """Write ``exc``'s traceback, redacted, to a new file in the temp folder; return its path."""
    from multiverse.llm.redact import redact

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    handle, path = tempfile.mkstemp(prefix=f"multiverse-{command}-error-{stamp}-", suffix=".txt")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(redact(text))
    return path


def _say(command: str, message: object) -> None:
    print(f"multiverse {command}: {' '.join(str(message).split())}", file=sys.stderr)


def report_failure(command: str, exc: BaseException) -> int:
    """Report ``exc``, raised by ``command``, as one documented line on stderr; return the exit code."""
    if isinstance(exc, KeyboardInterrupt):
        hint = RESUME_HINTS.get(command)
        stopped = isinstance(exc, Terminated) or _terminated.is_set()
        what, code = ("terminated", EXIT_TERMINATED) if stopped else ("interrupted", EXIT_INTERRUPTED)
        _say(command, f"{what}{f'; {hint}' if hint else ''}")
        return code
    if isinstance(exc, CommandError):
        _say(command, exc)
        return exc.code
    if _is(exc, "multiverse.config.located", "SpecError"):
        for problem in exc.problems:  # type: ignore[attr-defined]
            print(problem, file=sys.stderr)
        return EXIT_BAD_INPUT
    if _is(exc, "multiverse.llm.errors", "RunStopped"):
        _say(command, f"stopped: {exc}")
        return EXIT_STOPPED
    if any(_is(exc, module, name) for module, name in BAD_INPUT):
        _say(command, exc)
        return EXIT_BAD_INPUT
    if isinstance(exc, OSError) and exc.errno is not None:  # the machine refused: a full disk, a missing file
        where = f" ({exc.filename})" if exc.filename else ""
        _say(command, f"{exc.strerror or type(exc).__name__}{where}")
        return EXIT_BAD_INPUT
    try:
        path = write_traceback(command, exc)
    except OSError as error:
        path = f"(not written: {error.strerror})"
    _say(command, f"internal error ({type(exc).__name__}: {str(exc)[:200]}); traceback in {path}")
    return EXIT_INTERNAL


def _install(signum: int, handler: Any) -> Any:
    """Install a signal handler from the main thread; return the previous one (``None`` elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signum, handler)


def run_command(command: str, main: Callable[[argparse.Namespace], int | None], args: argparse.Namespace) -> int:
    """Run a subcommand's ``main(args)`` and return its exit code (see the module docstring).

    SIGTERM takes the path of Ctrl-C while the command runs (the SIGINT
    handler in force is called, asyncio's runner's included), so it ends as
    Ctrl-C does, with exit 143 instead of 130.
    """
    streams = (sys.stdout, sys.stderr)
    if command not in UNREDACTED_COMMANDS:
        from multiverse.llm.redact import redact

        sys.stdout, sys.stderr = _RedactingStream(sys.stdout, redact), _RedactingStream(sys.stderr, redact)
    _terminated.clear()
    previous = _install(signal.SIGTERM, _terminate)
    try:
        return int(main(args) or 0)
    except BrokenPipeError:
        raise
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001  every failure ends as one documented line
        return report_failure(command, exc)
    finally:
        if previous is not None:
            _install(signal.SIGTERM, previous)
        if sys.stdout is not streams[0]:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except ValueError:  # closed by the command
                    pass
            sys.stdout, sys.stderr = streams
