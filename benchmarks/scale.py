"""Run size against memory: the quickstart's offline world from 1,000 to 100,000 conversations.

``python -m benchmarks.scale [--sizes 1000 10000 100000]``: for each size, the
quickstart experiment (36 rollout units) with ``items`` raised so that it holds
at least that many conversations runs cold, in a fresh process, into an output
folder (the streamed path: ``cube.zarr`` written unit by unit, then
``cube.nc``); a second fresh process opens its ``cube.zarr`` lazily and scores it
(:func:`multiverse.score` under every standard and rule, then
:func:`multiverse.pass_hat_k`).  Each line reports wall and CPU seconds, peak
resident memory (the process's ``ru_maxrss``), the same per conversation, and
the sizes on disk of the cube (zarr and netCDF), the transcript store and the
call cache.  Peak memory flat in the number of conversations is what lets a run
grow past one machine's memory; ``benchmarks/README.md`` records the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from multiverse._run.stream import STREAM_CONVERSATIONS

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
UNITS = 36
"""Rollout units of the quickstart: 3 systems x 2 roles x 2 user simulators x 3 replicates."""

_RUN = """
import json, resource, sys, time
import multiverse
start, cpu = time.perf_counter(), time.process_time()
multiverse.run(sys.argv[1], out=sys.argv[2], cache=sys.argv[3], in_flight=int(sys.argv[4]))
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": time.perf_counter() - start, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "peak_rss_mb": usage.ru_maxrss / 1024}))
"""

_SCORE = """
import json, resource, sys, time
import multiverse
start = time.perf_counter()
cube = multiverse.open_cube(sys.argv[1] + "/cube.zarr")
scores = multiverse.score(cube)
rates = multiverse.pass_hat_k(scores, k=[1, 2]).compute()
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": time.perf_counter() - start, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "peak_rss_mb": usage.ru_maxrss / 1024, "finite": int(rates.notnull().sum())}))
"""


def _size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def _child(code: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MULTIVERSE_SPECS": str(ROOT / "specs")}
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark child failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(conversations: int, workdir: Path, *, in_flight: int) -> dict:
    """Run and score the quickstart raised to ``conversations``; the figures as a dict."""
    items = math.ceil(conversations / UNITS)
    experiment = yaml.safe_load(QUICKSTART.read_text(encoding="utf-8"))
    experiment["items"] = items
    experiment.pop("cache", None)
    folder = workdir / f"n{conversations}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment, sort_keys=False), encoding="utf-8")
    out, cache = folder / "run", folder / "cache"
    ran = _child(_RUN, str(path), str(out), str(cache), str(in_flight))
    scored = _child(_SCORE, str(out))
    n = items * UNITS
    return {
        "conversations": n,
        "in_flight": in_flight,
        "run_wall_s": round(ran["wall_s"], 1),
        "run_cpu_s": round(ran["cpu_s"], 1),
        "run_cpu_ms_per_conv": round(1000 * ran["cpu_s"] / n, 1),
        "run_peak_rss_mb": round(ran["peak_rss_mb"]),
        "run_rss_kb_per_conv": round(1024 * ran["peak_rss_mb"] / n, 1),
        "score_wall_s": round(scored["wall_s"], 1),
        "score_peak_rss_mb": round(scored["peak_rss_mb"]),
        "cube_zarr_mb": round(_size_mb(out / "cube.zarr"), 1),
        "cube_nc_mb": round(_size_mb(out / "cube.nc"), 1),
        "transcripts_mb": round(_size_mb(out / "transcripts.sqlite"), 1),
        "cache_mb": round(_size_mb(cache), 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure every size in turn and print one JSON line per size."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000],
                        help="conversations per run (rounded up to whole items per unit)")
    parser.add_argument("--in-flight", type=int, default=STREAM_CONVERSATIONS,
                        help="conversations a run keeps in flight (multiverse.run's in_flight)")
    parser.add_argument("--workdir", type=Path, default=None, help="where runs and caches go (default: a temp folder)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="multiverse-scale-") as tmp:
        workdir = args.workdir or Path(tmp)
        for size in args.sizes:
            print(json.dumps(measure(size, workdir, in_flight=args.in_flight)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
