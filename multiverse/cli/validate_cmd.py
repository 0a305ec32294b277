"""``multiverse validate PATH...``: check role, contract and experiment files.

Prints one ``path:line: field: message`` line per problem on stdout and exits 0
when every file is valid, 2 otherwise.  A file's kind comes from its content;
experiment files get every check of
:func:`multiverse.config.experiment.validate_experiment` (the ``sim:`` block, judge
kinds, standard and rule names included); a default a valid experiment relies on
that changes what runs (the monitor ``none`` beside a real user simulator) is
said on stderr in the same located form.  Nothing a file contains can make the command print a traceback: an
unexpected error while checking one file is reported as a problem of that file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from multiverse.cli._options import with_examples
from multiverse.config.located import Problem

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="spec files or folders (searched for *.yaml, *.yml)")
    with_examples(parser, "multiverse validate specs/ experiments/", "multiverse validate experiments/quickstart.yaml")


def main(args: argparse.Namespace) -> int:
    from multiverse.config.specs import spec_files, validate_path

    problems: list[Problem] = []
    n_files = 0
    for path in args.paths:
        n_files += sum(1 for _ in spec_files(path)) if Path(path).exists() else 0
        problems += validate_path(path)
    for problem in problems:
        print(problem)
    if problems:
        bad = len({p.path for p in problems})
        print(f"multiverse validate: {len(problems)} problem(s) in {bad} file(s)", file=sys.stderr)
        return 2
    for note in _notes(args.paths):
        print(note, file=sys.stderr)
    print(f"{n_files} spec file(s) valid", file=sys.stderr)
    return 0


def _notes(paths: list[str]) -> list[Problem]:
    """The located notes of every (valid) experiment file under ``paths``."""
    from multiverse.config.experiment import load_experiment
    from multiverse.config.located import load_located
    from multiverse.config.specs import spec_files, spec_kind

    return [
        note
        for path in paths
        for file in spec_files(path)
        if spec_kind(load_located(file).data) == "experiment"
        for note in load_experiment(file).notes
    ]
