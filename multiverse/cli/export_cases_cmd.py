"""``multiverse export-cases RUN --out DIR``: one case JSON per conversation of a role with a contract.

Each written file runs through ``multiverse inspect`` (and the pytest plugin's
``*.case.json`` collection) with its lane.  ``--out`` follows the output-folder
rule of every command that writes (:mod:`multiverse.core.outputs`): missing,
empty or an earlier ``export-cases`` output (what that did not write stays),
never the run folder, checked before anything is read.  Prints one line per
file written and a closing count; exits 0, or 2 (one line on stderr) when RUN is
not a run folder, its cube or transcript store is damaged, a role cannot be
loaded or ``--out`` is refused.
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
    except SpecError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    except (FileNotFoundError, KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"multiverse export-cases: {message}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    print(f"{len(written)} cases written to {args.out}")
    return 0
