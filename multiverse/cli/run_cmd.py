"""``multiverse run EXPERIMENT.yaml --out DIR [--cache DIR]``: run an experiment into a cube.

Writes ``DIR/cube.nc``, ``DIR/run.json`` and ``DIR/transcripts.sqlite``,
replacing earlier outputs in ``DIR`` atomically.  Exit 0 when the run completes
(recorded failures included), 2 for an invalid experiment, a refused ``--out``
(anything but a missing or empty folder or an earlier run's output, or a folder
that is or holds the cache, the experiment, the specs or the working directory;
checked before any call) or a real model that cannot be called: litellm not
installed, a model string naming no provider, missing credentials (checked before
any call and before litellm is imported), 3 when a spend cap or an offline cache miss stopped the run, or when
more than ``--max-failed-share`` of the conversations failed (outputs written;
rerun to resume), 130 when interrupted (rerun to resume).  Progress goes to
stderr, one bar per layer, when it is a terminal and ``--quiet`` is not given.
"""

from __future__ import annotations

import argparse
import sys

from multiverse.cli._options import (
    JOBLIB_BACKENDS, non_negative_float, non_negative_int, positive_int, share, with_examples,
)

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
    parser.add_argument("--max-calls", type=non_negative_int, metavar="N",
                        help="stop before request N+1 (replaces the file's max_calls)")
    parser.add_argument("--max-cost", type=non_negative_float, metavar="USD",
                        help="stop once this much is spent (replaces max_cost_usd)")
    parser.add_argument(
        "--max-failed-share",
        type=share,
        default=0.5,
        metavar="F",
        help="exit 3 when more than this share of conversations failed (default 0.5)",
    )
    parser.add_argument(
        "--require-judge-signal",
        action="store_true",
        help="judge the roles' canaries first and refuse (exit 2) to report from a judge whose pooled "
        "canary results are indistinguishable from chance or below the canaries: floor",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument(
        "--until-precision",
        action="store_true",
        help="add items in batches until the precision: block's target is met (an interval valid at every look)",
    )
    parser.add_argument("--pilot", metavar="RUN", help="with --until-precision: a pilot run whose variances tune the bets")
    with_examples(parser, "multiverse run experiments/quickstart.yaml --out runs/quickstart",
                  "multiverse run experiments/quickstart.yaml --out runs/quickstart --offline --quiet")


def main(args: argparse.Namespace) -> int:
    from multiverse._run import run
    from multiverse._run.progress import progress_wanted
    from multiverse._run.runner import failed_share
    from multiverse.cli._sequential import TargetError
    from multiverse.config.located import SpecError
    from multiverse.cube.canaries import NoJudgeSignal, describe_pooled
    from multiverse.llm import RunStopped
    from multiverse.llm.credentials import ModelNotCallable

    try:
        if args.until_precision:
            from multiverse.cli._sequential import run_until_precision_cmd

            cube = run_until_precision_cmd(args, options=dict(
                out=args.out, cache=args.cache, backend=args.backend, n_jobs=args.jobs, offline=args.offline,
                replay=not args.rebuild,
                max_calls=args.max_calls, max_cost_usd=args.max_cost, require_judge_signal=args.require_judge_signal,
            ))
        else:
            cube = run(
                args.experiment,
                out=args.out,
                cache=args.cache,
                backend=args.backend,
                n_jobs=args.jobs,
                offline=args.offline,
                replay=not args.rebuild,
                max_calls=args.max_calls,
                max_cost_usd=args.max_cost,
                progress=progress_wanted(quiet=args.quiet),
                require_judge_signal=args.require_judge_signal,
            )
    except ModelNotCallable as exc:
        print(f"multiverse run: {exc}", file=sys.stderr)
        return 2
    except TargetError as exc:
        print(f"multiverse run: {exc}", file=sys.stderr)
        return 2
    except SpecError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    except NoJudgeSignal as exc:
        for judge, result in exc.judges.items():
            print(f"multiverse run: refused: no signal on the canaries: {describe_pooled(judge, result)}", file=sys.stderr)
        return 2
    except RunStopped as exc:
        print(f"multiverse run: stopped: {exc}", file=sys.stderr)
        return 3
    info = cube.attrs["run"]
    failures = ", ".join(f"{reason} {n}" for reason, n in info["failures"].items()) or "none"
    print(
        f"{args.out}: {info['layers']['conversations']} conversations, {info['layers']['judgments']} judge cells; "
        f"{info['calls']} calls, {info['cache_hits']} cache hits, failures: {failures}; {info['wall_s']:.1f} s"
    )
    if "sequential" in info:
        record = info["sequential"]
        low, high = record["interval"]
        print(f"stopped ({record['stopped']}) after {len(record['looks'])} looks, {record['draws']} item pairs: "
              f"interval [{low:.4f}, {high:.4f}] ({record['interval_kind']}) for {' - '.join(record['precision']['contrast'])}")
    for judge, found in info.get("judges", {}).items():
        if found.get("no_signal"):
            print(f"multiverse run: warning: no signal on the canaries: {describe_pooled(judge, found['canaries'])}", file=sys.stderr)
    share = failed_share(info)
    if share > args.max_failed_share:
        print(
            f"multiverse run: stopped short: {share:.0%} of conversations failed "
            f"(over --max-failed-share {args.max_failed_share}); fix the cause and rerun to resume",
            file=sys.stderr,
        )
        return 3
    return 0
