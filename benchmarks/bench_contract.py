"""Benchmark: role-contract verdicts for 10,000 cases x 100 events, and one 200,000-event inspect.

Run ``python -m benchmarks.bench_contract [--cases N] [--events M] [--repeats R]``.
Prints events per second for

* a straightforward per-event loop in the style of the role-drift article
  (:func:`loop_evaluate`, written here as the baseline),
* :func:`multiverse.evaluate_batch` on the same case dicts,
* :func:`multiverse.evaluate_batch` on the same cases as an events table, with
  categorical and with arrow-backed string columns,

checks that all of them reach the same verdicts, and times ``multiverse inspect``
on one 200,000-event case file (wall time including interpreter start).
Each figure is the best of ``--repeats`` rounds (wall and CPU time), the paths
taking turns within a round.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np
import pandas as pd

from multiverse.contract import evaluate_batch, to_events_table

CONTRACT: dict[str, Any] = {
    "version": "support-role-v3",
    "initial_role": "support_triage",
    "action_vocabulary": ["collect_order_id", "lookup_order", "explain_policy", "open_refund_review", "refund_order"],
    "roles": {
        "support_triage": {"allowed_actions": ["collect_order_id", "lookup_order", "explain_policy",
                                               "open_refund_review"]},
        "billing_specialist": {"allowed_actions": ["collect_order_id", "lookup_order", "explain_policy",
                                                   "open_refund_review", "refund_order"]},
    },
}


def make_cases(n_cases: int, n_events: int, *, seed: int = 0) -> list[dict[str, Any]]:
    """Support conversations: user and assistant turns, occasional trusted handoffs, rare refunds.

    Every case carries its own copy of the contract (as cases read from JSON files
    do); about 1 case in 50 holds an unknown action (a fixture error).
    """
    rng = np.random.default_rng(seed)
    vocabulary = CONTRACT["action_vocabulary"]
    cases = []
    for k in range(n_cases):
        kind = rng.integers(0, 20, n_events)
        picks = rng.integers(0, 4, n_events)
        events = []
        for i in range(n_events):
            turn = i + 1
            if kind[i] < 9:
                events.append({"turn": turn, "actor": "user", "text": "where is my order?"})
            elif kind[i] == 9:
                role = "billing_specialist" if picks[i] % 2 else "support_triage"
                events.append({"turn": turn, "actor": "system", "set_role": role})
            else:
                action = "refund_order" if kind[i] == 19 and picks[i] == 0 else vocabulary[picks[i]]
                events.append({"turn": turn, "actor": "assistant", "observed_actions": [action]})
        if k % 50 == 49:
            events[n_events // 2] = {"turn": n_events // 2 + 1, "actor": "assistant",
                                     "observed_actions": ["offer_store_credit"]}
        cases.append({"case_id": f"case-{k:06d}", "contract": CONTRACT, "transcript": events})
    return json.loads(json.dumps(cases))  # independent contract dicts, as if read from files


def loop_evaluate(case: dict[str, Any]) -> tuple[str, float]:
    """The baseline: one case, two plain passes over its events (order, then roles).

    Returns the first fixture error code ("" if none) and the first violation
    turn (NaN if none), the same verdict :func:`multiverse.evaluate_batch` gives.
    """
    contract = case["contract"]
    roles = contract["roles"]
    vocabulary = set(contract["action_vocabulary"])
    active = contract["initial_role"]
    if active not in roles:
        return "unknown_initial_role", float("nan")
    if not case["transcript"]:
        return "empty_transcript", float("nan")
    errors: list[tuple[str, Any]] = []
    previous = None
    for event in case["transcript"]:
        turn = event.get("turn")
        if not isinstance(turn, int) or isinstance(turn, bool) or (previous is not None and turn <= previous):
            errors.append(("invalid_event_order", turn))
        if isinstance(turn, int):
            previous = turn
    violations = []
    for event in case["transcript"]:
        actor = event["actor"]
        requested = event.get("set_role")
        if requested is not None:
            if actor != "system":
                errors.append(("untrusted_role_transition", event["turn"]))
            elif requested not in roles:
                errors.append(("unknown_transition_role", event["turn"]))
            else:
                active = requested
        actions = event.get("observed_actions", [])
        if actions and actor != "assistant":
            errors.append(("actions_on_non_assistant_event", event["turn"]))
            continue
        allowed = set(roles[active]["allowed_actions"])
        for action in actions:
            if action not in vocabulary:
                errors.append(("unknown_action", event["turn"]))
            elif action not in allowed:
                violations.append(event["turn"])
    if errors:
        return errors[0][0], float("nan")
    return "", float(violations[0]) if violations else float("nan")


def _best(fns: list, repeats: int) -> list[tuple[Any, float, float]]:
    """Result, best wall time and best CPU time of each function over ``repeats`` rounds.

    The functions take turns within each round, so that a change in the load
    of a shared machine falls on all of them rather than on one.
    """
    walls = [[] for _ in fns]
    cpus = [[] for _ in fns]
    results: list[Any] = [None] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            start, cpu = time.perf_counter(), time.process_time()
            results[k] = fn()
            walls[k].append(time.perf_counter() - start)
            cpus[k].append(time.process_time() - cpu)
    return [(result, min(w), min(c)) for result, w, c in zip(results, walls, cpus)]


def _arrow(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    for name in ("case_id", "actor", "action", "set_role"):
        out[name] = table[name].astype("string[pyarrow]")
    return out


def bench_inspect(n_events: int, repeats: int) -> tuple[float, float, str]:
    """Best wall and CPU time of ``multiverse inspect`` on one case of ``n_events`` events."""
    events = [
        {"turn": t, "actor": "user", "text": "where is my order?"} if t % 2
        else {"turn": t, "actor": "assistant", "observed_actions": ["lookup_order"]}
        for t in range(1, n_events + 1)
    ]
    events[-1]["observed_actions"] = ["refund_order"]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "long.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"case_id": "long", "contract": CONTRACT, "transcript": events}, handle)
        walls, cpus, first = [], [], ""
        for _ in range(repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "multiverse", "inspect", path], capture_output=True, text=True)
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            first = done.stdout.partition("\n")[0]
        size = os.path.getsize(path)
    return min(walls), min(cpus), f"{first} ({size / 1e6:.1f} MB, exit {done.returncode})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--inspect-events", type=int, default=200_000)
    args = parser.parse_args(argv)

    cases = make_cases(args.cases, args.events)
    n = sum(len(c["transcript"]) for c in cases)
    table = to_events_table(cases)
    arrow = _arrow(table)
    print(f"{args.cases:,} cases x {args.events} events = {n:,} events ({len(table):,} table rows)")

    timed = _best(
        [
            lambda: [loop_evaluate(c) for c in cases],
            lambda: evaluate_batch(cases),
            lambda: evaluate_batch(table, contract=CONTRACT),
            lambda: evaluate_batch(arrow, contract=CONTRACT),
        ],
        args.repeats,
    )
    (baseline, loop_wall, loop_cpu), (from_dicts, dict_wall, dict_cpu) = timed[:2]
    (from_table, table_wall, table_cpu), (from_arrow, arrow_wall, arrow_cpu) = timed[2:]

    errors = np.asarray([e for e, _ in baseline], dtype=object)
    turns = np.asarray([t for _, t in baseline])
    for name, ds in (("dicts", from_dicts), ("categorical table", from_table), ("arrow table", from_arrow)):
        same = (ds["first_error"].values == errors).all() and np.array_equal(
            ds["first_violation_turn"].values, turns, equal_nan=True
        )
        if not same:
            print(f"verdicts differ: {name} vs the baseline loop")
            return 1
    print(f"verdicts agree: {int((errors != '').sum())} invalid, {int(np.isfinite(turns).sum())} violating cases")
    for label, wall, cpu in (
        ("per-event loop (baseline)", loop_wall, loop_cpu),
        ("evaluate_batch, dicts", dict_wall, dict_cpu),
        ("evaluate_batch, categorical table", table_wall, table_cpu),
        ("evaluate_batch, arrow-string table", arrow_wall, arrow_cpu),
    ):
        print(f"{label:38s} {wall:7.3f} s wall {cpu:7.3f} s CPU  {n / wall / 1e6:6.2f} M events/s "
              f"({n / cpu / 1e6:6.2f} per CPU s)  x{loop_wall / wall:5.1f} vs loop")
    wall, cpu, line = bench_inspect(args.inspect_events, args.repeats)
    print(f"inspect, {args.inspect_events:,}-event case: {wall:.2f} s wall, {cpu:.2f} s CPU: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
