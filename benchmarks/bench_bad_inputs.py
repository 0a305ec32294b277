"""Benchmark: a sweep of bad inputs through every command, each in its own process, bounded in time.

``python -m benchmarks.bench_bad_inputs [--jobs 2] [--timeout-s 120] [--only SUBSTRING]``
builds a workspace (two small offline runs, one of a role with a contract, case
and label files), then runs every case below as ``python -m multiverse ...`` in
a fresh process with stdin closed, and prints one line per outcome class and a
markdown table per command.  A case is bad input of one kind through one
command: a file that is empty, binary, not UTF-8, over a cap, a FIFO, a device,
a folder or missing; a damaged run folder (a chunk deleted or changed, a cube
truncated or changed, a broken transcript store, a broken run record); an
option value that cannot work; an output folder that must not be replaced.

A bad outcome is a traceback on stdout or stderr, exit 70 (internal error),
exit 1 (a violation, which bad input never is), any other undocumented code,
more than one line on stderr (unless every line is a located problem of a spec
file, ``path:line: field: message``, one per problem as ``validate`` prints
them), or no end within the time bound (a hang).  Each
case names the codes it accepts (2, bad input, for nearly all).  Exits 1 when
any case had a bad outcome.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["Case", "cases", "main"]

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "specs"
DOCUMENTED = {0, 1, 2, 3, 130, 143}
_PROBLEM = re.compile(r"^\S.*:(\d+|-): \S*: ")
"""A located problem of a spec file (``path:line: field: message``): one per line, as ``validate`` prints them."""


@dataclass(frozen=True)
class Case:
    """One command line given bad input, and the exit codes it may end with."""

    name: str
    args: tuple[str, ...]
    accept: frozenset[int] = frozenset({2})

    @property
    def command(self) -> str:
        """The command (with its action, for commands that have actions) the case goes through."""
        grouped = self.args[0] in ("annotate", "contract", "data", "cache") and len(self.args) > 1
        return " ".join(self.args[:2]) if grouped and not self.args[1].startswith("-") else self.args[0]


def _tiny(**overrides):
    data = {
        "name": "sweep",
        "roles": ["tutor"],
        "systems": {"a": "sim/target-a"},
        "dims": {
            "user_sim": {"plain": "sim/user-plain"},
            "judge": {"strict": "sim/judge-strict"},
            "condition": {"short": {"horizon": 2, "search": "seed_only"}},
        },
        "replicates": 2,
        "items": 2,
        "specs": str(SPECS),
        "sim": {"targets": {"a": {}}, "judges": {"strict": {}}, "users": {"plain": {}}},
    }
    data.update(overrides)
    return data


def _multiverse(args, cwd: Path, *, timeout_s: float) -> tuple[int | None, str, str, float]:
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(REPO), "MULTIVERSE_CACHE": str(cwd / "default-cache")}
    env.pop("MULTIVERSE_DATA_MIRROR", None)
    process = subprocess.Popen([sys.executable, "-m", "multiverse", *map(str, args)], cwd=cwd, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None, "", "", time.perf_counter() - started
    return process.returncode, stdout, stderr, time.perf_counter() - started


def _bad_files(root: Path) -> dict[str, Path]:
    """Files (and non-files) that no command can use as its input, by kind."""
    folder = root / "bad"
    folder.mkdir()
    texts = {
        "empty": b"",
        "binary": bytes(range(256)) * 8,
        "nul-bytes": b"name: a\x00b\n",
        "bel-byte": b"name: a\x07b\n",
        "esc-byte": b"name: a\x1b[31mb\n",
        "bom-only": b"\xef\xbb\xbf",
        "not-utf8": b"name: caf\xe9\nroles: [tutor]\n",
        "utf16": "name: x\nroles: [tutor]\n".encode("utf-16"),
        "over-cap": b"#" * 300_000 + b"\nname: x\n",
        "deep-nesting": b"[" * 5000 + b"]" * 5000,
        "alias-bomb": (b'a: &a ["x","x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
                       b"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                       b"e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"),
        "truncated-json": b'{"case_id": "x", "contract": {"version": ',
        "duplicate-keys": b'{"case_id": "a", "case_id": "b", "contract": {}, "transcript": []}',
        "nan-json": b'{"case_id": NaN}',
        "json-array": b"[1, 2, 3]",
        "yaml-tabs": b"name:\n\t- x\n",
        "yaml-list": b"- a\n- b\n",
        "jsonl-garbage": b'{"task": 1}\nnot json\n',
    }
    paths = {}
    for name, data in texts.items():
        path = folder / f"{name}.yaml"
        path.write_bytes(data)
        paths[name] = path
    os.mkfifo(folder / "fifo.yaml")
    paths["fifo"] = folder / "fifo.yaml"
    paths["dev-zero"] = Path("/dev/zero")
    paths["dev-null"] = Path("/dev/null")
    (folder / "a-folder.yaml").mkdir()
    paths["folder"] = folder / "a-folder.yaml"
    paths["missing"] = folder / "missing.yaml"
    os.symlink(folder / "loop-b.yaml", folder / "loop-a.yaml")
    os.symlink(folder / "loop-a.yaml", folder / "loop-b.yaml")
    paths["symlink-loop"] = folder / "loop-a.yaml"
    return paths


def _run(root: Path, name: str, data: dict, *, timeout_s: float) -> Path:
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code, _, stderr, _ = _multiverse(["run", path, "--out", root / name, "--cache", root / "cache", "--quiet"], root,
                                     timeout_s=timeout_s)
    if code != 0:
        raise SystemExit(f"the sweep's run {name} failed ({code}): {stderr}")
    return root / name


def _damaged_runs(root: Path, good: Path) -> dict[str, Path]:
    """Copies of a good run folder, each damaged one way."""
    out: dict[str, Path] = {}

    def copy(name: str) -> Path:
        target = root / "damaged" / name
        shutil.copytree(good, target, symlinks=True)
        out[name] = target
        return target

    chunks = sorted(p for p in (good / "cube.zarr" / "severity" / "c").rglob("*") if p.is_file())
    relative = chunks[-1].relative_to(good)
    (copy("chunk-deleted") / relative).unlink()
    chunk = copy("chunk-changed") / relative
    chunk.write_bytes(chunk.read_bytes()[:-3] + b"\x00\x00\x00")
    for name in ("chunk-deleted", "chunk-changed"):  # the folder's cube is then the damaged zarr store
        (out[name] / "cube.nc").unlink()
    for name in ("nc-truncated", "nc-changed", "nc-empty"):
        target = copy(name)
        data = (target / "cube.nc").read_bytes()
        shutil.rmtree(target / "cube.zarr")
        changed = {"nc-truncated": data[: len(data) // 3], "nc-empty": b"",
                   "nc-changed": data[: len(data) // 2] + bytes([data[len(data) // 2] ^ 0x55]) + data[len(data) // 2 + 1:]}
        (target / "cube.nc").write_bytes(changed[name])
    # A folder with a cube.nc reads it and never opens cube.zarr, so each damaged store stands alone.
    for name, metadata, text in (("zarr-metadata-garbage", "zarr.json", "{not json"),
                                 ("zarr-only-garbage-metadata", "severity/zarr.json", '{"zarr_format": 3}')):
        target = copy(name)
        (target / "cube.nc").unlink()
        (target / "cube.zarr" / metadata).write_text(text)
    target = copy("no-cube")
    (target / "cube.nc").unlink()
    shutil.rmtree(target / "cube.zarr")
    for how in ("random-bytes", "truncated", "wrong-schema", "a-folder", "empty"):
        store = copy(f"transcripts-{how}") / "transcripts.sqlite"
        data = store.read_bytes()
        store.unlink()
        if how == "random-bytes":
            store.write_bytes(os.urandom(8192))
        elif how == "truncated":
            store.write_bytes(data[:3000])
        elif how == "wrong-schema":
            with sqlite3.connect(store) as conn:
                conn.execute("CREATE TABLE transcripts (name TEXT)")
        elif how == "a-folder":
            store.mkdir()
        else:
            store.write_bytes(b"")
    (copy("unparseable-garbage") / "unparseable.jsonl").write_text('{"transcript_id": 3}\nnot json\n')
    return out


def cases(root: Path, *, timeout_s: float) -> list[Case]:
    """Every case of the sweep (building the workspace under ``root``)."""
    good = _run(root, "good", _tiny(), timeout_s=timeout_s)
    support = _run(root, "support", _tiny(roles=["support"], replicates=1), timeout_s=timeout_s)
    bad = _bad_files(root)
    damaged = _damaged_runs(root, good)
    experiment = root / "good.yaml"
    foreign = root / "foreign"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("mine")
    (root / "afile.txt").write_text("mine")
    out: list[Case] = []

    def add(name: str, *args: object, accept: set[int] | None = None) -> None:
        out.append(Case(name, tuple(str(a) for a in args), frozenset(accept or {2})))

    # A. files no command can read, through every command that reads a file
    for kind, path in bad.items():
        add(f"validate {kind}", "validate", path)
        add(f"plan {kind}", "plan", path, "--cache", root / "cache")
        add(f"run {kind}", "run", path, "--out", root / "never", "--cache", root / "cache", "--quiet")
        add(f"inspect {kind}", "inspect", path)
        add(f"contract check {kind}", "contract", "check", path)
        add(f"contract diff {kind}", "contract", "diff", path, "--old", "support", "--new", "support")
        add(f"annotate import {kind}", "annotate", "import", path, "--cube", good, "--out", root / "never.nc")
        add(f"show {kind}", "show", path, "--item", "0")
        add(f"report {kind}", "report", path, "--out", root / "never-report")
    # B. damaged run folders, through every command that reads the damaged part (report reads no transcript)
    for kind, folder in damaged.items():
        if kind == "unparseable-garbage":
            continue
        add(f"show {kind}", "show", folder, "--replicate", "0", "--item", "0", "--text", "--reasons")
        if not kind.startswith("transcripts-"):
            add(f"report {kind}", "report", folder, "--out", root / "never-report", "--n-boot", "5", "--format", "svg")
        add(f"view {kind}", "view", folder, "--out", root / "never-site", "--no-figures")
        add(f"export-cases {kind}", "export-cases", folder, "--out", root / "never-cases", "--specs", SPECS)
        add(f"annotate export {kind}", "annotate", "export", folder, "--n", "1", "--out", root / "never-tasks")
        add(f"export {kind}", "export", folder, "--format", "parquet", "--out", root / "never-parquet")
    add("show --raw unparseable-garbage", "show", damaged["unparseable-garbage"], "--replicate", "0", "--item", "0",
        "--raw")
    # C. option values that cannot work
    for option, value in (("--max-cost", "nan"), ("--max-cost", "inf"), ("--max-cost", "-1"), ("--max-cost", "x"),
                          ("--max-calls", "-5"), ("--max-calls", "1.5"), ("--max-failed-share", "nan"),
                          ("--max-failed-share", "2"), ("--max-failed-share", "-0.1"), ("--jobs", "0"),
                          ("--jobs", "-3"), ("--backend", "ray"), ("--backend", "dask"), ("--backend", "nonsense")):
        add(f"run {option} {value}", "run", experiment, "--out", root / "never", "--cache", root / "cache", "--quiet",
            option, value)
    for option, value in (("--n-boot", "0"), ("--n-boot", "-5"), ("--n-boot", "abc"), ("--format", "gif"),
                          ("--seed", "x")):
        add(f"report {option} {value}", "report", good, "--out", root / "never-report", option, value)
        add(f"view {option} {value}", "view", good, "--out", root / "never-site", option, value)
    for option, value in (("--n", "0"), ("--n", "-1"), ("--n", "abc"), ("--stratify", "bogus"),
                          ("--format", "pdf"), ("--seed", "x")):
        add(f"annotate export {option} {value}", "annotate", "export", good, "--n", "1", "--out", root / "never-tasks",
            option, value)
    for option, value in (("--item", "abc"), ("--item", "99"), ("--system", "nope"), ("--role", "nope"),
                          ("--replicate", "-1"), ("--judge", "x")):
        add(f"show {option} {value}", "show", good, option, value)
    add("show --text with no store", "show", damaged["transcripts-a-folder"], "--item", "0", "--replicate", "0",
        "--text", "--transcripts", root / "absent.sqlite")
    add("export --format csv", "export", good, "--format", "csv", "--out", root / "never-parquet")
    for option, value in (("--threads", "0"), ("--threads", "x"), ("--context", "10"), ("--port", "abc"),
                          ("--port", "-1"), ("--port", "70000"), ("--weights", root / "missing.gguf"),
                          ("--weights", bad["binary"])):
        add(f"serve-local {option} {value}", "serve-local", option, value)
    add("data fetch missing mirror", "data", "fetch", "--mirror", root / "nowhere", "--dest", root / "data")
    add("data fetch file mirror", "data", "fetch", "--mirror", root / "afile.txt", "--dest", root / "data")
    add("data fetch file dest", "data", "fetch", "--mirror", foreign, "--dest", root / "afile.txt")
    add("data fetch empty mirror", "data", "fetch", "--mirror", foreign, "--dest", root / "data")
    add("data path unknown", "data", "path", "no/such/file.json", "--dest", root / "data")
    add("data path not fetched", "data", "path", "tau-bench/LICENSE", "--dest", root / "data")
    add("data verify file dest", "data", "verify", "--dest", root / "afile.txt")
    add("cache audit of a file", "cache", "audit", "--cache", root / "afile.txt")
    add("cache audit of garbage", "cache", "audit", "--cache", root / "bad")
    add("cache audit missing", "cache", "audit", "--cache", root / "no-cache")
    add("inspect --contract missing", "inspect", REPO / "examples" / "cases" / "pass.json", "--contract",
        root / "missing.yaml")
    add("contract check --gate garbage", "contract", "check", REPO / "examples" / "cases", "--gate", bad["binary"])
    add("contract check --gate fifo", "contract", "check", REPO / "examples" / "cases", "--gate", bad["fifo"])
    add("contract diff --old garbage", "contract", "diff", REPO / "examples" / "cases", "--old", bad["binary"], "--new",
        "support")
    add("contract diff --old missing", "contract", "diff", REPO / "examples" / "cases", "--old", "nosuch", "--new",
        "support")
    add("unknown command", "frobnicate")
    for command in ("run", "plan", "show", "report", "view", "inspect", "export-cases", "annotate", "contract", "data",
                    "cache", "validate", "export"):
        add(f"{command} with no arguments", command)
        add(f"{command} with an unknown option", command, "--no-such-option")
    add("serve-local with an unknown option", "serve-local", "--no-such-option")  # with none it would serve
    # D. output folders that must not be replaced
    for target_name, target in (("a-file", root / "afile.txt"), ("a-foreign-folder", foreign), ("the-cwd", "."),
                                ("the-parent", ".."), ("the-run-folder", good), ("the-cache", root / "cache")):
        if target != good:  # a run's own folder is where a rerun goes
            add(f"run --out {target_name}", "run", experiment, "--out", target, "--cache", root / "cache", "--quiet")
        add(f"report --out {target_name}", "report", good, "--out", target)
        add(f"view --out {target_name}", "view", good, "--out", target, "--no-figures")
        add(f"export-cases --out {target_name}", "export-cases", support, "--out", target, "--specs", SPECS)
        add(f"annotate export --out {target_name}", "annotate", "export", good, "--n", "1", "--out", target)
        add(f"export --out {target_name}", "export", good, "--format", "parquet", "--out", target)
    # E. experiments with values validate must refuse before plan or run could crash on them
    experiments = {
        "cache-nul": _tiny(cache="a\0b"),
        "specs-nul": _tiny(specs="a\0b"),
        "nan-pressure": _tiny(dims={**_tiny()["dims"], "condition": {"c": {"horizon": 2, "search": "seed_only",
                                                                         "pressure": float("nan")}}}),
        "replicates-huge": _tiny(replicates=10**30),
        "items-negative": _tiny(items=-2),
        "unknown-role": _tiny(roles=["no_such_role"]),
        "role-path": _tiny(roles=["../../etc/passwd"]),
        "judge-unknown-kind": _tiny(dims={**_tiny()["dims"], "judge": {"j": {"frobnicate": 1}}}),
        "params-seed": _tiny(systems={"a": {"model": "sim/target-a", "params": {"seed": 3}}}),
        "max-calls-negative": _tiny(max_calls=-1),
        "concurrency-zero": _tiny(concurrency=0),
        "budget-garbage": _tiny(budget={"rounds": "many"}),
    }
    for name, data in experiments.items():
        path = root / "experiments" / f"{name}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        add(f"validate {name}", "validate", path)
        add(f"plan {name}", "plan", path, "--cache", root / "cache")
        add(f"run {name}", "run", path, "--out", root / "never", "--cache", root / "cache", "--quiet")
    return out


def _outcome(case: Case, code: int | None, stdout: str, stderr: str) -> str:
    if code is None:
        return "hang"
    if "Traceback" in stdout + stderr:
        return "traceback"
    if code == 70:
        return "exit 70"
    if code == 1 and 1 not in case.accept:
        return "exit 1"
    if code not in DOCUMENTED:
        return f"exit {code} (undocumented)"
    if code not in case.accept:
        return f"exit {code} (expected {'/'.join(map(str, sorted(case.accept)))})"
    lines = stderr.strip().splitlines()
    if len(lines) > 1 and not all(_PROBLEM.match(line) for line in lines):
        return "more than one line"
    return "ok"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--timeout-s", type=float, default=120.0, help="a case taking longer is a hang (default 120)")
    parser.add_argument("--only", default="", help="run only cases whose name holds this text")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="mv-bad-inputs-"))
    try:
        started = time.perf_counter()
        sweep = [case for case in cases(root, timeout_s=args.timeout_s) if args.only in case.name]
        print(f"{len(sweep)} cases, workspace {root}", file=sys.stderr, flush=True)
        results = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(_multiverse, case.args, root, timeout_s=args.timeout_s): case for case in sweep}
            for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
                case = futures[future]
                code, stdout, stderr, seconds = future.result()
                outcome = _outcome(case, code, stdout, stderr)
                results.append((case, code, outcome, seconds, stderr.strip().splitlines()[:1]))
                if outcome != "ok":
                    print(f"  BAD {outcome}: {case.name}: {(stderr or stdout).strip()[:300]}", file=sys.stderr,
                          flush=True)
                if done % 25 == 0:
                    print(f"  {done}/{len(sweep)} done", file=sys.stderr, flush=True)
        wall = time.perf_counter() - started
    finally:
        shutil.rmtree(root, ignore_errors=True)
    by_outcome = collections.Counter(outcome for _, _, outcome, _, _ in results)
    by_code = collections.Counter(code for _, code, _, _, _ in results)
    print(f"{len(results)} bad inputs in {wall:.0f} s: " + ", ".join(f"{k} {v}" for k, v in sorted(by_outcome.items())))
    print("exit codes: " + ", ".join(f"{k} {v}" for k, v in sorted(by_code.items(), key=lambda kv: str(kv[0]))))
    print(f"slowest case: {max(s for _, _, _, s, _ in results):.1f} s")
    print("\n| command | cases | exit 2 | other accepted | bad |\n| --- | --- | --- | --- | --- |")
    per_command: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for case, code, outcome, _, _ in results:
        counter = per_command[case.command]
        counter["cases"] += 1
        counter["exit 2"] += code == 2 and outcome == "ok"
        counter["other"] += code != 2 and outcome == "ok"
        counter["bad"] += outcome != "ok"
    for command, counter in sorted(per_command.items()):
        print(f"| {command} | {counter['cases']} | {counter['exit 2']} | {counter['other']} | {counter['bad']} |")
    print(json.dumps({"cases": len(results), "outcomes": by_outcome}, sort_keys=True), file=sys.stderr)
    return 0 if set(by_outcome) <= {"ok"} else 1


if __name__ == "__main__":
    raise SystemExit(main())
