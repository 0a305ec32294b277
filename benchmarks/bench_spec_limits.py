"""Benchmark: the worst spec files under the size cap validate in bounded time and memory.

``python -m benchmarks.bench_spec_limits`` writes files built to be expensive
while staying under the YAML reader's limits (:data:`multiverse.config.located.MAX_FILE_BYTES`
bytes, :data:`multiverse.config.located.MAX_VALUES` values), and two just over them, and
runs ``multiverse validate`` on each in a fresh process, printing its exit code,
wall and CPU time (the CPU time is the target's measure, as the machine is
shared) and peak resident memory (the interpreter and its imports included;
the ``tiny`` row is that baseline).  Targets: every file validates (or is
refused) within 2 s and 300 MB; a file over the byte cap is refused before it
is parsed.  Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from multiverse.config.located import MAX_FILE_BYTES, MAX_VALUES

__all__ = ["cases", "main"]

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "specs"
TIME_S, MEMORY_MB = 2.0, 300.0


def _experiment(systems: int) -> str:
    lines = ["name: wide", "roles: [tutor, support, interviewer]", "systems:"]
    lines += [f"  s{i}: sim/target-a" for i in range(systems)]
    lines += ["dims:", "  user_sim: {plain: sim/user-plain}", "  judge: {strict: sim/judge-strict}",
              "  condition: {short: {horizon: 8, search: seed_only}}", "replicates: 3", "items: 50",
              f"specs: {json.dumps(str(SPECS))}", "sim: {targets: {a: {}}, judges: {strict: {}}, users: {plain: {}}}"]
    return "\n".join(lines) + "\n"


def _alias_bomb(values: int) -> str:
    """Ten-fold aliases nested as deep as fit, repeated at the top so the expansion holds about ``values`` values."""
    sizes = [11]  # a list counts as one value, plus its items
    while 1 + 10 * sizes[-1] + sum(sizes) <= values:
        sizes.append(1 + 10 * sizes[-1])
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 10)}]" for k in range(1, len(sizes))]
    repeat = max(1, (values - sum(sizes)) // sizes[-1])
    lines.append(f"top: [{', '.join([f'*a{len(sizes) - 1}'] * repeat)}]")
    return "\n".join(lines) + "\n"


def _fill(prefix: str, unit: str, suffix: str, *, budget: int) -> str:
    count = (budget - len(prefix) - len(suffix)) // len(unit)
    return prefix + unit * count + suffix


def cases() -> dict[str, str]:
    """Name -> file text: a baseline, worst cases under the limits, and files just over them."""
    under = MAX_FILE_BYTES - 64
    return {
        "tiny": "name: x\n",
        "long-string": _fill("x: '", "a", "'\n", budget=under),
        "deep-nesting-flow": _fill("", "[", "", budget=under // 2) + "]" * (under // 2),
        "deep-nesting-block": "".join(f"{' ' * i}k:\n" for i in range(700)),
        "many-keys": "".join(f"k{i:06d}: 1\n" for i in range(under // len("k000000: 1\n"))),
        "many-items": _fill("x: [", "1,", "1]\n", budget=under),
        "alias-bomb-under-cap": _alias_bomb(MAX_VALUES // 2),  # the anchors' own lists count too
        "alias-bomb-over-cap": _alias_bomb(MAX_VALUES * 50),
        "experiment-5000-systems": _experiment(min(5000, under // 22)),
        "over-byte-cap": "x: " + "a" * (MAX_FILE_BYTES + 10) + "\n",
    }


def measure(text: str, folder: Path, name: str) -> dict:
    """Run ``multiverse validate`` on ``text`` in a fresh process; exit code, wall s, peak MB."""
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    script = (
        "import resource, sys, time\n"
        "from multiverse.cli import main\n"
        "start, cpu = time.perf_counter(), time.process_time()\n"
        "code = main(['validate', sys.argv[1]])\n"
        "wall, cpu = time.perf_counter() - start, time.process_time() - cpu\n"
        "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "print(f'@@ {code} {wall:.3f} {cpu:.3f} {peak:.1f}', file=sys.stderr)\n"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=600,
                          cwd=REPO)
    process_s = time.perf_counter() - started
    line = next((ln for ln in done.stderr.splitlines() if ln.startswith("@@ ")), None)
    if line is None:
        return {"name": name, "bytes": len(text.encode()), "code": done.returncode, "validate_s": float("nan"),
                "cpu_s": float("nan"),
                "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, "process_s": process_s,
                "message": done.stderr.strip().splitlines()[-1][:100] if done.stderr.strip() else ""}
    _, code, wall, cpu, peak = line.split()
    said = [ln for ln in (done.stdout + done.stderr).splitlines() if not ln.startswith("@@ ")]
    return {"name": name, "bytes": len(text.encode()), "code": int(code), "validate_s": float(wall),
            "cpu_s": float(cpu), "peak_mb": float(peak), "process_s": process_s, "message": (said[0][len(str(path)):][:90] if said else "")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    print(f"limits: {MAX_FILE_BYTES:,} bytes, {MAX_VALUES:,} values; targets {TIME_S} s, {MEMORY_MB:.0f} MB")
    print("| file | bytes | exit | validate s (wall) | validate s (CPU) | process s | peak MB | first line |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    missed = []
    with tempfile.TemporaryDirectory(prefix="mv-spec-limits-") as folder:
        for name, text in cases().items():
            row = measure(text, Path(folder), name)
            print(f"| {name} | {row['bytes']:,} | {row['code']} | {row['validate_s']:.2f} | {row['cpu_s']:.2f} | {row['process_s']:.2f} | "
                  f"{row['peak_mb']:.0f} | {row['message'].replace('|', '/')} |", flush=True)
            if not (row["cpu_s"] <= TIME_S and row["peak_mb"] <= MEMORY_MB and row["code"] in (0, 2)):
                missed.append(name)
    if missed:
        print(f"missed: {', '.join(missed)}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
