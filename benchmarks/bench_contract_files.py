"""Benchmark: role-contract verdicts from cases on disk, the plain way against ``evaluate_batch(path)``.

Run ``python -m benchmarks.bench_contract_files [--cases N] [--events M] [--rounds R]``.
Writes the workload of :mod:`benchmarks.bench_contract` (10,000 support cases x
100 events by default) to a temporary folder twice, as one JSONL file and as one
case file per case, then times, in interleaved rounds,

* the plain approach: read each case with ``json.loads`` and judge it with the
  article-style per-event loop (:func:`benchmarks.bench_contract.loop_evaluate`);
* the fast path: :func:`multiverse.evaluate_batch` on the path,

checks that both reach the same verdicts (exit 1 if not), and prints the median
and best wall time and the median CPU time (all threads) of each over the
rounds, and the median of the per-round ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.bench_contract import bench_inspect, loop_evaluate, make_cases
from multiverse.contract import evaluate_batch


def plain_jsonl(path: Path) -> list:
    """The plain approach on a JSONL file: ``json.loads`` each line, then the per-event loop."""
    with open(path, "rb") as handle:
        return [loop_evaluate(json.loads(line)) for line in handle if line.strip()]


def plain_folder(folder: Path) -> list:
    """The plain approach on a folder: ``json.load`` each case file, then the per-event loop."""
    out = []
    for path in sorted(folder.iterdir()):
        with open(path, "rb") as handle:
            out.append(loop_evaluate(json.load(handle)))
    return out


def _same(plain: list, ds) -> bool:
    errors = np.asarray([e for e, _ in plain], dtype=object)
    turns = np.asarray([t for _, t in plain])
    return bool((ds["first_error"].values == errors).all()) and np.array_equal(
        ds["first_violation_turn"].values, turns, equal_nan=True
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--inspect-events", type=int, default=200_000)
    args = parser.parse_args(argv)

    cases = make_cases(args.cases, args.events)
    with tempfile.TemporaryDirectory() as tmp:
        jsonl, folder = Path(tmp) / "cases.jsonl", Path(tmp) / "cases"
        folder.mkdir()
        with open(jsonl, "w", encoding="utf-8") as handle:
            for case in cases:
                handle.write(json.dumps(case) + "\n")
        for case in cases:
            (folder / f"{case['case_id']}.case.json").write_text(json.dumps(case), encoding="utf-8")
        n_events = args.cases * args.events
        print(f"{args.cases:,} cases x {args.events} events = {n_events:,} events; "
              f"JSONL {jsonl.stat().st_size / 1e6:.1f} MB")
        paths = {
            "JSONL, plain": lambda: plain_jsonl(jsonl),
            "JSONL, evaluate_batch(path)": lambda: evaluate_batch(jsonl),
            "folder, plain": lambda: plain_folder(folder),
            "folder, evaluate_batch(path)": lambda: evaluate_batch(folder),
        }
        walls: dict[str, list[float]] = {name: [] for name in paths}
        cpus: dict[str, list[float]] = {name: [] for name in paths}
        results = {}
        for _ in range(args.rounds):
            for name, fn in paths.items():
                start, cpu = time.perf_counter(), time.process_time()
                results[name] = fn()
                walls[name].append(time.perf_counter() - start)
                cpus[name].append(time.process_time() - cpu)
        for layout in ("JSONL", "folder"):
            if not _same(results[f"{layout}, plain"], results[f"{layout}, evaluate_batch(path)"]):
                print(f"verdicts differ: {layout}")
                return 1
        plain = results["JSONL, plain"]
        print(f"verdicts agree: {sum(1 for e, _ in plain if e)} invalid, "
              f"{sum(1 for _, t in plain if t == t)} violating cases")
        for name, times in walls.items():
            print(f"{name:30s} wall median {statistics.median(times):7.3f} s best {min(times):7.3f} s | "
                  f"CPU median {statistics.median(cpus[name]):7.3f} s | rounds {' '.join(f'{t:.2f}' for t in times)}")
        for layout in ("JSONL", "folder"):
            for kind, table in (("wall", walls), ("CPU", cpus)):
                ratios = [p / f for p, f in zip(table[f"{layout}, plain"], table[f"{layout}, evaluate_batch(path)"])]
                print(f"{layout} {kind}: fast path x{statistics.median(ratios):.2f} the plain approach "
                      f"(median of per-round ratios; range {min(ratios):.2f}-{max(ratios):.2f})")
    wall, cpu, line = bench_inspect(args.inspect_events, 3)
    print(f"inspect, {args.inspect_events:,}-event case: {wall:.2f} s wall, {cpu:.2f} s CPU: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
