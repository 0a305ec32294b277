"""Run every benchmark in turn: ``python -m benchmarks`` (``make bench``).

Each benchmark is also runnable alone (``python -m benchmarks.bench_score``) with
its own options; results are recorded in ``benchmarks/README.md`` and the
per-area pages it links to.
"""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = (
    "bench_contract",
    "bench_contract_files",
    "bench_score",
    "bench_curve",
    "bench_llm",
    "bench_run",
    "bench_concurrent",
)


def main() -> int:
    for name in BENCHMARKS:
        print(f"== {name}", flush=True)
        status = importlib.import_module(f"benchmarks.{name}").main([])
        if status:
            return int(status)
    return 0


if __name__ == "__main__":
    sys.exit(main())
