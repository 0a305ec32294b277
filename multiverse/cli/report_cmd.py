"""``multiverse report CUBE --out DIR``: every applicable figure (PNG) and a summary table.

Reads an existing cube (a ``.nc`` file, ``.zarr`` folder or run folder) and
calls no model.  Analyses the cube cannot support are skipped with a one-line note.
``--out`` follows the output-folder rule of every command that writes
(:mod:`multiverse.core.outputs`): it must be missing, empty or an earlier
report (what that report did not write stays), and is checked before anything
is computed; exit 2 otherwise.  The analyses are kept beside the cube
(``cube.analyses.nc``), so ``multiverse view`` on the same cube draws the same
figures and prints the same p-values without analysing it again; a changed cube
is analysed afresh.  Figures are PNG unless ``--format`` asks for others (``pdf``,
``svg``, repeatable): each format is a second rendering of every figure, and PDF
the costliest (its fonts are embedded), so it is written only when asked for.
"""

from __future__ import annotations

import argparse
import sys

from multiverse.analysis import N_BOOT
from multiverse.cli._options import positive_int, with_examples

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cube", metavar="CUBE", help="a cube file (.nc/.zarr) or a run folder")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for figures and tables")
    parser.add_argument("--n-boot", type=positive_int, default=N_BOOT, help=f"resampling draws (default {N_BOOT})")
    parser.add_argument("--seed", type=int, default=0, help="seed of every resampling (default 0)")
    parser.add_argument("--format", dest="formats", action="append", choices=("png", "pdf", "svg"),
                        help="figure format, repeatable (default: png)")
    with_examples(parser, "multiverse report runs/quickstart --out runs/quickstart-report",
                  "multiverse report runs/quickstart/cube.nc --out runs/quickstart-report --format png --format pdf")


def main(args: argparse.Namespace) -> int:
    from multiverse.analysis.overview_cache import cached_overview
    from multiverse.core.outputs import check_output_dir

    try:
        check_output_dir(args.out, kind="report", protected={"the cube": args.cube})
        cube, analyses = cached_overview(args.cube, n_boot=args.n_boot, seed=args.seed, progress=True)
    except (FileNotFoundError, OSError, ValueError) as exc:
        print(f"multiverse report: {exc}", file=sys.stderr)
        return 2
    import matplotlib

    matplotlib.use("Agg")
    from multiverse.report import write_report

    report = write_report(cube, args.out, formats=tuple(args.formats or ("png",)), log=print, analyses=analyses)
    print(f"wrote {len(report.figures)} figure files and {len(report.tables)} tables to {report.out}")
    return 0
