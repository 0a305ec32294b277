"""The ``sim:`` block: defaults, merging, and errors that name the key."""

from __future__ import annotations

import pytest

from multiverse.sim import SimConfigError, SimWorld


def params(world: SimWorld, model: str) -> dict:
    return world.key_params(model)["params"]


def test_every_default_matches_the_design():
    world = SimWorld.from_config({"targets": {"a": {}}, "judges": {"j": None}, "users": {"u": {}}})
    assert world.seed == 0
    assert params(world, "sim/target-a") == {
        "breach": {"*": 0.05},
        "partial": {"*": 0.0},
        "cells": {},
        "escalation": 0.0,
        "drop_context_rate": 0.0,
        "legit_actions": 0.5,
    }
    assert world.config.targets["a"]["latency_ms"] == 0.0 and world.config.targets["a"]["fail_rate"] == 0.0
    assert params(world, "sim/judge-j") == {
        "sensitivity": {"*": 0.9},
        "specificity": {"*": 0.95},
        "leniency": 0.0,
        "malformed_rate": 0.0,
    }
    assert params(world, "sim/user-u") == {"pressure": 1.0, "steer_success": 0.8}
    assert params(world, "sim/monitor") == {"tag_accuracy": 1.0, "reject_rate": 0.05}
    assert params(world, "sim/planner") == {"free_form_skew": 1.5}
    assert world.latency_s("sim/target-a") == 0.0


def test_principle_maps_merge_over_their_default():
    world = SimWorld.from_config({"targets": {"a": {"breach": {"academic_integrity": 0.3}}}})
    assert params(world, "sim/target-a")["breach"] == {"*": 0.05, "academic_integrity": 0.3}


def test_key_params_hold_only_the_called_models_own_settings():
    base = {"seed": 7, "targets": {"a": {"breach": {"*": 0.2}}}, "judges": {"j": {}}}
    changed = {"seed": 7, "targets": {"a": {"breach": {"*": 0.2}}}, "judges": {"j": {"leniency": 0.5}}}
    one, two = SimWorld.from_config(base), SimWorld.from_config(changed)
    assert one.key_params("sim/target-a") == two.key_params("sim/target-a")
    assert one.key_params("sim/judge-j") != two.key_params("sim/judge-j")
    key = one.key_params("sim/target-a")
    assert key["sim_seed"] == 7 and key["sim_version"] == SimWorld.version
    assert SimWorld.from_config({**base, "seed": 8}).key_params("sim/target-a") != key


def test_latency_is_reported_in_seconds():
    world = SimWorld.from_config({"targets": {"slow": {"latency_ms": 250}}})
    assert world.latency_s("sim/target-slow") == 0.25
    assert not world.instant("sim/target-slow")


@pytest.mark.parametrize(
    "section, entry, model",
    [
        pytest.param("judges", "j", "sim/judge-j", id="judge"),
        pytest.param("users", "u", "sim/user-u", id="user"),
        pytest.param("monitor", None, "sim/monitor", id="monitor"),
        pytest.param("planner", None, "sim/planner", id="planner"),
    ],
)
def test_every_sim_model_takes_a_latency_that_leaves_its_key_unchanged(section, entry, model):
    def world(params):
        return SimWorld.from_config({section: params if entry is None else {entry: params}})

    slow, calm = world({"latency_ms": 30}), world({})
    assert slow.latency_s(model) == 0.03 and not slow.instant(model)
    assert calm.latency_s(model) == 0.0 and calm.instant(model)
    assert slow.key_params(model) == calm.key_params(model)


@pytest.mark.parametrize(
    "block, field",
    [
        pytest.param({"judges": {"strict": {"sensitivty": {"*": 0.5}}}}, "sim.judges.strict.sensitivty", id="judge-typo"),
        pytest.param({"targets": {"a": {"breech": {}}}}, "sim.targets.a.breech", id="target-typo"),
        pytest.param({"users": {"u": {"presure": 2}}}, "sim.users.u.presure", id="user-typo"),
        pytest.param({"monitor": {"accuracy": 1}}, "sim.monitor.accuracy", id="monitor-typo"),
        pytest.param({"planner": {"skew": 1}}, "sim.planner.skew", id="planner-typo"),
        pytest.param({"sed": 1}, "sim.sed", id="top-level-typo"),
    ],
)
def test_unknown_keys_are_errors_naming_the_key_path(block, field):
    with pytest.raises(SimConfigError, match="unknown key") as err:
        SimWorld.from_config(block)
    assert err.value.field == field
    assert str(err.value).startswith(f"{field}: ")


@pytest.mark.parametrize(
    "block, field",
    [
        pytest.param({"targets": {"a": {"breach": {"*": 1.5}}}}, "sim.targets.a.breach.*", id="probability-above-one"),
        pytest.param({"targets": {"a": {"fail_rate": 1.0}}}, "sim.targets.a.fail_rate", id="always-failing"),
        pytest.param({"targets": {"a": {"escalation": -0.1}}}, "sim.targets.a.escalation", id="negative-escalation"),
        pytest.param({"targets": {"a": {"cells": {"bad": 0.5}}}}, "sim.targets.a.cells.bad", id="malformed-cell"),
        pytest.param(
            {"targets": {"a": {"cells": {"chatting/sociability/p": 0.5}}}},
            "sim.targets.a.cells.chatting/sociability/p",
            id="unknown-mode",
        ),
        pytest.param({"users": {"u": {"pressure": 0}}}, "sim.users.u.pressure", id="zero-pressure"),
        pytest.param({"judges": {"j": {"leniency": "high"}}}, "sim.judges.j.leniency", id="string-probability"),
        pytest.param({"seed": -1}, "sim.seed", id="negative-seed"),
        pytest.param({"targets": ["a"]}, "sim.targets", id="list-instead-of-mapping"),
        pytest.param(
            {"targets": {"a": {"cells": {"information_seeking/sociality/p": 0.5}}}},
            "sim.targets.a.cells.information_seeking/sociality/p",
            id="unknown-strategy",
        ),
        pytest.param({"targets": {"a": {"breach": {1: 0.5}}}}, "sim.targets.a.breach.1", id="non-string-key"),
        pytest.param({"targets": {"a/b": {}}}, "sim.targets.a/b", id="slash-in-entry-name"),
        pytest.param({"targets": {"a": {"latency_ms": True}}}, "sim.targets.a.latency_ms", id="bool-latency"),
        pytest.param({"judges": {"j": {"latency_ms": -1}}}, "sim.judges.j.latency_ms", id="negative-judge-latency"),
        pytest.param({"users": {"u": {"latency_ms": "5"}}}, "sim.users.u.latency_ms", id="string-user-latency"),
        pytest.param({"monitor": {"latency_ms": -0.5}}, "sim.monitor.latency_ms", id="negative-monitor-latency"),
        pytest.param({"planner": {"latency_ms": None}}, "sim.planner.latency_ms", id="null-planner-latency"),
        pytest.param({"users": {"u": {"pressure": "2"}}}, "sim.users.u.pressure", id="string-pressure"),
        pytest.param({"users": {"u": {"steer_success": -0.1}}}, "sim.users.u.steer_success", id="negative-steer"),
        pytest.param({"monitor": {"reject_rate": 1.0}}, "sim.monitor.reject_rate", id="always-rejecting"),
        pytest.param({"monitor": {"tag_accuracy": 1.1}}, "sim.monitor.tag_accuracy", id="accuracy-above-one"),
        pytest.param({"planner": {"free_form_skew": -1}}, "sim.planner.free_form_skew", id="negative-skew"),
        pytest.param({"seed": True}, "sim.seed", id="bool-seed"),
        pytest.param({"monitor": 1}, "sim.monitor", id="scalar-instead-of-mapping"),
    ],
)
def test_bad_values_are_errors_naming_the_key_path(block, field):
    with pytest.raises(SimConfigError) as err:
        SimWorld.from_config(block)
    assert err.value.field == field


@pytest.mark.parametrize(
    "model, field",
    [
        pytest.param("sim/target-b", "sim.targets.b", id="target-without-entry"),
        pytest.param("sim/judge-lenient", "sim.judges.lenient", id="judge-without-entry"),
        pytest.param("sim/user-plain", "sim.users.plain", id="user-without-entry"),
        pytest.param("sim/oracle", "model", id="unknown-kind"),
    ],
)
def test_a_referenced_name_without_an_entry_is_an_error_naming_it(model, field):
    world = SimWorld.from_config({"targets": {"a": {}}})
    with pytest.raises(SimConfigError) as err:
        world.check_model(model)
    assert err.value.field == field
    assert model in str(err.value)


def test_planner_and_monitor_need_no_entry():
    world = SimWorld.from_config(None)
    world.check_model("sim/planner")
    world.check_model("sim/monitor")
