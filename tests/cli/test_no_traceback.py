"""Every documented failure is one line and a documented exit code; nothing prints a traceback."""

from __future__ import annotations

import importlib
import sqlite3

import pytest
import xarray as xr
import yaml
from cli_helpers import tiny

from multiverse.llm.cache import DB_NAME, LAYOUT_VERSION


def _broken_experiments():
    def with_condition(**condition):
        data = tiny()
        data["dims"]["condition"] = {"short": {"horizon": 2, "search": "seed_only", **condition}}
        return data

    def with_target(**target):
        data = tiny()
        data["sim"]["targets"]["a"] = target
        return data

    def with_params(**params):
        return tiny(systems={"a": {"model": "sim/target-a", "params": params}})

    cases = {
        "nan-pressure": with_condition(pressure=float("nan")),
        "inf-pressure": with_condition(pressure=float("inf")),
        "inf-latency": with_target(latency_ms=float("inf")),
        "nan-escalation": with_target(escalation=float("nan")),
        "nan-param": with_params(temperature=float("nan")),
        "role-with-slash": tiny(roles=["../specs/roles/tutor"]),
        "role-absolute": tiny(roles=["/etc/passwd"]),
        "role-5000-chars": tiny(roles=["r" * 5000]),
        "role-dotfile": tiny(roles=[".hidden"]),
        "replicates-10e30": tiny(replicates=10**30),
        "items-10e12": tiny(items=10**12),
        "horizon-10e9": with_condition(horizon=10**9),
        "concurrency-10e6": tiny(concurrency=10**6),
        "seed-negative": tiny(seed=-1),
        "seed-10e30": tiny(seed=10**30),
        "budget-huge": tiny(items=None, budget={"rounds": 10**6, "conversations": 10**6}),
        "plan-too-large": tiny(items=100_000, replicates=1_000),
        "max-calls-huge": tiny(max_calls=10**20),
        "cost-inf": tiny(max_cost_usd=float("inf")),
        "rpm-nan": tiny(rate_limits={"sim/*": {"rpm": float("nan")}}),
    }
    return [pytest.param(data, id=name) for name, data in cases.items()]


@pytest.mark.parametrize("data", _broken_experiments())
@pytest.mark.parametrize("command", ["validate", "plan"])
def test_validate_and_plan_refuse_what_would_crash_a_run(command, data, experiment_file, cli):
    path = experiment_file(yaml.safe_dump(data, sort_keys=False))
    code, out, err = cli(command, path)
    assert code == 2, out + err
    assert "Traceback" not in out + err
    problems = (out if command == "validate" else err).strip().splitlines()
    assert problems and all(line.startswith(str(path)) for line in problems), problems


def _corrupt_cache(folder):
    folder.mkdir()
    (folder / DB_NAME).write_bytes(b"this is not a database" * 100)


def _newer_cache(folder):
    folder.mkdir()
    with sqlite3.connect(folder / DB_NAME) as conn:
        conn.execute(f"PRAGMA user_version = {LAYOUT_VERSION + 1}")


def _file_cache(folder):
    folder.write_text("not a folder")


def _foreign_sqlite(folder):
    folder.mkdir()
    with sqlite3.connect(folder / DB_NAME) as conn:
        conn.execute("CREATE TABLE notes (x TEXT)")


CACHES = {"corrupt": _corrupt_cache, "newer-layout": _newer_cache, "a-file": _file_cache, "foreign-sqlite": _foreign_sqlite}


@pytest.mark.parametrize("kind", [pytest.param(k, id=k) for k in CACHES])
@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("run", "--out", "{out}"), id="run"),
        pytest.param(("run", "--offline", "--out", "{out}"), id="run-offline"),
        pytest.param(("plan",), id="plan"),
    ],
)
def test_an_unusable_cache_is_one_line_and_exit_2(kind, command, tmp_path, experiment_file, cli):
    if kind == "foreign-sqlite":
        pytest.skip("a SQLite file of other tables gains the cache's tables: only the audit refuses it")
    path = experiment_file()
    cache = tmp_path / "cache"
    CACHES[kind](cache)
    args = [a.format(out=tmp_path / "out") for a in command]
    code, out, err = cli(args[0], path, *args[1:], "--cache", cache)
    assert code == 2, err
    assert "Traceback" not in out + err and len(err.strip().splitlines()) == 1, err
    assert "cache" in err


@pytest.mark.parametrize("kind", [pytest.param(k, id=k) for k in CACHES])
def test_cache_audit_refuses_an_unusable_cache_without_writing_to_it(kind, tmp_path, cli):
    cache = tmp_path / "cache"
    CACHES[kind](cache)
    before = {p.name: p.read_bytes() for p in cache.iterdir()} if cache.is_dir() else cache.read_bytes()
    code, out, err = cli("cache", "audit", "--cache", cache)
    assert code == 2 and "Traceback" not in out + err and len(err.strip().splitlines()) == 1, err
    after = {p.name: p.read_bytes() for p in cache.iterdir()} if cache.is_dir() else cache.read_bytes()
    assert after == before


def test_cache_audit_opens_the_database_read_only(tmp_path, experiment_file, cli):
    cache = tmp_path / "cache"
    cache.mkdir()
    with sqlite3.connect(cache / DB_NAME) as conn:  # an old-looking cache: a journal, no replays table, version 0
        conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT, text TEXT, tool_calls TEXT, usage TEXT,"
                     " cost_usd REAL, latency_s REAL, created REAL, versions TEXT)")
        conn.execute("CREATE TABLE replays (key TEXT PRIMARY KEY, response_keys TEXT, fingerprint TEXT, payload BLOB, created REAL)")
    before = (cache / DB_NAME).read_bytes()
    code, out, _ = cli("cache", "audit", "--cache", cache, "--json")
    assert code == 0 and '"entries": 0' in out
    assert (cache / DB_NAME).read_bytes() == before
    assert sorted(p.name for p in cache.iterdir()) == [DB_NAME]  # no -wal, no -shm: nothing switched to WAL
    with sqlite3.connect(cache / DB_NAME) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("run", "{exp}", "--out", "{tmp}/o", "--backend", "nonsense"), id="run-unknown-backend"),
        pytest.param(("run", "{exp}", "--out", "{tmp}/o", "--backend", "threading", "--jobs", "0"), id="run-jobs-0"),
        pytest.param(("run", "{exp}", "--out", "{tmp}/o", "--jobs", "x"), id="run-jobs-not-int"),
        pytest.param(("run", "{exp}"), id="run-without-out"),
        pytest.param(("run", "{tmp}/missing.yaml", "--out", "{tmp}/o"), id="run-missing-file"),
        pytest.param(("plan", "{tmp}"), id="plan-a-folder"),
        pytest.param(("report", "{tmp}/missing", "--out", "{tmp}/r"), id="report-missing-cube"),
        pytest.param(("report", "{tmp}/not-a-cube.nc", "--out", "{tmp}/r"), id="report-not-netcdf"),
        pytest.param(("report", "{tmp}/other.nc", "--out", "{tmp}/r"), id="report-netcdf-not-cube"),
        pytest.param(("report", "{tmp}/other.nc", "--out", "{tmp}/r", "--n-boot", "-5"), id="report-negative-n-boot"),
        pytest.param(("show", "{tmp}/other.nc"), id="show-netcdf-not-cube"),
        pytest.param(("show", "{tmp}/not-a-cube.nc"), id="show-not-netcdf"),
        pytest.param(("show", "{tmp}/missing.nc"), id="show-missing"),
        pytest.param(("validate", "{tmp}/latin1.yaml"), id="validate-not-utf8"),
        pytest.param(("validate", "{tmp}/missing.yaml"), id="validate-missing"),
        pytest.param(("validate", "{tmp}/huge.yaml"), id="validate-over-the-size-cap"),
        pytest.param(("validate", "{tmp}/bomb.yaml"), id="validate-alias-bomb"),
        pytest.param(("validate", "{tmp}/deep.yaml"), id="validate-deep-nesting"),
        pytest.param(("inspect", "{tmp}/latin1.yaml"), id="inspect-not-json"),
        pytest.param(("cache",), id="cache-without-action"),
        pytest.param(("cache", "audit", "--cache", "{tmp}/nothing"), id="cache-audit-missing"),
        pytest.param(("nonsense",), id="unknown-command"),
    ],
)
def test_broken_cli_input_is_one_line_and_exit_2(args, tmp_path, experiment_file, cli):
    exp = experiment_file()
    (tmp_path / "not-a-cube.nc").write_bytes(b"\x00\x01garbage" * 50)
    xr.Dataset({"x": ("t", [1, 2, 3])}).to_netcdf(tmp_path / "other.nc", engine="netcdf4")
    (tmp_path / "latin1.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    (tmp_path / "huge.yaml").write_text("x: " + "a" * 300_000)
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    bomb += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]" for i in range(8)]
    (tmp_path / "bomb.yaml").write_text("\n".join(bomb) + "\n")
    (tmp_path / "deep.yaml").write_text("[" * 5000 + "]" * 5000)
    code, out, err = cli(*(a.format(exp=exp, tmp=tmp_path) for a in args))
    assert code == 2, (out, err)
    assert "Traceback" not in out + err
    lines = [line for line in err.strip().splitlines() if not line.startswith(("usage:", " "))]
    assert len(lines) == 1, err


def test_ctrl_c_ends_with_one_line_saying_how_to_resume(experiment_file, tmp_path, cli, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module("multiverse._run.runner"), "execute_units", interrupted)
    code, out, err = cli("run", experiment_file(), "--out", tmp_path / "out", "--cache", tmp_path / "cache")
    assert code == 130
    assert err.strip().splitlines() == [
        "multiverse run: interrupted; every finished model call is cached; rerun the same command to resume"
    ]


def test_an_internal_error_is_one_line_naming_the_written_traceback(experiment_file, tmp_path, cli, monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tracebacksecret123")

    def broken(*args, **kwargs):
        raise ZeroDivisionError("tracebacksecret123 in a bug")

    monkeypatch.setattr(importlib.import_module("multiverse._run.runner"), "execute_units", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    code, out, err = cli("run", experiment_file(), "--out", tmp_path / "o", "--cache", tmp_path / "cache")
    assert code == 70 and "Traceback" not in out + err  # a bug is neither a violation (1) nor bad input (2)
    (line,) = err.strip().splitlines()
    assert line.startswith("multiverse run: internal error (ZeroDivisionError") and "tracebacksecret123" not in line
    written = line.rsplit("traceback in ", 1)[1]
    text = open(written, encoding="utf-8").read()
    assert "Traceback" in text and "ZeroDivisionError" in text and "tracebacksecret123" not in text


def test_redacted_output_passes_whole_lines_and_progress_redraws_through():
    import io

    from multiverse.cli._guard import _RedactingStream
    from multiverse.llm.redact import redact

    sink = io.StringIO()
    stream = _RedactingStream(sink, redact)
    stream.write("key https://u:pw-secret-1@h/v1")
    assert sink.getvalue() == ""  # half a line waits, so a secret split over writes is seen whole
    stream.write(" done\n 50%|#####\r")
    assert sink.getvalue() == "key https://[REDACTED]@h/v1 done\n 50%|#####\r"
    stream.write("tail")
    stream.flush()
    assert sink.getvalue().endswith("\rtail")


@pytest.mark.parametrize(
    ("raised", "code", "says"),
    [
        pytest.param(ModuleNotFoundError("No module named 'zarr'", name="zarr"), 2, "needs 'zarr', not installed",
                     id="a-missing-dependency-is-bad-input"),
        pytest.param(SyntaxError("broken build"), 70, "internal error (SyntaxError", id="a-broken-module-is-internal"),
    ],
)
def test_a_subcommand_that_cannot_be_imported_ends_in_one_line(raised, code, says, cli, monkeypatch, tmp_path):
    real = importlib.import_module

    def failing(name, *args, **kwargs):
        if name == "multiverse.cli.show_cmd":
            raise raised
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", failing)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    exit_code, out, err = cli("show", tmp_path / "run")
    assert exit_code == code and "Traceback" not in out + err
    (line,) = err.strip().splitlines()
    assert line.startswith("multiverse show: ") and says in line
