"""Bad input of every known kind ends in one line and exit 2 (or its documented code), never in an internal error."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import xarray as xr
import yaml
from cli_helpers import SPECS, tiny

import multiverse

TIMEOUT_S = 120
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def run_folder(tmp_path, experiment_file, cli):
    path = experiment_file(yaml.safe_dump(tiny(), sort_keys=False))
    out = tmp_path / "out"
    code, _, stderr = cli("run", path, "--out", out, "--cache", tmp_path / "cache", "--quiet")
    assert code == 0, stderr
    return out


def _one_line(code: int, stdout: str, stderr: str, expected: int = 2) -> None:
    assert code == expected, (code, stdout, stderr)
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert "Traceback" not in stdout + stderr


def _break_store(store: Path, how: str) -> None:
    good = store.read_bytes()
    store.unlink()
    if how == "random-bytes":
        store.write_bytes(os.urandom(4096))
    elif how == "truncated":
        store.write_bytes(good[:2048])
    elif how == "wrong-schema":
        with sqlite3.connect(store) as conn:
            conn.execute("CREATE TABLE notes (x TEXT)")
    elif how == "a-folder":
        store.mkdir()
    for side in ("-wal", "-shm"):
        Path(f"{store}{side}").unlink(missing_ok=True)


STORE_COMMANDS = {
    "show-text": lambda out, tmp: ("show", out, "--text"),
    "view": lambda out, tmp: ("view", out, "--out", tmp / "site", "--no-figures"),
    "export-cases": lambda out, tmp: ("export-cases", out, "--out", tmp / "cases", "--specs", SPECS),
    "annotate-export": lambda out, tmp: ("annotate", "export", out, "--n", "1", "--out", tmp / "tasks"),
    "export": lambda out, tmp: ("export", out, "--format", "parquet", "--out", tmp / "parquet"),
}


@pytest.mark.parametrize("how", ["random-bytes", "truncated", "wrong-schema", "a-folder"])
@pytest.mark.parametrize("command", list(STORE_COMMANDS))
def test_a_broken_transcript_store_is_one_line_and_exit_2(command, how, run_folder, tmp_path, cli):
    _break_store(run_folder / "transcripts.sqlite", how)
    _one_line(*cli(*STORE_COMMANDS[command](run_folder, tmp_path)))


def test_view_of_a_netcdf_file_without_severity_is_exit_2(tmp_path, cli):
    xr.Dataset({"x": ("a", [1, 2])}).to_netcdf(tmp_path / "other.nc")
    _one_line(*cli("view", tmp_path / "other.nc", "--out", tmp_path / "site", "--no-figures"))


def test_export_cases_of_a_truncated_cube_is_exit_2(run_folder, tmp_path, cli):
    cube = run_folder / "cube.nc"
    cube.write_bytes(cube.read_bytes()[:5000])
    shutil.rmtree(run_folder / "cube.zarr")
    _one_line(*cli("export-cases", run_folder, "--out", tmp_path / "cases", "--specs", SPECS))


@pytest.mark.parametrize("command", ["validate", "plan"])
def test_a_cache_path_with_a_nul_character_is_exit_2(command, experiment_file, cli):
    path = experiment_file(yaml.safe_dump(tiny(cache="a\0b"), sort_keys=False))
    code, stdout, stderr = cli(command, path)
    assert code == 2 and "cache" in stdout + stderr and "Traceback" not in stdout + stderr


@pytest.mark.parametrize(
    "option",
    [
        pytest.param(("--max-cost", "nan"), id="max-cost-nan"),
        pytest.param(("--max-cost", "-1"), id="max-cost-negative"),
        pytest.param(("--max-calls", "-5"), id="max-calls-negative"),
        pytest.param(("--max-failed-share", "nan"), id="max-failed-share-nan"),
        pytest.param(("--max-failed-share", "1.5"), id="max-failed-share-over-1"),
        pytest.param(("--backend", "ray"), id="ray-not-installed"),
        pytest.param(("--backend", "dask"), id="dask-without-a-cluster"),
    ],
)
def test_a_run_option_that_cannot_work_is_refused_before_any_call(option, experiment_file, tmp_path, cli):
    if option[1] == "ray":
        pytest.importorskip("joblib")
        if shutil.which("ray") or _importable("ray"):
            pytest.skip("ray is installed here")
    code, stdout, stderr = cli("run", experiment_file(), "--out", tmp_path / "out", "--cache", tmp_path / "cache",
                               "--quiet", *option)
    _one_line(code, stdout, stderr)
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_a_cache_row_with_damaged_json_is_exit_2(run_folder, experiment_file, tmp_path, cli):
    with sqlite3.connect(next((tmp_path / "cache").glob("*.sqlite3"))) as conn:
        conn.execute("UPDATE responses SET usage = '{not json'")
        conn.execute("DELETE FROM replays")
    code, stdout, stderr = cli("run", experiment_file(yaml.safe_dump(tiny(), sort_keys=False)), "--out",
                               tmp_path / "again", "--cache", tmp_path / "cache", "--quiet", "--rebuild")
    _one_line(code, stdout, stderr)


@pytest.mark.parametrize("limit", [20_000, 60_000], ids=["20kb", "60kb"])
def test_a_full_disk_under_the_output_is_exit_2(limit, experiment_file, tmp_path, cli):
    """Files may not grow past ``limit`` bytes (as on a full disk); the cache is warm, so only outputs are written."""
    import resource

    path = experiment_file()
    assert cli("run", path, "--out", tmp_path / "warm", "--cache", tmp_path / "cache", "--quiet")[0] == 0

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    process = subprocess.run(
        [sys.executable, "-m", "multiverse", "run", path, "--out", tmp_path / "out", "--cache", tmp_path / "cache",
         "--quiet"], capture_output=True, text=True, preexec_fn=small_files, timeout=TIMEOUT_S,
        env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
    _one_line(process.returncode, process.stdout, process.stderr)
    assert not (tmp_path / "out").exists() and list(tmp_path.glob(".out.*")) == []


def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "multiverse", *map(str, args)], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_sigterm_ends_a_run_like_ctrl_c_with_exit_143_and_no_staging_left(tmp_path):
    data = tiny(items=20, replicates=3)
    data["sim"]["targets"]["a"]["latency_ms"] = 200  # minutes of waiting on the target: the signal lands mid-run under any load
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    process = _start(["run", path, "--out", tmp_path / "out", "--cache", tmp_path / "cache", "--quiet"], tmp_path)
    deadline = time.monotonic() + TIMEOUT_S
    while not list(tmp_path.glob(".out.new-*")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    time.sleep(0.5)
    assert process.poll() is None, "the run ended before it could be signalled"
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=TIMEOUT_S)
    assert process.returncode == 143, stderr
    assert stderr.strip().splitlines() == [
        "multiverse run: terminated; every finished model call is cached; rerun the same command to resume"
    ]
    assert not (tmp_path / "out").exists() and list(tmp_path.glob(".out.*")) == []


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b"], ids=["nul", "bel", "esc"])
def test_yaml_with_a_control_character_is_one_located_line(char, experiment_file, cli):
    path = experiment_file("name: tiny\nroles: [tutor]\ndescription: a" + char + "b\n")
    code, stdout, stderr = cli("validate", path)
    assert code == 2
    (line,) = stdout.strip().splitlines()
    assert line.startswith(f"{path}:3:"), line


def test_reading_a_runs_zarr_store_prints_no_warning(run_folder, cli):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        multiverse.open_cube(run_folder / "cube.zarr", lazy=False)
        with xr.open_zarr(run_folder / "cube.zarr") as plain:
            plain.load()
    assert [str(w.message)[:80] for w in caught if "onsolidated" in str(w.message)] == []
    code, stdout, stderr = cli("show", run_folder / "cube.zarr", "--item", "0")
    assert code == 0 and stderr == "", stderr


@pytest.mark.parametrize(
    ("command", "target"),
    [
        pytest.param("inspect", "/dev/zero", id="inspect-dev-zero"),
        pytest.param("inspect", "fifo", id="inspect-a-fifo"),
        pytest.param("validate", "fifo", id="validate-a-fifo"),
        pytest.param("contract", "fifo", id="contract-check-a-fifo"),
    ],
)
def test_a_device_or_fifo_is_refused_at_once(command, target, tmp_path):
    if target == "fifo":
        target = tmp_path / "case.json"
        os.mkfifo(target)
    args = [command, target] if command != "contract" else ["contract", "check", target]
    process = _start(args, tmp_path)
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"multiverse {command} {target} did not end within {TIMEOUT_S} s")
    assert process.returncode == 2, (stdout, stderr)
    assert "regular file" in stdout + stderr and "Traceback" not in stdout + stderr


@pytest.mark.parametrize("case", ["missing-mirror", "file-as-mirror", "file-as-dest"])
def test_data_fetch_with_a_bad_mirror_or_destination_is_bad_input_not_a_violation(case, tmp_path, cli):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "mirror").mkdir()
    mirror, dest = {
        "missing-mirror": (tmp_path / "nowhere", tmp_path / "data"),
        "file-as-mirror": (tmp_path / "afile", tmp_path / "data"),
        "file-as-dest": (tmp_path / "mirror", tmp_path / "afile"),
    }[case]
    _one_line(*cli("data", "fetch", "--mirror", mirror, "--dest", dest))
    assert (tmp_path / "afile").read_text() == "x"


@pytest.fixture
def labelled(run_folder, tmp_path, cli):
    """A run folder and an exported task to label."""
    assert cli("annotate", "export", run_folder, "--n", "1", "--out", tmp_path / "tasks")[0] == 0
    task = json.loads((tmp_path / "tasks" / "tasks.jsonl").read_text().splitlines()[0])
    label = {"task": task["task"], "annotator": "ann", "turn": 1, "principle": task["principles"][0]["id"],
             "severity": 1}
    return run_folder, label


def test_annotate_import_of_a_line_that_is_not_utf8_names_the_file_and_line(labelled, tmp_path, cli):
    run_folder, label = labelled
    path = tmp_path / "labels.jsonl"
    path.write_bytes(json.dumps(label).encode() + b"\n" + b'{"task": "\xff\xfe"}\n')
    code, stdout, stderr = cli("annotate", "import", path, "--cube", run_folder, "--out", tmp_path / "new.nc")
    _one_line(code, stdout, stderr)
    assert f"{path}:2" in stderr


def test_annotate_import_accepts_a_bom_like_yaml_and_case_files(labelled, tmp_path, cli):
    run_folder, label = labelled
    path = tmp_path / "labels.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(label).encode() + b"\n")
    code, stdout, stderr = cli("annotate", "import", path, "--cube", run_folder, "--out", tmp_path / "new.nc")
    assert code == 0, stderr


def test_import_labels_takes_one_path_as_a_string(labelled, tmp_path):
    from multiverse.adapters.annotation_labels import import_labels

    run_folder, label = labelled
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(label) + "\n")
    cube = import_labels(str(path), cube=run_folder, out=tmp_path / "new.nc")
    assert "human:ann" in cube["judge"].values.tolist()


def test_summary_of_a_dataset_that_is_not_a_cube_is_a_value_error():
    with pytest.raises(ValueError, match="not a judgment cube"):
        multiverse.summary(xr.Dataset())


DUPLICATE_CASE = """{"case_id": "dup", "case_id": "other",
 "contract": {"version": "v1", "initial_role": "a", "action_vocabulary": ["x"], "roles": {"a": {"allowed_actions": ["x"]}}},
 "transcript": [{"turn": 1, "actor": "assistant", "observed_actions": ["x"]}]}"""


@pytest.mark.parametrize("command", ["inspect", "contract"])
def test_case_json_with_a_repeated_key_is_refused_naming_it(command, tmp_path, cli):
    path = tmp_path / "dup.case.json"
    path.write_text(DUPLICATE_CASE)
    args = ("inspect", path) if command == "inspect" else ("contract", "check", path)
    code, stdout, stderr = cli(*args)
    assert code == 2 and "duplicate key 'case_id'" in stdout + stderr, (stdout, stderr)
