"""Argument types shared by the subcommands: a bad value is an argparse error (one line, exit 2)."""

from __future__ import annotations

import argparse

__all__ = ["positive_int", "with_examples", "JOBLIB_BACKENDS"]

JOBLIB_BACKENDS = ("loky", "threading", "multiprocessing", "sequential", "dask", "ray")
"""The joblib backends ``multiverse run --backend`` accepts."""


def positive_int(text: str) -> int:
    """An integer >= 1 (``--jobs``, ``--n-boot``), else an argparse error naming the value."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def with_examples(parser: argparse.ArgumentParser, *commands: str) -> None:
    """End ``parser``'s ``--help`` with ``commands``, runnable as written from the repository's root.

    The epilog is printed verbatim (``RawDescriptionHelpFormatter``), one
    command a line under ``examples:``; ``tests/cli`` parses each with the
    command's own parser and checks the files it names exist.
    """
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "examples:\n" + "\n".join(f"  {command}" for command in commands)
