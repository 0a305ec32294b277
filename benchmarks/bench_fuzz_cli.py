"""Benchmark: thousands of fuzzed files through every command, no traceback, documented exit codes.

Run ``python -m benchmarks.bench_fuzz_cli [--examples N]``.  Draws ``N``
(default 5,000) inputs from the strategies of ``tests/cli/test_fuzz_cli.py``
(mutated experiment, role, contract and case files, each run through one of the
commands that read it, in-process) and prints the exit codes by command, the
examples per second, and every input that ended with an undocumented code, a
traceback, an internal error or a file ``validate`` "could not be checked" (its
report of an unexpected error while checking one file).  Exits 1 if there was any.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests" / "cli"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=5000, help="fuzzed inputs to draw")
    parser.add_argument("--chunk", type=int, default=250, help="inputs per progress line")
    parser.add_argument("--max-minutes", type=float, default=None, help="stop after the chunk that passes this time")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(TESTS))
    from hypothesis import HealthCheck, given, settings
    from test_fuzz_cli import DOCUMENTED_EXIT_CODES, _run, command_inputs

    codes: Counter[tuple[str, int]] = Counter()
    bad: list[str] = []

    @settings(max_examples=args.chunk, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(command_inputs())
    def one(given_input):
        kind, text, command = given_input
        with tempfile.TemporaryDirectory(prefix="mv-fuzz-") as folder:
            path = Path(folder) / ("case.json" if kind == "case" else f"{kind}.yaml")
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            code, out, err = _run([a.format(f=path, d=folder) for a in command])
        codes[(f"{command[0]} ({kind})", code)] += 1
        if (code not in DOCUMENTED_EXIT_CODES or "Traceback" in out + err or "internal error" in err
                or "could not be checked" in out):  # validate's word for an unexpected error in one file
            bad.append(f"{command[0]} {kind} -> {code}: {err.strip()[-300:]}")

    started = time.perf_counter()
    while sum(codes.values()) < args.examples:
        one()  # each call draws a fresh random chunk (no example database)
        elapsed = time.perf_counter() - started
        print(f"  {sum(codes.values())} inputs, {len(bad)} bad, {elapsed:.0f} s", flush=True)
        if args.max_minutes is not None and elapsed > 60 * args.max_minutes:
            break
    elapsed = time.perf_counter() - started
    total = sum(codes.values())
    print(f"{total} fuzzed inputs in {elapsed:.0f} s ({total / elapsed:.1f}/s)")
    for (command, code), n in sorted(codes.items()):
        print(f"  {command:<22} exit {code:>3}: {n}")
    print(f"undocumented exit codes, tracebacks or internal errors: {len(bad)}")
    for line in bad[:20]:
        print(f"  {line}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
