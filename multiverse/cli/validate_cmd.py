"""``multiverse validate PATH...``: check role, contract and experiment files.

Prints one ``path:line: field: message`` line per problem on stdout and exits 0
when every file is valid, 2 otherwise.  A file's kind comes from its content;
experiment files are checked by :func:`multiverse.run.validate_experiment`
(:func:`multiverse.experiment.validate_file` plus the ``sim:`` block and judge
names), or by :func:`multiverse.experiment.validate_file` alone when the run
layer is not installed.
Nothing a file contains can make the command print a traceback: an unexpected
error while checking one file is reported as a problem of that file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from multiverse._yaml import Problem


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="spec files or folders (searched for *.yaml, *.yml)")


def _experiment_validator() -> Callable[[Path], list[Problem]]:
    try:
        from multiverse.run import validate_experiment

        return validate_experiment
    except ImportError:
        pass
    try:
        from multiverse.experiment import validate_file
    except ImportError as exc:
        reason = f"experiment files cannot be checked: {exc}"

        def unavailable(path: Path) -> list[Problem]:
            return [Problem(str(path), None, "", reason)]

        return unavailable
    return validate_file


def main(args: argparse.Namespace) -> int:
    from multiverse.specs import spec_files, validate_path

    experiment = _experiment_validator()
    problems: list[Problem] = []
    n_files = 0
    for path in args.paths:
        n_files += sum(1 for _ in spec_files(path)) if Path(path).exists() else 0
        problems += validate_path(path, experiment_validator=experiment)
    for problem in problems:
        print(problem)
    if problems:
        bad = len({p.path for p in problems})
        print(f"multiverse validate: {len(problems)} problem(s) in {bad} file(s)", file=sys.stderr)
        return 2
    print(f"{n_files} spec file(s) valid", file=sys.stderr)
    return 0
