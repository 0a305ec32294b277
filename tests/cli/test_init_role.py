"""``multiverse init role NAME --from ROLE``: an editable role of your own, and never a replaced file."""

from __future__ import annotations

import pytest
import yaml
from cli_helpers import SPECS, tree

from multiverse.config.specs import load_role


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A fresh project folder as the working directory, with no specs folder of its own."""
    monkeypatch.delenv("MULTIVERSE_SPECS", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_role_started_from_the_tutor_is_the_tutor_under_a_new_id(project, cli):
    code, out, err = cli("init", "role", "my_tutor", "--from", "tutor")
    written = project / "specs" / "roles" / "my_tutor.yaml"
    assert (code, err) == (0, "") and out.strip().startswith(f"wrote {written.relative_to(project)} ")
    text = written.read_text(encoding="utf-8")
    source = (SPECS / "roles" / "tutor.yaml").read_text(encoding="utf-8")
    assert text.startswith("# Role 'my_tutor', started from role 'tutor'")
    assert "\nid: my_tutor\n" in text and text.endswith(source.replace("id: tutor\n", "id: my_tutor\n", 1))
    mine, shipped = load_role(written), load_role("tutor", specs_dir=SPECS)
    assert mine.id == "my_tutor" and mine.principle_ids == shipped.principle_ids
    assert (mine.system_prompt, mine.seeds) == (shipped.system_prompt, shipped.seeds)
    assert cli("validate", written)[0] == 0


def test_the_edited_prompt_is_what_the_assistant_is_told(project, cli):
    cli("init", "role", "my_tutor", "--from", "tutor")
    path = project / "specs" / "roles" / "my_tutor.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["system_prompt"] = "You are Quill, the writing coach of Northgate College."
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert load_role(path).render_system_prompt().startswith("You are Quill, the writing coach of Northgate College.\n")


def test_an_existing_role_file_is_never_replaced(project, cli):
    cli("init", "role", "my_tutor", "--from", "tutor")
    path = project / "specs" / "roles" / "my_tutor.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "# my own edits\n", encoding="utf-8")
    before = tree(project)
    code, out, err = cli("init", "role", "my_tutor", "--from", "interviewer")
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1
    assert err.startswith("multiverse init: specs/roles/my_tutor.yaml exists; not replaced")
    assert tree(project) == before


def test_a_contract_the_role_names_is_copied_beside_it_and_an_existing_one_kept(project, cli):
    assert cli("init", "role", "my_support", "--from", "support")[0] == 0
    copied = project / "specs" / "contracts" / "support.yaml"
    assert copied.read_bytes() == (SPECS / "contracts" / "support.yaml").read_bytes()
    assert load_role(project / "specs" / "roles" / "my_support.yaml").contract.name == "support"
    copied.write_text(copied.read_text(encoding="utf-8") + "# kept\n", encoding="utf-8")
    code, out, _ = cli("init", "role", "other_support", "--from", "support")
    assert code == 0 and "contract" not in out and copied.read_text(encoding="utf-8").endswith("# kept\n")


def test_an_existing_specs_folder_above_the_working_directory_is_written_into(project, cli, monkeypatch):
    (project / "specs" / "roles").mkdir(parents=True)
    (project / "experiments").mkdir()
    monkeypatch.chdir(project / "experiments")
    code, out, _ = cli("init", "role", "coach", "--from", str(SPECS / "roles" / "tutor.yaml"))
    assert code == 0 and "../specs/roles/coach.yaml" in out
    assert (project / "specs" / "roles" / "coach.yaml").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("My-Tutor", "--from", "tutor"), "NAME: expected a role id in lower snake case", id="name-not-snake-case"),
        pytest.param(("coach", "--from", "tutr"), "--from: no role 'tutr'", id="unknown-source-role"),
        pytest.param(("coach", "--from", "missing/role.yaml"), "--from: no role 'missing/role.yaml'", id="missing-source-file"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(project, cli, args, message):
    code, out, err = cli("init", "role", *args)
    assert (code, out) == (2, "") and err.startswith(f"multiverse init: {message}") and len(err.strip().splitlines()) == 1
    assert not (project / "specs").exists()


def test_unknown_source_lists_the_roles_it_could_start_from(project, cli):
    err = cli("init", "role", "coach", "--from", "tutr")[2]
    assert "known roles: " in err and "tutor" in err.split("known roles: ")[1]


def test_a_broken_source_role_is_reported_as_its_problems(project, cli):
    broken = project / "broken.yaml"
    broken.write_text((SPECS / "roles" / "tutor.yaml").read_text(encoding="utf-8").replace("opens: user", "opens: nobody"))
    code, out, err = cli("init", "role", "coach", "--from", broken)
    assert code == 2 and "broken.yaml:" in err and "opens" in err and "Traceback" not in err
    assert not (project / "specs").exists()
