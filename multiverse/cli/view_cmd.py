"""``multiverse view RUN_OR_CUBE --out DIR [--open]``: a static HTML viewer of a run or cube.

Writes a self-contained site (no server, no network) and prints the tests of
the specification curve (the lines ``multiverse report`` prints, from the same
analyses kept beside the cube), then the path of its ``index.html``.  ``--out``
follows the output-folder rule of every command that writes
(:mod:`multiverse.core.outputs`): missing, empty or an earlier site (what that
did not write stays), checked before anything is read.  Exit 0 when written, 2
on bad input (no cube, a damaged cube or transcript store, a refused output
folder).
"""

from __future__ import annotations

import argparse
import sys
import webbrowser

from multiverse.analysis import N_BOOT
from multiverse.cli._options import with_examples


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cube", metavar="RUN_OR_CUBE", help="a run folder or a cube file (.nc/.zarr)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder of the site (replaced when written by view before)")
    parser.add_argument("--open", action="store_true", help="open the index in the default browser")
    parser.add_argument("--transcripts", metavar="PATH", help="transcript store (default: beside the cube)")
    parser.add_argument("--specs", metavar="DIR", help="roles and contracts (default: the experiment's)")
    parser.add_argument("--no-figures", action="store_true", help="skip the report's figures (faster on large cubes)")
    parser.add_argument("--n-boot", type=int, default=N_BOOT,
                        help=f"resampling draws of the figures (default {N_BOOT}, as multiverse report)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every resampling (default 0)")
    with_examples(parser, "multiverse view runs/quickstart --out runs/quickstart-site",
                  "multiverse view runs/quickstart --out runs/quickstart-site --no-figures --open")


def main(args: argparse.Namespace) -> int:
    from multiverse.view import SiteError, write_site

    if args.n_boot < 1:
        print(f"multiverse view: --n-boot: expected a positive integer, got {args.n_boot}", file=sys.stderr)
        return 2
    try:
        index = write_site(args.cube, args.out, transcripts=args.transcripts, specs_dir=args.specs,
                           figures=not args.no_figures, n_boot=args.n_boot, seed=args.seed, log=print, progress=True)
    except (FileNotFoundError, SiteError, OSError, ValueError) as exc:
        print(f"multiverse view: {exc}", file=sys.stderr)
        return 2
    print(index)
    if args.open:
        webbrowser.open(index.resolve().as_uri())
    return 0
