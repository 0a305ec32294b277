"""The data manifest: verified fetch from a mirror or a download, refusal of corrupt copies."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from multiverse import data
from multiverse.cli import main as cli_main


def _fetch(**options) -> dict[str, str]:
    """Run :func:`data.fetch` and return each file's outcome."""
    outcomes: dict[str, str] = {}
    folder = data.fetch(report=outcomes.__setitem__, **options)
    assert folder == data.data_dir(options.get("dest"))
    return outcomes


def _item(name: str, body: bytes, *, url: str | None = None, mirror_only: str = "") -> data.DataFile:
    return data.DataFile(
        path=name,
        url=url,
        sha256=hashlib.sha256(body).hexdigest(),
        size=len(body),
        license="MIT",
        citation="test",
        mirror_only=mirror_only,
    )


@pytest.fixture
def small_world(tmp_path, monkeypatch):
    """A two-file manifest, a mirror holding both files, and an empty data folder."""
    bodies = {"set/a.json": b'{"a": 1}\n', "set/derived/b.json": b"[1, 2]\n"}
    mirror = tmp_path / "mirror"
    for name, body in bodies.items():
        (mirror / name).parent.mkdir(parents=True, exist_ok=True)
        (mirror / name).write_bytes(body)
    items = (
        _item("set/a.json", bodies["set/a.json"], url=(mirror / "set/a.json").as_uri()),
        _item("set/derived/b.json", bodies["set/derived/b.json"], mirror_only="read off upstream code"),
    )
    monkeypatch.setattr(data, "manifest", lambda: items)
    monkeypatch.delenv(data.MIRROR_ENV, raising=False)
    return mirror, tmp_path / "dest"


def test_fetch_from_mirror_copies_and_verifies(small_world):
    mirror, dest = small_world
    outcomes = _fetch(mirror=mirror, dest=dest)
    assert outcomes == {"set/a.json": "copied", "set/derived/b.json": "copied"}
    assert data.verify(dest=dest) == {"set/a.json": "ok", "set/derived/b.json": "ok"}
    assert data.path("set/a.json", dest=dest).read_bytes() == b'{"a": 1}\n'
    assert _fetch(mirror=mirror, dest=dest)["set/a.json"] == "present"


def test_mirror_from_environment(small_world, monkeypatch):
    mirror, dest = small_world
    monkeypatch.setenv(data.MIRROR_ENV, str(mirror))
    assert set(_fetch(dest=dest).values()) == {"copied"}


def test_corrupted_mirror_copy_is_refused_and_not_kept(small_world):
    mirror, dest = small_world
    (mirror / "set/a.json").write_bytes(b'{"a": 2}\n')
    with pytest.raises(data.IntegrityError, match=r"set/a\.json: sha256 .* not kept"):
        _fetch(mirror=mirror, dest=dest)
    assert not (dest / "set/a.json").exists()
    assert not list((dest / "set").glob(".a.json*")), "temporary file left behind"


def test_corrupted_local_copy_is_never_used_and_refetched(small_world):
    mirror, dest = small_world
    _fetch(mirror=mirror, dest=dest)
    (dest / "set/a.json").write_bytes(b'{"a": 9}\n')
    assert data.verify(dest=dest)["set/a.json"] == "corrupt"
    with pytest.raises(data.IntegrityError, match="does not match its sha256"):
        data.path("set/a.json", dest=dest)
    assert _fetch(mirror=mirror, dest=dest)["set/a.json"] == "copied"
    assert data.path("set/a.json", dest=dest).read_bytes() == b'{"a": 1}\n'


def test_unfetched_file_says_how_to_fetch(small_world):
    _, dest = small_world
    with pytest.raises(data.DataError, match="multiverse data fetch"):
        data.path("set/a.json", dest=dest)
    with pytest.raises(data.DataError, match="not in the data manifest"):
        data.path("set/unknown.json", dest=dest)


def test_download_without_mirror_skips_mirror_only_files(small_world):
    _, dest = small_world
    outcomes = _fetch(dest=dest)
    assert outcomes == {"set/a.json": "downloaded", "set/derived/b.json": "skipped"}
    assert data.verify(dest=dest)["set/a.json"] == "ok"


def test_missing_mirror_file_is_an_error(small_world):
    mirror, dest = small_world
    (mirror / "set/derived/b.json").unlink()
    with pytest.raises(data.DataError, match=r"set/derived/b\.json: not found in the mirror"):
        _fetch(mirror=mirror, dest=dest)


def test_corrupted_download_is_refused_and_not_kept(small_world):
    mirror, dest = small_world
    (mirror / "set/a.json").write_bytes(b'{"a": 3}\n')
    with pytest.raises(data.IntegrityError, match=r"set/a\.json: sha256 .* from file:.* not kept"):
        _fetch(dest=dest)
    assert not (dest / "set/a.json").exists()


def test_absent_mirror_folder_and_unknown_names_are_errors(small_world, tmp_path):
    mirror, dest = small_world
    with pytest.raises(data.DataError, match="data mirror folder not found"):
        _fetch(mirror=tmp_path / "nowhere", dest=dest)
    with pytest.raises(data.DataError, match=r"set/c\.json: not in the data manifest"):
        _fetch(mirror=mirror, dest=dest, names=["set/a.json", "set/c.json"])
    assert not dest.exists(), "nothing is fetched before the names are checked"


def test_cli_path_prints_the_folder_or_a_verified_file(small_world, capsys):
    mirror, dest = small_world
    assert cli_main(["data", "path", "--dest", str(dest)]) == 0
    assert capsys.readouterr().out.strip() == str(dest)
    assert cli_main(["data", "path", "set/a.json", "--dest", str(dest)]) == 2  # not fetched: bad input
    assert "multiverse data fetch" in capsys.readouterr().err
    data.fetch(mirror=mirror, dest=dest)
    assert cli_main(["data", "path", "set/a.json", "--dest", str(dest)]) == 0
    assert capsys.readouterr().out.strip() == str(dest / "set/a.json")


def test_cli_verify_and_fetch_exit_codes(small_world, capsys):
    mirror, dest = small_world
    assert cli_main(["data", "verify", "--dest", str(dest)]) == 1
    assert cli_main(["data", "fetch", "--mirror", str(mirror), "--dest", str(dest)]) == 0
    assert cli_main(["data", "verify", "--dest", str(dest)]) == 0
    (mirror / "set/a.json").write_bytes(b"tampered")
    (dest / "set/a.json").unlink()
    assert cli_main(["data", "fetch", "--mirror", str(mirror), "--dest", str(dest)]) == 2  # a mirror file that differs
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "set/a.json" in err and "Traceback" not in err


def test_data_folder_default_and_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(data.DATA_DIR_ENV, raising=False)
    project = tmp_path / "project"
    (project / "specs" / "roles").mkdir(parents=True)
    (project / "notebooks").mkdir()
    monkeypatch.chdir(project / "notebooks")
    assert data.data_dir() == project.resolve() / "data"
    monkeypatch.chdir(tmp_path)
    assert data.data_dir() == tmp_path.resolve() / "data"
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path / "elsewhere"))
    assert data.data_dir() == tmp_path / "elsewhere"


def test_manifest_entries_are_complete():
    items = data.manifest()
    assert len({item.path for item in items}) == len(items)
    for item in items:
        assert len(item.sha256) == 64 and item.size > 0 and item.license and item.citation
        if item.url is None:
            assert item.mirror_only, item.path
        else:
            assert item.url.startswith("https://raw.githubusercontent.com/"), item.path
            commit = item.url.split("/")[5]
            assert len(commit) == 40, item.path


def test_real_mirror_verifies_and_a_corrupted_real_copy_is_refused(mirror, tmp_path):
    dest = tmp_path / "data"
    outcomes = _fetch(mirror=mirror, dest=dest)
    assert set(outcomes.values()) == {"copied"}
    assert set(data.verify(dest=dest).values()) == {"ok"}
    bad_mirror = tmp_path / "bad"
    shutil.copytree(mirror / "tau-bench", bad_mirror / "tau-bench")
    name = "tau-bench/historical_trajectories/gpt-4o-airline.json"
    records = json.loads((bad_mirror / name).read_text())
    records[0]["reward"] = 1.0 - records[0]["reward"]
    (bad_mirror / name).chmod(0o644)
    (bad_mirror / name).write_text(json.dumps(records))
    with pytest.raises(data.IntegrityError, match="gpt-4o-airline.json"):
        _fetch(mirror=bad_mirror, dest=tmp_path / "fresh", names=[name])
    assert not (tmp_path / "fresh" / name).exists()
