"""``multiverse run EXPERIMENT.yaml --out DIR [--cache DIR]``: run an experiment into a cube.

Writes ``DIR/cube.nc``, ``DIR/run.json`` and ``DIR/transcripts.sqlite``,
replacing earlier outputs in ``DIR`` atomically.  Exit 0 when the run completes
(recorded failures included), 2 for an invalid experiment or a refused ``--out``
(anything but a missing or empty folder or an earlier run's output, or a folder
that is or holds the cache, the experiment, the specs or the working directory;
checked before any call), 3 when a spend cap or an offline cache miss stopped
the run, 130 when interrupted (rerun to resume).
"""

from __future__ import annotations

import argparse
import json
import sys

from multiverse.cli._options import JOBLIB_BACKENDS, positive_int

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment", metavar="EXPERIMENT.yaml", help="the experiment file")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (replaced as a whole)")
    parser.add_argument("--cache", metavar="DIR", help="model-call cache folder (default: the file's cache:)")
    parser.add_argument("--backend", choices=JOBLIB_BACKENDS, help="joblib backend to spread rollouts over (loky, threading, dask, ray)")
    parser.add_argument("--jobs", type=positive_int, metavar="N", help="workers for --backend")
    parser.add_argument("--offline", action="store_true", help="answer only from the cache (sim models too); a miss stops the run")
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="rebuild every rollout from its cached responses instead of reusing stored replays of unchanged ones",
    )


def main(args: argparse.Namespace) -> int:
    from multiverse._yaml import SpecError
    from multiverse.llm import RunStopped
    from multiverse.run import run

    try:
        cube = run(
            args.experiment,
            out=args.out,
            cache=args.cache,
            backend=args.backend,
            n_jobs=args.jobs,
            offline=args.offline,
            replay=not args.rebuild,
        )
    except SpecError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    except RunStopped as exc:
        print(f"multiverse run: stopped: {exc}", file=sys.stderr)
        return 3
    info = json.loads(cube.attrs["run"])
    failures = ", ".join(f"{reason} {n}" for reason, n in info["failures"].items()) or "none"
    print(
        f"{args.out}: {info['layers']['conversations']} conversations, {info['layers']['judgments']} judge cells; "
        f"{info['calls']} calls, {info['cache_hits']} cache hits, failures: {failures}; {info['wall_s']:.1f} s"
    )
    return 0
