"""``--out`` never destroys what it points at: refused in one line, exit 2, nothing changed."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import tempfile

import pytest
from cli_helpers import tree

from multiverse.core import outputs
from multiverse.core.outputs import (
    MANIFEST_NAME,
    STAGING_MARKER,
    OutputDirError,
    check_output_dir,
    replace_dir,
)


def _snapshot(tmp_path):
    return tree(tmp_path)


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("file", id="an-existing-file"),
        pytest.param("cache", id="the-cache"),
        pytest.param("cache-parent", id="a-folder-holding-the-cache"),
        pytest.param("experiment-folder", id="the-experiment-folder"),
        pytest.param("cwd", id="the-working-directory"),
        pytest.param("foreign", id="a-folder-of-other-files"),
    ],
)
def test_run_refuses_an_out_it_must_not_replace_and_changes_nothing(target, tmp_path, experiment_file, cli, monkeypatch):
    path = experiment_file()
    cache = tmp_path / "work" / "cache"
    cache.mkdir(parents=True)
    (cache / "keep.txt").write_text("paid for")
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "thesis.tex").write_text("mine too")
    monkeypatch.chdir(tmp_path / "work")
    out = {
        "file": tmp_path / "notes.txt",
        "cache": cache,
        "cache-parent": tmp_path / "work",
        "experiment-folder": path.parent,
        "cwd": ".",
        "foreign": tmp_path / "other",
    }[target]
    before = _snapshot(tmp_path)
    code, stdout, stderr = cli("run", path, "--out", out, "--cache", cache)
    assert code == 2
    assert len(stderr.strip().splitlines()) == 1 and "refusing to replace" in stderr, stderr
    assert "Traceback" not in stderr + stdout
    assert _snapshot(tmp_path) == before


def test_run_replaces_its_own_earlier_output_and_marks_it(tmp_path, experiment_file, cli):
    path = experiment_file()
    out = tmp_path / "out"
    assert cli("run", path, "--out", out, "--cache", tmp_path / "cache")[0] == 0
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["kind"] == "run" and "cube.nc" in manifest["files"]
    assert cli("run", path, "--out", out, "--cache", tmp_path / "cache")[0] == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_run_refuses_an_unwritable_out_before_any_model_call(tmp_path, experiment_file, cli):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    path = experiment_file()
    parent = tmp_path / "locked"
    parent.mkdir()
    parent.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        code, _, stderr = cli("run", path, "--out", parent / "out", "--cache", tmp_path / "cache")
    finally:
        parent.chmod(stat.S_IRWXU)
    assert code == 2 and "cannot write" in stderr
    assert not (tmp_path / "cache").exists()  # refused before the cache was opened


def test_unwritable_out_is_refused_before_the_cache_is_touched(tmp_path, experiment_file, cli, monkeypatch):
    """The writability probe runs before the run: a failing probe leaves no cache behind."""
    path = experiment_file()

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("multiverse.core.outputs.tempfile.mkdtemp", refuse)
    code, _, stderr = cli("run", path, "--out", tmp_path / "out", "--cache", tmp_path / "cache")
    assert code == 2 and "cannot write" in stderr and "Permission denied" in stderr
    assert not (tmp_path / "cache").exists()


def _staging(folder, *, pid, purpose="staging", target="out", host=None):
    folder.mkdir()
    marker = {"pid": pid, "host": host or socket.gethostname(), "target": target, "purpose": purpose}
    (folder / STAGING_MARKER).write_text(json.dumps(marker))
    (folder / target).mkdir()
    return folder


def test_staging_folders_of_killed_writers_are_removed_and_outputs_get_the_umask_mode(tmp_path):
    target = tmp_path / "out"
    dead = _staging(tmp_path / ".out.new-999999999-abcd1234", pid=999999999)  # no such process
    alive = _staging(tmp_path / f".out.new-{os.getppid()}-abcd1234", pid=os.getppid())
    elsewhere = _staging(tmp_path / ".out.new-999999998-abcd1234", pid=999999998, host="another-machine")
    unmarked = tmp_path / ".out.new-999999999-k2j4h5g6"  # no marker: a folder of someone else, never touched
    unmarked.mkdir()
    previous = os.umask(0o022)
    try:
        with replace_dir(target, kind="run") as staging:
            (staging / "cube.nc").write_text("x")
    finally:
        os.umask(previous)
    assert not dead.exists() and alive.exists() and elsewhere.exists() and unmarked.exists()
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [target.name, alive.name, elsewhere.name, unmarked.name])


def test_report_refuses_a_file_or_a_foreign_folder_as_out(tmp_path, experiment_file, cli):
    path = experiment_file()
    run_out = tmp_path / "run"
    assert cli("run", path, "--out", run_out, "--cache", tmp_path / "cache")[0] == 0
    (tmp_path / "file.txt").write_text("mine")
    for out in (tmp_path / "file.txt", run_out, path.parent):
        before = tree(tmp_path)
        code, _, stderr = cli("report", run_out, "--out", out, "--n-boot", "5")
        assert code == 2 and len(stderr.strip().splitlines()) == 1, stderr
        assert tree(tmp_path) == before


def test_check_output_dir_accepts_missing_empty_and_own_folders(tmp_path):
    (tmp_path / "empty").mkdir()
    own = tmp_path / "own"
    own.mkdir()
    (own / MANIFEST_NAME).write_text(json.dumps({"kind": "report"}))
    (own / "old.png").write_text("x")
    for folder in ("missing", "empty", "own"):
        check_output_dir(tmp_path / folder, kind="report")


def test_a_dead_writers_backup_puts_back_what_it_carried_before_it_is_removed(tmp_path):
    target = tmp_path / "out"
    with replace_dir(target, kind="report") as staging:
        (staging / "table.md").write_text("old")
    (target / "notes.txt").write_text("the user's")
    # a writer killed after moving the old folder aside and the new one in, before carrying notes.txt over
    backup = _staging(tmp_path / ".out.old-999999999-abcd1234", pid=999999999, purpose="backup")
    marker = json.loads((backup / STAGING_MARKER).read_text())
    (backup / STAGING_MARKER).write_text(json.dumps({**marker, "kept": ["notes.txt"]}))
    os.replace(target / "notes.txt", backup / "out" / "notes.txt")
    with replace_dir(target, kind="report") as staging:
        (staging / "table.md").write_text("new")
    assert (target / "notes.txt").read_text() == "the user's" and (target / "table.md").read_text() == "new"
    assert not backup.exists()


def test_a_dead_writers_backup_of_a_missing_target_brings_the_old_folder_back_whole(tmp_path):
    target = tmp_path / "out"
    backup = _staging(tmp_path / ".out.old-999999999-abcd1234", pid=999999999, purpose="backup")
    (backup / "out" / "multiverse-output.json").write_text(json.dumps({"kind": "report", "files": ["table.md"]}))
    (backup / "out" / "table.md").write_text("old")
    (backup / "out" / "notes.txt").write_text("the user's")
    with replace_dir(target, kind="report") as staging:
        (staging / "table.md").write_text("new")
    assert (target / "notes.txt").read_text() == "the user's" and (target / "table.md").read_text() == "new"
    assert not backup.exists()


def test_a_new_output_that_would_overwrite_a_kept_entry_is_refused_and_changes_nothing(tmp_path):
    target = tmp_path / "out"
    with replace_dir(target, kind="report") as staging:
        (staging / "table.md").write_text("old")
    (target / "figure.png").write_text("the user's")
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    with pytest.raises(OutputDirError, match="figure.png"):
        with replace_dir(target, kind="report") as staging:
            (staging / "figure.png").write_text("new")
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("moment", ["staging-created", "swap-begun"])
def test_ctrl_c_at_a_folders_creation_or_swap_leaves_no_unmarked_folder_behind(moment, tmp_path, monkeypatch,
                                                                              ctrl_c_raises):
    target = tmp_path / "out"
    with replace_dir(target, kind="report") as staging:
        (staging / "old.txt").write_text("old")
    real_mkdtemp = tempfile.mkdtemp
    tag = ".new-" if moment == "staging-created" else ".old-"

    def interrupted_mkdtemp(*args, **kwargs):
        folder = real_mkdtemp(*args, **kwargs)
        if tag in folder:
            os.kill(os.getpid(), signal.SIGINT)  # lands between the folder and its marker
        return folder

    monkeypatch.setattr(outputs.tempfile, "mkdtemp", interrupted_mkdtemp)
    with pytest.raises(KeyboardInterrupt), replace_dir(target, kind="report") as staging:
        (staging / "new.txt").write_text("new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    expected = "old.txt" if moment == "staging-created" else "new.txt"
    assert expected in {p.name for p in target.iterdir()}
