"""Loading specs: lookup, digests, caching, rendering and the dataclasses' forms."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from spec_texts import CONTRACT, ROLE

from multiverse.config.located import SpecError
from multiverse.config.specs import Role, find_specs_dir, load_contract, load_role, load_roles, spec_kind


@pytest.fixture
def specs(tmp_path):
    (tmp_path / "specs" / "roles").mkdir(parents=True)
    (tmp_path / "specs" / "contracts").mkdir()
    (tmp_path / "specs" / "roles" / "demo.yaml").write_text(ROLE + "contract: demo_contract\n")
    (tmp_path / "specs" / "contracts" / "demo_contract.yaml").write_text(CONTRACT)
    return tmp_path / "specs"


def _touch_with(path: Path, text: str) -> None:
    """Rewrite a file so that its modification time certainly changes."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_render_system_prompt_exact_format(specs):
    role = load_role("demo", specs_dir=specs)
    assert role.render_system_prompt() == (
        "You are a demo assistant.\n\nContext: A test context.\n\nPrinciples:\n"
        "[honesty] Tell the truth.\n[privacy] Keep secrets."
    )


def test_role_fields_and_seed_scenario_mapping(specs):
    role = load_role("demo", specs_dir=specs)
    assert role.opens == "user" and role.modalities == ("text",)
    assert role.principle("privacy").criteria["breach"].example == "Ana asked yesterday."
    seed = role.seeds[1].to_dict()
    assert (seed["mode"], seed["strategy"], seed["principle"]) == ("content_creation", "system_management", "privacy")
    assert (seed["home_mode"], seed["home_strategy"], seed["home_principle"]) == (seed["mode"], seed["strategy"], seed["principle"])
    assert (seed["origin"], seed["parent"], seed["intensity"], seed["workflow"]) == ("seed", "", 1.0, [])
    with pytest.raises(KeyError, match="has no principle 'loyalty'"):
        role.principle("loyalty")


def test_roles_are_frozen_and_hashable(specs):
    role = load_role("demo", specs_dir=specs)
    with pytest.raises(AttributeError):
        role.id = "other"
    with pytest.raises(TypeError):
        role.principles[0].criteria["full"] = None
    assert {role: 1}[role] == 1


def test_digest_is_content_not_path(specs, tmp_path):
    copy = tmp_path / "elsewhere" / "roles"
    copy.mkdir(parents=True)
    (copy / "demo.yaml").write_text((specs / "roles" / "demo.yaml").read_text().replace("id: demo", "# a comment\nid: demo"))
    (tmp_path / "elsewhere" / "contracts").mkdir()
    (tmp_path / "elsewhere" / "contracts" / "demo_contract.yaml").write_text(CONTRACT)
    assert load_role("demo", specs_dir=specs).digest == load_role(copy / "demo.yaml").digest


def test_digest_follows_edits_of_the_role_and_of_its_contract(specs):
    first = load_role("demo", specs_dir=specs)
    role_file = specs / "roles" / "demo.yaml"
    _touch_with(role_file, role_file.read_text().replace("Tell the truth.", "Tell the whole truth."))
    second = load_role("demo", specs_dir=specs)
    contract_file = specs / "contracts" / "demo_contract.yaml"
    _touch_with(contract_file, CONTRACT.replace("demo-v1", "demo-v2"))
    third = load_role("demo", specs_dir=specs)
    assert len({first.digest, second.digest, third.digest}) == 3
    assert third.contract.version == "demo-v2"


def test_repeated_loads_are_served_from_memory(specs):
    load_role("demo", specs_dir=specs)
    start = time.perf_counter()
    for _ in range(50):
        load_role("demo", specs_dir=specs)
    assert time.perf_counter() - start < 0.5


def test_unknown_role_suggests_the_closest(specs):
    with pytest.raises(FileNotFoundError, match="did you mean 'demo'"):
        load_role("dmeo", specs_dir=specs)


def test_missing_contract_or_role_path_is_not_found(specs):
    with pytest.raises(FileNotFoundError, match="no such contract file"):
        load_contract(specs / "contracts" / "absent.yaml")
    with pytest.raises(FileNotFoundError, match="no such role file"):
        load_role(specs / "roles" / "absent.yaml")


def test_unknown_contract_name_lists_the_known_ones(specs):
    known = sorted(p.stem for p in (specs / "contracts").glob("*.yaml"))
    with pytest.raises(FileNotFoundError, match=f"no contract 'absent'; known contracts: {', '.join(known)}"):
        load_contract("absent", specs_dir=specs)


def test_invalid_role_raises_with_every_problem(specs):
    path = specs / "roles" / "demo.yaml"
    path.write_text(ROLE.replace("opens: user", "opens: bot").replace("modalities: [text]", "modalities: [voice]"))
    with pytest.raises(SpecError) as info:
        load_role("demo", specs_dir=specs)
    assert [p.field for p in info.value.problems] == ["modalities.0", "opens"]
    assert str(info.value).startswith(f"{path}:5: modalities.0: unknown modality 'voice'")


def test_load_roles_reads_the_folder(specs):
    assert list(load_roles(specs_dir=specs)) == ["demo"]


def test_contract_to_dict_is_the_case_json_form(specs):
    contract = load_contract("demo_contract", specs_dir=specs)
    assert contract.to_dict() == {
        "version": "demo-v1",
        "initial_role": "triage",
        "action_vocabulary": ["lookup", "explain", "refund"],
        "roles": {"triage": {"allowed_actions": ["lookup", "explain"]}, "billing": {"allowed_actions": ["lookup", "explain", "refund"]}},
        "trusted_actor": "system",
        "enforces": "honesty",
    }
    assert contract.transitions == (("triage", "billing"),)
    assert load_contract(specs / "contracts" / "demo_contract.yaml") == contract


def test_find_specs_dir_walks_up_and_honours_the_environment(specs, tmp_path, monkeypatch):
    monkeypatch.delenv("MULTIVERSE_SPECS", raising=False)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_specs_dir(deep) == specs.resolve()
    other = tmp_path / "other_specs"
    (other / "roles").mkdir(parents=True)
    monkeypatch.setenv("MULTIVERSE_SPECS", str(other))
    assert find_specs_dir(deep) == other


def test_find_specs_dir_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.delenv("MULTIVERSE_SPECS", raising=False)
    with pytest.raises(FileNotFoundError, match="no specs/roles folder"):
        find_specs_dir(tmp_path)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        pytest.param({"principles": []}, "role", id="role"),
        pytest.param({"action_vocabulary": []}, "contract", id="contract"),
        pytest.param({"systems": {}}, "experiment", id="experiment-systems"),
        pytest.param({"dims": {}}, "experiment", id="experiment-dims"),
        pytest.param({"title": "x"}, None, id="unknown-mapping"),
        pytest.param(["principles"], None, id="a-list"),
    ],
)
def test_spec_kind_from_content(data, kind):
    assert spec_kind(data) == kind


def test_role_digest_is_computed_when_built_directly():
    role = Role(id="r", version="1", system_prompt="p", context="c", modalities=("text",), opens="user", principles=())
    assert len(role.digest) == 64 and role.render_system_prompt().endswith("Principles:")
