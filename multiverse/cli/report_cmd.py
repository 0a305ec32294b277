"""``multiverse report CUBE --out DIR``: every applicable figure (PNG + PDF) and a summary table.

Reads an existing cube (a ``.nc`` file, ``.zarr`` folder or run folder) and
calls no model.  Analyses the cube cannot support are skipped with a one-line note.
``--out`` follows the output-folder rule of ``multiverse run``
(:func:`multiverse.cube.io.check_output_dir`): it must be missing, empty or an
earlier report, and is checked before anything is computed; exit 2 otherwise.
"""

from __future__ import annotations

import argparse
import sys

from multiverse.cli._options import positive_int, with_examples

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cube", metavar="CUBE", help="a cube file (.nc/.zarr) or a run folder")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for figures and tables")
    parser.add_argument("--n-boot", type=positive_int, default=500, help="resampling draws (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every resampling (default 0)")
    parser.add_argument("--format", dest="formats", action="append", choices=("png", "pdf", "svg"),
                        help="figure format, repeatable (default: png and pdf)")
    with_examples(parser, "multiverse report runs/quickstart --out runs/quickstart-report",
                  "multiverse report runs/quickstart/cube.nc --out runs/quickstart-report --format svg")


def main(args: argparse.Namespace) -> int:
    from multiverse.cube.build import check_cube
    from multiverse.cube.io import check_output_dir, open_cube

    try:
        cube = open_cube(args.cube, lazy=False)
        check_cube(cube)
        check_output_dir(args.out, kind="report", protected={"the cube": args.cube})
    except (FileNotFoundError, OSError, ValueError) as exc:
        print(f"multiverse report: {exc}", file=sys.stderr)
        return 2
    import matplotlib

    matplotlib.use("Agg")
    from multiverse.report import write_report

    report = write_report(cube, args.out, n_boot=args.n_boot, seed=args.seed,
                          formats=tuple(args.formats or ("png", "pdf")), log=print)
    print(f"wrote {len(report.figures)} figure files and {len(report.tables)} tables to {report.out}")
    return 0
