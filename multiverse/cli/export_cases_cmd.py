"""``multiverse export-cases RUN --out DIR``: one case JSON per conversation of a role with a contract.

Each written file runs through ``multiverse inspect`` (and the pytest plugin's
``*.case.json`` collection) with its lane.  Prints one line per file written and
a closing count; exits 0, or 2 (one line on stderr) when RUN is not a run folder
or a role cannot be loaded.
"""

from __future__ import annotations

import argparse
import sys

from multiverse.cli._options import with_examples


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.add_argument("run", metavar="RUN", help="a run folder written by multiverse run")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write the case files into")
    parser.add_argument("--specs", metavar="DIR", help="folder holding roles/ and contracts/ (default: found as run finds it)")
    with_examples(parser, "multiverse export-cases runs/quickstart --out runs/quickstart-cases",
                  "multiverse export-cases runs/quickstart --out runs/quickstart-cases --specs specs")


def main(args: argparse.Namespace) -> int:
    from multiverse._run.export import export_cases
    from multiverse.config.located import SpecError

    try:
        written = export_cases(args.run, out=args.out, specs_dir=args.specs)
    except (FileNotFoundError, SpecError, KeyError) as exc:
        print(f"multiverse export-cases: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    print(f"{len(written)} cases written to {args.out}")
    return 0
