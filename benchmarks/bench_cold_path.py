"""Benchmark: CPU per conversation of a cold offline run, this tree against an older commit, interleaved.

Run ``python -m benchmarks.bench_cold_path [--baseline REV] [--items 10 40] [--rounds 3]``.
The quickstart experiment with ``items`` raised runs cold (a fresh cache each
time, every model call made by the offline world) as a fresh ``multiverse run``
process, once under this checkout and once under ``REV`` (checked out with
``git worktree add`` into a temporary folder and put first on ``PYTHONPATH``),
alternating which goes first, for every size and round.  Both trees read the
same experiment file and this checkout's specs, so only the code differs.

Prints, per tree and size, the median over rounds of the process's CPU time
(user + system of the child, interpreter start and imports included) per
conversation, the marginal CPU per conversation between the smallest and the
largest size (start-up cancels out), and their ratio against the baseline; checks
the target, marginal CPU per conversation at most half the baseline's, and that
both trees' cubes are identical (a cheaper cold path must not change a result)
when both run the same version of the offline world (a new version draws other
replies, so its cubes differ by design).
Then times ``import multiverse; multiverse.score`` against ``import xarray`` in
fresh interpreters of this checkout (medians of interleaved pairs, CPU and
wall), against the target of at most 0.15 s more.
Exits 1 when the cubes differ or a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import xarray as xr
import yaml

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
DEFAULT_BASELINE = "1ea2655"
"""The last commit before the cheaper cold path (canonical JSON through orjson, judge prompts per prefix)."""
TARGET_RATIO = 0.5


def _experiment(folder: Path, items: int) -> Path:
    data = yaml.safe_load(QUICKSTART.read_text(encoding="utf-8"))
    data["items"] = items
    data["specs"] = str(ROOT / "specs")
    data.pop("cache", None)
    path = folder / f"quickstart-{items}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(tree: Path, experiment: Path, out: Path, cache: Path) -> dict:
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    before = _children_cpu_s()
    subprocess.run(
        [sys.executable, "-m", "multiverse", "run", str(experiment), "--out", str(out), "--cache", str(cache)],
        check=True,
        cwd=tree,
        env=environment,
        stdout=subprocess.DEVNULL,
    )
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return {"cpu_s": _children_cpu_s() - before, "conversations": info["layers"]["conversations"], "calls": info["calls"]}


def _same_cube(a: Path, b: Path) -> bool:
    with xr.open_dataset(a / "cube.nc") as left, xr.open_dataset(b / "cube.nc") as right:
        return left.drop_attrs().identical(right.drop_attrs())


def _world_version(tree: Path) -> str:
    """The offline world's version in ``tree``: cubes are comparable only between equal versions."""
    code = "from multiverse.sim.world import SimWorld; print(SimWorld.version)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tree,
                          env={**os.environ, "PYTHONPATH": str(tree)})
    return done.stdout.strip()


def _checkout(revision: str, folder: Path) -> Path:
    tree = folder / "baseline"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), revision],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return tree


def _measure(trees: dict[str, Path], sizes: list[int], rounds: int, folder: Path) -> tuple[dict, bool]:
    results: dict[tuple[str, int], list[dict]] = {(label, items): [] for label in trees for items in sizes}
    same = True
    for round_index in range(rounds):
        for items in sizes:
            experiment = _experiment(folder, items)
            order = list(trees) if round_index % 2 == 0 else list(reversed(trees))
            outs = {}
            for label in order:
                out = folder / f"{label}-{items}-{round_index}"
                results[label, items].append(_run(trees[label], experiment, out, folder / f"cache-{label}-{items}-{round_index}"))
                outs[label] = out
            same &= _same_cube(*outs.values())
            print(
                f"  round {round_index + 1} items {items}: "
                + ", ".join(f"{label} {results[label, items][-1]['cpu_s']:.1f} s" for label in order),
                flush=True,
            )
    return results, same


IMPORT_TARGET_S = 0.15
_SCORE_IMPORT = "import multiverse; multiverse.score"


def _import_s(statement: str) -> tuple[float, float]:
    code = (
        "import time; w, c = time.perf_counter(), time.process_time(); "
        f"{statement}; print(time.perf_counter() - w, time.process_time() - c)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def bench_imports(*, repeats: int) -> dict[str, float]:
    """Median paired differences (wall, CPU) of importing the scoring layer and importing xarray alone."""
    _import_s(_SCORE_IMPORT), _import_s("import xarray")  # warm the file cache
    pairs = [(_import_s(_SCORE_IMPORT), _import_s("import xarray")) for _ in range(repeats)]
    out = {}
    for i, clock in enumerate(("wall", "cpu")):
        out[f"score_{clock}_s"] = statistics.median(p[0][i] for p in pairs)
        out[f"xarray_{clock}_s"] = statistics.median(p[1][i] for p in pairs)
        out[f"difference_{clock}_s"] = statistics.median(p[0][i] - p[1][i] for p in pairs)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git revision to compare with")
    parser.add_argument("--items", type=int, nargs="+", default=[10, 40], help="quickstart sizes (items)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians are reported)")
    parser.add_argument("--import-repeats", type=int, default=11, help="interleaved import pairs")
    args = parser.parse_args(argv)
    sizes = sorted(set(args.items))
    with tempfile.TemporaryDirectory(prefix="bench-cold-path-") as tmp:
        folder = Path(tmp)
        baseline = _checkout(args.baseline, folder)
        try:
            trees = {"baseline": baseline, "current": ROOT}
            print(f"cold quickstart runs, baseline {args.baseline} against this checkout, {args.rounds} rounds:")
            versions = {label: _world_version(tree) for label, tree in trees.items()}
            results, same = _measure(trees, sizes, args.rounds, folder)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)], check=False)
    medians = {key: statistics.median(r["cpu_s"] for r in runs) for key, runs in results.items()}
    conversations = {items: results["current", items][0]["conversations"] for items in sizes}
    print(f"{'tree':<9} {'items':>5} {'conversations':>13} {'calls':>7} {'CPU s':>7} {'ms/conv':>8}")
    for (label, items), runs in results.items():
        cpu = medians[label, items]
        print(
            f"{label:<9} {items:>5} {conversations[items]:>13} {runs[0]['calls']:>7} "
            f"{cpu:>7.2f} {1000 * cpu / conversations[items]:>8.1f}"
        )
    comparable = len(set(versions.values())) == 1
    met = same or not comparable
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        added = conversations[large] - conversations[small]
        marginal = {label: 1000 * (medians[label, large] - medians[label, small]) / added for label in trees}
        ratio = marginal["current"] / marginal["baseline"]
        met &= ratio <= TARGET_RATIO
        print(
            f"marginal CPU per conversation ({small} -> {large} items): baseline {marginal['baseline']:.1f} ms, "
            f"current {marginal['current']:.1f} ms, ratio {ratio:.2f} (target <= {TARGET_RATIO})"
        )
    imports = bench_imports(repeats=args.import_repeats)
    for clock in ("cpu", "wall"):
        difference = imports[f"difference_{clock}_s"]
        met &= difference <= IMPORT_TARGET_S
        print(
            f"`{_SCORE_IMPORT}` - `import xarray`, {clock}: {1000 * difference:+.0f} ms "
            f"({imports[f'score_{clock}_s']:.3f} s vs {imports[f'xarray_{clock}_s']:.3f} s; target <= +150 ms)"
        )
    if comparable:
        print(f"cubes identical: {same}; {'met' if met else 'NOT met'}")
    else:
        print(f"cubes not compared: offline world version {versions['baseline']} (baseline) against "
              f"{versions['current']} (this checkout) draws other replies; {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
