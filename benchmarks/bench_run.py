"""Benchmark: the quickstart experiment cold, then rerun warm, with every sim target answering in 20 ms.

Run ``python -m benchmarks.bench_run [--latency-ms MS] [--repeats R]``.  Each run
is a fresh ``multiverse run`` process on the same cache folder:

* ``cold``: an empty cache, every model call made;
* ``warm``: the same experiment again, unchanged rollout units replayed;
* ``warm --rebuild``: the same, every unit rebuilt request by request from the
  cache (the path a library change takes).

Prints each run's model calls, its own wall time (``run.json``'s ``wall_s``)
and the process wall time, interpreter start and imports included, and checks
the target: a warm rerun makes zero calls in under ``max(10% of cold, 5 s)``.
Exits 1 if the warm runs call a model or their cubes differ from the cold one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import xarray as xr
import yaml

QUICKSTART = Path(__file__).resolve().parents[1] / "experiments" / "quickstart.yaml"


def _experiment(folder: Path, latency_ms: float, *, every_model: bool = False) -> Path:
    """The quickstart with its sim targets (or, with ``every_model``, every sim model) at ``latency_ms``."""
    data = yaml.safe_load(QUICKSTART.read_text(encoding="utf-8"))
    sim = data["sim"]
    for section in ("targets", "judges", "users") if every_model else ("targets",):
        for entry in sim[section].values():
            entry["latency_ms"] = latency_ms
    if every_model:
        sim["monitor"] = {**sim.get("monitor", {}), "latency_ms": latency_ms}
        sim["planner"] = {**sim.get("planner", {}), "latency_ms": latency_ms}
    data["specs"] = str(QUICKSTART.parents[1] / "specs")
    path = folder / "quickstart.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _run(experiment: Path, out: Path, cache: Path, *extra: str) -> dict:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "multiverse", "run", str(experiment), "--out", str(out), "--cache", str(cache), *extra],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return {"process_s": time.perf_counter() - started, "run_s": info["wall_s"], "calls": info["calls"]}


def _same_cube(a: Path, b: Path) -> bool:
    with xr.open_dataset(a / "cube.nc") as left, xr.open_dataset(b / "cube.nc") as right:
        return left.drop_attrs().identical(right.drop_attrs())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=20.0, help="sim target latency per call")
    parser.add_argument("--repeats", type=int, default=3, help="warm reruns of each kind (best is reported)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        folder = Path(tmp)
        experiment = _experiment(folder, args.latency_ms)
        cache = folder / "cache"
        cold = _run(experiment, folder / "cold", cache)
        rows = {"cold": cold}
        same = True
        for label, extra in (("warm", ()), ("warm --rebuild", ("--rebuild",))):
            runs = []
            for k in range(args.repeats):
                out = folder / f"{label.replace(' ', '')}-{k}"
                runs.append(_run(experiment, out, cache, *extra))
                same &= _same_cube(folder / "cold", out)
            rows[label] = min(runs, key=lambda r: r["process_s"])
    bound = max(0.1 * cold["run_s"], 5.0)
    print(f"quickstart, sim targets answering in {args.latency_ms:g} ms:")
    for label, row in rows.items():
        print(
            f"  {label:<15} {row['calls']:>6} calls  run {row['run_s']:6.2f} s  "
            f"process {row['process_s']:6.2f} s  ({row['run_s'] / cold['run_s']:.0%} of cold)"
        )
    warm = rows["warm"]
    met = warm["calls"] == 0 and warm["process_s"] < bound
    print(f"  target: warm < max(10% of cold, 5 s) = {bound:.2f} s with zero calls: {'met' if met else 'NOT met'}")
    calls_ok = all(row["calls"] == 0 for label, row in rows.items() if label != "cold")
    if not (same and calls_ok):
        print("  a warm run called a model or changed the cube", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
