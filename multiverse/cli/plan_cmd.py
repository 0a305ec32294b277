"""``multiverse plan EXPERIMENT.yaml [--cache DIR] [--target [H] [--pilot RUN]]``: layer sizes, calls and cost, calling nothing.

With ``--target``: the items the ``precision:`` block's target needs instead (:mod:`multiverse.cli._sequential`)."""

from __future__ import annotations

import argparse
import json
import sys

from multiverse.cli._options import with_examples

__all__ = ["CALLS_NOTE", "add_arguments", "main"]


CALLS_NOTE = (
    "(calls count distinct requests; a run's run.json counts every request it sends, retries included, "
    "and every cache lookup as a hit, so its calls + cache_hits can exceed these)"
)
"""Why ``plan``'s call counts and ``run``'s differ, printed under the table."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment", metavar="EXPERIMENT.yaml", help="the experiment file")
    parser.add_argument("--cache", metavar="DIR", help="model-call cache folder (default: the file's cache:)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--target", nargs="?", const=0.0, type=float, metavar="H",
        help="the items the precision: block's target needs (H: a half-width replacing the block's)",
    )
    parser.add_argument("--pilot", metavar="RUN", help="with --target: a pilot run (folder or cube) giving the variances")
    with_examples(parser, "multiverse plan experiments/quickstart.yaml", "multiverse plan experiments/quickstart.yaml --json")


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def main(args: argparse.Namespace) -> int:
    from multiverse._run import plan_report
    from multiverse._run.runner import resolve_experiment
    from multiverse.cli._sequential import TargetError, plan_target, print_target
    from multiverse.config.located import SpecError

    try:
        experiment = resolve_experiment(args.experiment)
        if args.target is not None:
            report = plan_target(experiment, half_width=args.target or None, pilot=args.pilot)
        else:
            report = plan_report(experiment, cache=args.cache)
    except SpecError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    except TargetError as exc:
        print(f"multiverse plan: {exc}", file=sys.stderr)
        return 2
    for note in experiment.notes:
        print(note, file=sys.stderr)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    if args.target is not None:
        print_target(report)
        return 0
    layers = report["layers"]
    print(f"experiment {report['experiment']} (plan {report['plan_digest'][:12]})")
    print(f"layer rollout: {layers['rollouts']} rollouts, {layers['conversations']} conversations")
    print(f"layer judge: {layers['judgments']} judge cells")
    print(f"{'model':<40} {'needed':>8} {'cached':>8} {'to call':>8} {'est. cost':>11}")
    for model, row in report["models"].items():
        print(f"{model:<40} {row['needed']:>8} {row['cached']:>8} {row['to_call']:>8} {_cost(row['cost_usd']):>11}")
    print(
        f"calls needed {report['needed']}, cached {report['cached']}, to call {report['to_call']}, "
        f"estimated cost {_cost(report['cost_usd'])}"
    )
    print(CALLS_NOTE)
    for why in report.get("model_problems", {}).values():
        print(f"warning: {why}: a run would fail", file=sys.stderr)
    for model, names in report.get("missing_credentials", {}).items():
        print(f"warning: {model} needs {' and '.join(names)}, not set: a run would fail", file=sys.stderr)
    return 0
