"""``multiverse export RUN --format parquet --out DIR``: a run's judgments and conversations as parquet.

Writes ``judgments.parquet`` (:func:`multiverse.to_long` of the cube),
``judges.parquet`` and, when the run has a transcript store,
``conversations.parquet`` (one row per event), readable by pandas and by
``datasets.load_dataset("parquet", data_files=...)``; the schema is in
``docs/export.md``.  Prints one line per file; exits 0, or 2 (one line on
stderr) when RUN holds no cube or DIR must not be replaced.
"""

from __future__ import annotations

import argparse
import sys

from multiverse.cli._options import with_examples

FORMATS = ("parquet",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.add_argument("run", metavar="RUN", help="a run folder, or a cube file with transcripts.sqlite beside it")
    parser.add_argument("--format", choices=FORMATS, default="parquet", help="the file format (parquet)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write the files into")
    with_examples(parser, "multiverse export runs/quickstart --format parquet --out runs/quickstart-parquet")


def main(args: argparse.Namespace) -> int:
    from multiverse.adapters.parquet_export import export_parquet

    try:
        counts = export_parquet(args.run, out=args.out)
    except (FileNotFoundError, ValueError) as exc:
        print(f"multiverse export: {exc}", file=sys.stderr)
        return 2
    for name, rows in counts.items():
        print(f"{args.out}/{name}: {rows} rows")
    if "conversations.parquet" not in counts:
        print(f"{args.run}: no transcripts.sqlite beside the cube; conversations not exported")
    return 0
