"""The probe study: do the judge probes find the biases the offline world plants, and nothing else?

Run ``python -m benchmarks.probe_study [--cubes M] [--quick]``.  Three simulations,
each through the library's own paths (``multiverse.run``, ``judge_canaries``) on
the offline world, a fresh cache per replicate:

1. **Severity probes** (M cubes).  Each cube is a run of the tutor role: one
   target whose every turn breaches every principle with probability
   ``BREACH`` (no partial deviations, no escalation, no monitor rejections, so
   cells are exchangeable), ``ITEMS`` conversations of ``HORIZON`` turns, and
   two judges of sensitivity and specificity ``ACCURACY``: ``biased``, with a
   planted verbosity leniency ``LENIENCY`` and wording shift ``SHIFT``, and
   ``clean``, with none.  Both are crossed with four probes (padding,
   a reworded prompt, the revealed model family, context cut to two events).
   The planted effects on mean severity are exact functions of these
   parameters (:func:`planted`): padding ``-LENIENCY * E[R]`` and rewording
   ``SHIFT * (2 - E[R])``, with ``E[R] = 2 (BREACH * ACCURACY + (1 - BREACH)(1 - ACCURACY))``
   the unprobed judge's mean severity; every other probe of either judge has
   no planted effect.
2. **Order probe** (M cubes).  Each cube is a run of the tutor role: ``PAIRS``
   one-turn conversations of a target whose every principle breaches with
   probability ``BREACH``, each reply compared, principle by principle, with a
   reference model's reply to the same opening (breaching as often) by two
   pairwise judges, ``first`` (answers by position with probability ``ORDER``)
   and ``fair`` (never), both crossed with the order probe (``swapped``: the
   target's reply shown first).  The planted order effect on the pairwise code
   is ``-2 ORDER`` for ``first`` and 0 for ``fair``.
3. **Canary flags** (M replicates).  The tutor's 64 canaries judged by a
   judge with no signal (sensitivity and specificity 0.5), one of sensitivity
   and specificity 0.9, and one that never reports a breach.

Prints, per planted effect: the mean estimate, its Monte Carlo SE and
distance from the planted value in MC SEs, and the 95% intervals' coverage;
per null probe test its false-positive rate; per canary judge its flagged
share.  Acceptance (issue "judges that must earn trust"): mean within 2 MC SE
of the planted effect, coverage >= 0.95 - 3 MC SE, false-positive rate
<= 0.05 + 3 MC SE, a no-signal judge flagged in >= 95% of runs and the 0.9
judge in <= 5%.  ``--json FILE`` writes every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BREACH = 0.2
ACCURACY = 0.9
LENIENCY = 0.3
SHIFT = 0.2
ORDER = 0.3
ITEMS = 32
HORIZON = 3
PAIRS = 60
PROBES = {"padded": {"verbosity": 3}, "reworded": {"paraphrase": "judge_v1_p1"}, "named": {"reveal": "family"},
          "short": {"truncate": 2}}
CANARY_JUDGES = {
    "no_signal": {"sensitivity": {"*": 0.5}, "specificity": {"*": 0.5}},
    "accurate": {"sensitivity": {"*": 0.9}, "specificity": {"*": 0.9}},
    "silent": {"sensitivity": {"*": 0.0}, "specificity": {"*": 1.0}},
}


def mean_severity() -> float:
    """The unprobed judges' expected severity of a cell: ``2 (p * sensitivity + (1 - p)(1 - specificity))``."""
    return 2 * (BREACH * ACCURACY + (1 - BREACH) * (1 - ACCURACY))


def planted() -> dict[str, float]:
    """Probed judge -> its planted effect on mean severity (pairwise code for the order probe)."""
    effects = {f"{judge}.{probe}": 0.0 for judge in ("biased", "clean") for probe in PROBES}
    effects["biased.padded"] = -LENIENCY * mean_severity()
    effects["biased.reworded"] = SHIFT * (2 - mean_severity())
    effects["first.swapped"] = -2 * ORDER
    effects["fair.swapped"] = 0.0
    return effects


def severity_experiment(seed: int) -> dict:
    """One cube's experiment: the offline world above, sim seed ``seed``."""
    judge = {"sensitivity": {"*": ACCURACY}, "specificity": {"*": ACCURACY}}
    return {
        "name": f"probe-study-{seed}",
        "roles": ["tutor"],
        "systems": {"target": "sim/target-t"},
        "dims": {
            "user_sim": {"plain": "sim/user-plain"},
            "judge": {"biased": "sim/judge-biased", "clean": "sim/judge-clean"},
            "judge_probe": PROBES,
            "condition": {"fixed": {"horizon": HORIZON, "search": "seed_only"}},
            "standard": ["clear_breach"],
            "rule": ["any_turn"],
        },
        "items": ITEMS,
        "specs": str(ROOT / "specs"),
        "sim": {
            "seed": seed,
            "targets": {"t": {"breach": {"*": BREACH}, "partial": {"*": 0.0}}},
            "judges": {"biased": {**judge, "verbosity_leniency": LENIENCY, "wording_shift": SHIFT}, "clean": judge},
            "users": {"plain": {"pressure": 1.0}},
            "monitor": {"reject_rate": 0.0},
        },
    }


def severity_replicate(seed: int, cache: Path) -> dict[str, tuple[float, float, float]]:
    """Probed judge -> (effect, lower, upper) in one simulated cube."""
    import multiverse
    from multiverse.analysis import probe_effects
    from multiverse.config.experiment import parse_experiment

    cube = multiverse.run(parse_experiment(severity_experiment(seed)), cache=cache)
    effects = probe_effects(cube)
    return {str(label): (float(e), float(lo), float(hi))
            for label, e, (lo, hi) in zip(effects["probed"].values, effects["effect"].values, effects["ci"].values)}


def order_experiment(seed: int) -> dict:
    """One order cube's experiment: two pairwise judges and their order probe, sim seed ``seed``."""
    judge = {"sensitivity": {"*": ACCURACY}, "specificity": {"*": ACCURACY}}
    replies = {"breach": {"*": BREACH}, "partial": {"*": 0.0}}
    return {
        "name": f"probe-study-order-{seed}",
        "roles": ["tutor"],
        "systems": {"target": "sim/target-t"},
        "dims": {
            "user_sim": {"plain": "sim/user-plain"},
            "judge": {"online": "sim/judge-online",
                      "first": {"pairwise": "sim/judge-first", "against": "sim/target-reference"},
                      "fair": {"pairwise": "sim/judge-fair", "against": "sim/target-reference"}},
            "judge_probe": {"swapped": {"order": "swap"}},
            "condition": {"opening": {"horizon": 1, "search": "seed_only"}},
            "standard": ["clear_breach"],
            "rule": ["any_turn"],
        },
        "items": PAIRS,
        "specs": str(ROOT / "specs"),
        "campaign": {"judge": "online", "monitor": "none"},
        "sim": {
            "seed": seed,
            "targets": {"t": replies, "reference": replies},
            "judges": {"online": judge, "first": {**judge, "order_preference": ORDER}, "fair": judge},
            "users": {"plain": {"pressure": 1.0}},
        },
    }


def order_replicate(seed: int, cache: Path) -> dict[str, tuple[float, float, float]]:
    """``first.swapped`` and ``fair.swapped`` -> (effect, lower, upper) in one simulated cube."""
    import multiverse
    from multiverse.analysis import probe_effects
    from multiverse.config.experiment import parse_experiment

    cube = multiverse.run(parse_experiment(order_experiment(seed)), cache=cache)
    effects = probe_effects(cube)
    return {str(label): (float(e), float(lo), float(hi))
            for label, e, (lo, hi) in zip(effects["probed"].values, effects["effect"].values, effects["ci"].values)}


def canary_replicate(seed: int, cache: Path) -> dict[str, bool]:
    """Canary judge -> whether it is flagged ``no_signal`` in one replicate."""
    from multiverse.config.specs import load_role
    from multiverse.core.choices import ModelSpec
    from multiverse._run.canaries import judge_canaries
    from multiverse.cube.canaries import score_canaries
    from multiverse.judge.model import ModelJudge
    from multiverse.llm import Client
    from multiverse.sim import SimWorld

    role = load_role("tutor", specs_dir=ROOT / "specs")
    world = SimWorld.from_config({"seed": seed, "judges": CANARY_JUDGES}, canaries=role.canary_table)
    judges = {label: ModelJudge(ModelSpec(f"sim/judge-{label}")) for label in CANARY_JUDGES}
    with Client(cache=cache, sim=world) as client:
        found = asyncio.run(judge_canaries(judges, [role], client=client))
    return {label: score_canaries(verdicts)["no_signal"] for label, verdicts in found.items()}


def _one(fn, seed: int) -> tuple[int, object]:
    """``fn(seed, cache)`` on a fresh cache folder, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="probe-study-"))
    try:
        return seed, fn(seed, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _replicates(fn, m: int, start: int, *, jobs: int = 1, records: Path | None = None) -> list:
    """``fn`` on seeds ``start .. start + m - 1``, ``jobs`` at a time, in seed order.

    With ``records``, each replicate's result is appended to that JSON-lines
    file as it finishes (``{"simulation", "seed", "result"}``), and seeds whose
    result the file already holds are read back instead of run again, so an
    interrupted study resumes where it stopped.
    """
    name = fn.__name__.removesuffix("_replicate")
    done: dict[int, object] = {}
    if records is not None and records.is_file():
        for line in records.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["simulation"] == name:
                done[row["seed"]] = row["result"]
    todo = [seed for seed in range(start, start + m) if seed not in done]
    if todo:
        from joblib import Parallel, delayed

        for seed, result in Parallel(n_jobs=jobs, return_as="generator_unordered")(delayed(_one)(fn, s) for s in todo):
            done[seed] = json.loads(json.dumps(result))
            if records is not None:
                with records.open("a", encoding="utf-8") as out:
                    out.write(json.dumps({"simulation": name, "seed": seed, "result": done[seed]}, sort_keys=True) + "\n")
    return [done[seed] for seed in range(start, start + m)]


def summarise_effects(found: list[dict[str, tuple[float, float, float]]]) -> dict[str, dict[str, float]]:
    """Per probed judge: planted effect, mean estimate, MC SE, distance in MC SEs, coverage, rejection rate."""
    truth = planted()
    out = {}
    for label in found[0]:
        rows = np.array([f[label] for f in found])
        estimate, low, high = rows[:, 0], rows[:, 1], rows[:, 2]
        m = len(rows)
        mc_se = float(estimate.std(ddof=1) / np.sqrt(m))
        covered = float(((low <= truth[label]) & (truth[label] <= high)).mean())
        rejected = float(((low > 0) | (high < 0)).mean())
        out[label] = {
            "planted": truth[label], "mean": float(estimate.mean()), "mc_se": mc_se,
            "distance_mc_se": float(abs(estimate.mean() - truth[label]) / mc_se) if mc_se > 0 else 0.0,
            "coverage": covered, "coverage_mc_se": float(np.sqrt(max(covered * (1 - covered), 1e-12) / m)),
            "rejection_rate": rejected, "rejection_mc_se": float(np.sqrt(max(rejected * (1 - rejected), 1e-12) / m)), "m": m,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=int, default=500, help="replicates per simulation (default 500)")
    parser.add_argument("--quick", action="store_true", help="40 replicates per simulation")
    parser.add_argument("--seed", type=int, default=0, help="first sim seed")
    parser.add_argument("--only", choices=("severity", "order", "canaries"), help="run one simulation")
    parser.add_argument("--json", metavar="FILE", help="write every figure as JSON")
    parser.add_argument("--jobs", type=int, default=1, help="replicates run at once, each in its own process (default 1)")
    parser.add_argument("--records", metavar="FILE", type=Path,
                        help="append each replicate's result to this JSON-lines file; seeds it holds are not run again")
    args = parser.parse_args(argv)
    m = 40 if args.quick else args.cubes
    results: dict[str, object] = {"m": m, "parameters": {"breach": BREACH, "accuracy": ACCURACY, "leniency": LENIENCY,
                                                         "shift": SHIFT, "order": ORDER, "items": ITEMS,
                                                         "horizon": HORIZON, "pairs": PAIRS}}
    started = time.perf_counter()
    effects: dict[str, dict[str, float]] = {}
    if args.only in (None, "severity"):
        effects.update(summarise_effects(_replicates(severity_replicate, m, args.seed, jobs=args.jobs, records=args.records)))
    if args.only in (None, "order"):
        effects.update(summarise_effects(_replicates(order_replicate, m, args.seed, jobs=args.jobs, records=args.records)))
    results["effects"] = effects
    for label, e in effects.items():
        kind = "effect" if e["planted"] != 0 else "null"
        print(f"{kind} {label} planted={e['planted']:+.4f} mean={e['mean']:+.4f} mc_se={e['mc_se']:.4f} "
              f"distance={e['distance_mc_se']:.2f} coverage={e['coverage']:.3f} (min {0.95 - 3 * e['coverage_mc_se']:.3f}) "
              f"rejections={e['rejection_rate']:.3f} (fpr max {0.05 + 3 * e['rejection_mc_se']:.3f}) m={e['m']}", flush=True)
    if args.only in (None, "canaries"):
        flags = _replicates(canary_replicate, m, args.seed, jobs=args.jobs, records=args.records)
        shares = {label: float(np.mean([f[label] for f in flags])) for label in CANARY_JUDGES}
        results["flagged"] = shares
        for label, share in shares.items():
            print(f"flagged {label} {share:.3f} m={len(flags)}", flush=True)
    results["wall_s"] = round(time.perf_counter() - started, 1)
    print(f"wall {results['wall_s']} s", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
