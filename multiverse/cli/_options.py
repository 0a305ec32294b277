"""Argument types shared by the subcommands: a bad value is an argparse error (one line, exit 2)."""

from __future__ import annotations

import argparse
import math

__all__ = [
    "JOBLIB_BACKENDS", "OneLineParser", "non_negative_float", "non_negative_int", "port_number", "positive_int",
    "share", "with_examples",
]

JOBLIB_BACKENDS = ("loky", "threading", "multiprocessing", "sequential", "dask", "ray")
"""The joblib backends ``multiverse run --backend`` accepts."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit 2), naming the command and ``--help``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    """An integer >= 1 (``--jobs``, ``--n-boot``), else an argparse error naming the value."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """An integer >= 0 (``--max-calls``), else an argparse error naming the value."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def port_number(text: str) -> int:
    """A TCP port, 0 (a free one) to 65535 (``serve-local --port``), else an argparse error naming the value."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {text!r}")
    return value


def _finite(text: str, expected: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number >= 0 (``--max-cost``): ``nan`` and ``inf`` are errors, not caps that never bind."""
    value = _finite(text, "a finite number >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def share(text: str) -> float:
    """A finite share in [0, 1] (``--max-failed-share``): ``nan`` would turn the check off, so it is an error."""
    value = _finite(text, "a share between 0 and 1")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1, got {text!r}")
    return value


def with_examples(parser: argparse.ArgumentParser, *commands: str) -> None:
    """End ``parser``'s ``--help`` with ``commands``, runnable as written from the repository's root.

    The epilog is printed verbatim (``RawDescriptionHelpFormatter``), one
    command a line under ``examples:``; ``tests/cli`` parses each with the
    command's own parser and checks the files it names exist.
    """
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "examples:\n" + "\n".join(f"  {command}" for command in commands)
