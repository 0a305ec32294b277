"""``multiverse data``: fetch, verify and locate the public data sets.

Exit codes: 0 done; 1 ``verify`` found a file missing or corrupt; 2 bad input
(a mirror or ``--dest`` that is not a folder, a mirror lacking a file, a file
whose sha256 differs from the manifest's, an unknown name, ``path`` of a file
not fetched); 3 a download failed (what was fetched is kept: rerun to resume).
"""

from __future__ import annotations

import argparse
import sys
import urllib.error

from multiverse.cli._options import with_examples

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    fetch = actions.add_parser("fetch", help="Copy (from a mirror) or download every file, verifying its sha256.")
    fetch.add_argument("--mirror", help="a local folder with the data's layout (default: $MULTIVERSE_DATA_MIRROR)")
    fetch.add_argument("--dest", help="the data folder to fill (default: $MULTIVERSE_DATA_DIR, else data/ in the current project: the nearest folder up from here holding specs/roles, else ./data)")
    verify = actions.add_parser("verify", help="Check every fetched file against the manifest.")
    verify.add_argument("--dest", help="the data folder to check")
    where = actions.add_parser("path", help="Print the data folder, or the verified path of one file.")
    where.add_argument("name", nargs="?", help="a manifest path, e.g. tau-bench/historical_trajectories/gpt-4o-airline.json")
    where.add_argument("--dest", help="the data folder")
    with_examples(fetch, "multiverse data fetch --mirror ../shared/data", "multiverse data fetch --dest data")
    with_examples(verify, "multiverse data verify", "multiverse data verify --dest data")
    with_examples(where, "multiverse data path", "multiverse data path tau-bench/historical_trajectories/gpt-4o-airline.json")
    with_examples(parser, "multiverse data fetch --mirror ../shared/data", "multiverse data verify")


def main(args: argparse.Namespace) -> int:
    from multiverse import data

    try:
        if args.action == "fetch":
            outcomes: dict[str, str] = {}

            def report(name: str, outcome: str) -> None:
                outcomes[name] = outcome
                print(f"{outcome:10} {name}")

            folder = data.fetch(mirror=args.mirror, dest=args.dest, report=report)
            kept = sum(outcome != "skipped" for outcome in outcomes.values())
            print(f"{kept} of {len(outcomes)} files verified in {folder}")
            return 0
        if args.action == "verify":
            states = data.verify(dest=args.dest)
            for name, state in states.items():
                print(f"{state:8} {name}")
            return 0 if all(state == "ok" for state in states.values()) else 1
        print(data.path(args.name, dest=args.dest) if args.name else data.data_dir(args.dest))
        return 0
    except data.DataError as exc:
        print(f"multiverse data: {exc}", file=sys.stderr)
        return 2
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", None) or exc
        print(f"multiverse data: download failed ({reason}); files fetched so far are kept, rerun to resume",
              file=sys.stderr)
        return 3
