"""Benchmark: two concurrent runs of one experiment on one cache pay for each model call once.

Run ``python -m benchmarks.bench_concurrent [--latency-ms MS]``.  The quickstart
experiment, every sim model (targets, users, judges, the monitor) answering in
``MS`` ms, so that every call is leased as a provider's is (an offline call that
answers at once takes no lease: :mod:`multiverse.llm.lease`), runs once alone on a fresh
cache, then twice at the same time (two ``multiverse run`` processes) on a
second fresh cache.  Prints the calls of each, the ratio of the pair's total to
the single run's, and checks the target: at most 1.05x the calls of one run, and
both cubes identical to the single run's.  Exits 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_run import _experiment, _same_cube

TARGET_RATIO = 1.05


def _start(experiment: Path, out: Path, cache: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "multiverse", "run", str(experiment), "--out", str(out), "--cache", str(cache)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL)


def _calls(out: Path) -> int:
    return int(json.loads((out / "run.json").read_text(encoding="utf-8"))["calls"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=20.0, help="latency of every sim model's call")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-concurrent-") as tmp:
        folder = Path(tmp)
        experiment = _experiment(folder, args.latency_ms, every_model=True)
        started = time.perf_counter()
        if _start(experiment, folder / "single", folder / "cache-single").wait():
            return 1
        single_s = time.perf_counter() - started
        started = time.perf_counter()
        pair = [_start(experiment, folder / f"pair-{k}", folder / "cache-shared") for k in (0, 1)]
        if any(process.wait() for process in pair):
            return 1
        pair_s = time.perf_counter() - started
        single = _calls(folder / "single")
        both = [_calls(folder / f"pair-{k}") for k in (0, 1)]
        same = all(_same_cube(folder / "single", folder / f"pair-{k}") for k in (0, 1))
    ratio = sum(both) / single
    met = ratio <= TARGET_RATIO and same
    print(f"quickstart, every sim model answering in {args.latency_ms:g} ms:")
    print(f"  one run alone        {single:>6} calls  {single_s:6.1f} s")
    print(f"  two runs at once     {both[0]:>6} + {both[1]} calls  {pair_s:6.1f} s")
    print(f"  ratio {ratio:.3f} (target <= {TARGET_RATIO}); cubes identical: {same}; {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
