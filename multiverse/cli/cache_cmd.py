"""``multiverse cache audit [--cache DIR] [--json]``: what the model-call cache holds.

Lists entries by model and by the library versions that wrote them, with the
size on disk.  It only reads: the database is opened read-only, so it is never
wiped, rewritten or upgraded.  A missing, unreadable, corrupt or newer-layout
cache is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from multiverse.cli._options import with_examples

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    audit = actions.add_parser("audit", help="entries by model and by library version, size on disk")
    audit.add_argument("--cache", metavar="DIR", help="cache folder (default: $MULTIVERSE_CACHE or .cache/multiverse)")
    audit.add_argument("--json", action="store_true", help="print the audit as JSON")
    with_examples(audit, "multiverse cache audit", "multiverse cache audit --cache .cache/multiverse --json")
    with_examples(parser, "multiverse cache audit", "multiverse cache audit --json")


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from multiverse.llm.audit import audit_cache
    from multiverse.llm.cache import CacheError, default_cache_dir

    directory = Path(args.cache) if args.cache else default_cache_dir()
    try:
        report = audit_cache(directory)
    except CacheError as exc:
        print(f"multiverse cache: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    span = f", {report['oldest']} to {report['newest']}" if report["entries"] else ""
    print(
        f"cache {report['path']}: {report['entries']} entries, {report['replays']} replays, "
        f"{_size(report['size_bytes'])}{span}"
    )
    for title, counts in (("by model", report["by_model"]), ("by library version", report["by_version"])):
        print(title)
        width = max((len(name) for name in counts), default=0)
        for name, n in counts.items():
            print(f"  {name:<{width}}  {n:>9}")
    return 0
