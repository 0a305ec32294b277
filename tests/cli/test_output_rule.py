"""One output-folder rule for every command that writes: nothing it did not write is replaced or deleted."""

from __future__ import annotations

import os

import pytest
import yaml
from cli_helpers import SPECS, tiny, tree


@pytest.fixture
def support_run(tmp_path, experiment_file, cli):
    """A finished run of a role with a contract (so export-cases writes cases); returns (experiment, out, cache)."""
    path = experiment_file(yaml.safe_dump(tiny(roles=["support"]), sort_keys=False))
    out, cache = tmp_path / "runs" / "q", tmp_path / "cache"
    code, _, stderr = cli("run", path, "--out", out, "--cache", cache, "--quiet")
    assert code == 0, stderr
    return path, out, cache


def test_the_tour_keeps_every_other_commands_output_byte_identical_when_run_writes_again(support_run, cli):
    path, out, cache = support_run
    beside = out.parent
    # the README's tour writes beside the run (q-report, q-site, q-cases); outputs may also go inside it
    for args in (
        ("report", out, "--out", out / "report", "--n-boot", "5", "--format", "svg"),
        ("view", out, "--out", out / "site", "--no-figures"),
        ("export-cases", out, "--out", out / "cases", "--specs", SPECS),
        ("report", out, "--out", beside / "q-report", "--n-boot", "5", "--format", "svg"),
        ("view", out, "--out", beside / "q-site", "--no-figures"),
        ("export-cases", out, "--out", beside / "q-cases", "--specs", SPECS),
        ("export", out, "--format", "parquet", "--out", out / "parquet"),
        ("annotate", "export", out, "--n", "2", "--out", out / "tasks"),
    ):
        code, _, stderr = cli(*args)
        assert code == 0, (args, stderr)
    (out / "notes.txt").write_text("my notes on this run")
    inside = ("report", "site", "cases", "parquet", "tasks")
    others = {name: tree(out / name) for name in inside} | {name: tree(beside / name) for name in
                                                               ("q-report", "q-site", "q-cases")}
    assert all(others.values()) and any(n.endswith(".case.json") for n in others["cases"])
    code, _, stderr = cli("run", path, "--out", out, "--cache", cache, "--quiet")
    assert code == 0, stderr
    after = {name: tree(out / name) for name in inside} | {name: tree(beside / name) for name in
                                                             ("q-report", "q-site", "q-cases")}
    assert after == others
    assert (out / "notes.txt").read_text() == "my notes on this run"
    assert (out / "cube.nc").is_file() and (out / "run.json").is_file()
    assert sorted(p.name for p in beside.iterdir()) == ["q", "q-cases", "q-report", "q-site"]  # no staging left


def test_staging_clean_up_never_touches_folders_that_only_look_like_staging(support_run, cli):
    path, out, cache = support_run
    lookalikes = [out.parent / name for name in (".q.old-1", ".q.new-final", ".q.new-999999999-abcd1234")]
    for folder in lookalikes:
        folder.mkdir()
        (folder / "keep.txt").write_text("the user's")
    code, _, stderr = cli("run", path, "--out", out, "--cache", cache, "--quiet")
    assert code == 0, stderr
    assert all((folder / "keep.txt").read_text() == "the user's" for folder in lookalikes)


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("foreign", id="a-folder-of-other-files"),
        pytest.param("same-name", id="a-folder-holding-a-case-file-of-the-same-name"),
        pytest.param("run", id="the-run-folder"),
        pytest.param("cache", id="the-cache-folder"),
        pytest.param("parent", id="the-parent-of-the-working-directory"),
        pytest.param("file", id="a-file"),
    ],
)
def test_export_cases_refuses_an_out_it_must_not_replace_and_changes_nothing(target, support_run, cli, monkeypatch):
    _, out, cache = support_run
    root = out.parent.parent
    (root / "other").mkdir()
    (root / "other" / "thesis.tex").write_text("mine")
    (root / "same").mkdir()
    (root / "same" / "support-0.case.json").write_text('{"mine": true}')
    (root / "afile.txt").write_text("mine")
    (root / "work").mkdir()
    monkeypatch.chdir(root / "work")
    chosen = {"foreign": root / "other", "same-name": root / "same", "run": out, "cache": cache, "parent": "..",
              "file": root / "afile.txt"}[target]
    before = tree(root)
    code, stdout, stderr = cli("export-cases", out, "--out", chosen, "--specs", SPECS)
    assert code == 2, (stdout, stderr)
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr, stderr
    assert tree(root) == before


def test_export_cases_replaces_its_own_earlier_output_and_keeps_a_file_the_user_added(support_run, cli):
    _, out, _ = support_run
    cases = out.parent / "cases"
    assert cli("export-cases", out, "--out", cases, "--specs", SPECS)[0] == 0
    written = sorted(p.name for p in cases.glob("*.case.json"))
    (cases / "README.md").write_text("what these cases are")
    assert cli("export-cases", out, "--out", cases, "--specs", SPECS)[0] == 0
    assert sorted(p.name for p in cases.glob("*.case.json")) == written
    assert (cases / "README.md").read_text() == "what these cases are"


def test_annotate_export_refuses_a_folder_of_the_users_with_an_export_json(support_run, cli):
    _, out, _ = support_run
    folder = out.parent / "paper"
    folder.mkdir()
    (folder / "export.json").write_text('{"title": "my export settings"}')
    (folder / "thesis.tex").write_text("\\documentclass{article}")
    before = tree(folder)
    code, _, stderr = cli("annotate", "export", out, "--n", "2", "--out", folder)
    assert code == 2 and len(stderr.strip().splitlines()) == 1, stderr
    assert tree(folder) == before


def test_annotate_export_writes_through_a_symbolic_link_and_keeps_the_link(support_run, cli):
    _, out, _ = support_run
    real = out.parent / "real-tasks"
    real.mkdir()
    link = out.parent / "tasks"
    os.symlink(real, link)
    assert cli("annotate", "export", out, "--n", "2", "--out", link)[0] == 0
    assert link.is_symlink() and (real / "tasks.jsonl").is_file()
    (real / "notes.md").write_text("the user's")
    assert cli("annotate", "export", out, "--n", "2", "--out", link)[0] == 0
    assert link.is_symlink() and (real / "notes.md").read_text() == "the user's"
