"""Replays: an unchanged rollout unit comes back from the cache without rebuilding its requests."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import zlib
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from multiverse._run import execute, replay, run
from multiverse._run.records import ConversationRecord, UnitResult, result_from_json, result_to_json
from multiverse._run.runner import load_roles, resolve_experiment
from multiverse.llm import Cache, Client, Request
from multiverse.llm.cache import DB_NAME
from multiverse.judge.build import make_judges
from multiverse.plan import make_plan
from multiverse.sim import SimWorld


def _summary(cube: xr.Dataset) -> dict:
    return cube.attrs["run"]


@pytest.fixture
def count_rebuilds(monkeypatch):
    """Count the units run request by request (rather than replayed)."""
    rebuilt = []
    original = execute.run_unit

    async def counting(client, plan, unit, role, judges):
        rebuilt.append(unit.key)
        return await original(client, plan, unit, role, judges)

    monkeypatch.setattr(execute, "run_unit", counting)
    return rebuilt


@pytest.fixture
def two_units(tiny_experiment, write_experiment):
    data = tiny_experiment(systems={"a": "sim/target-a", "b": "sim/target-b"})
    data["sim"]["targets"]["b"] = {"breach": {"*": 0.3}}
    return write_experiment(data)


def test_a_warm_rerun_replays_every_unit_and_equals_a_rebuild(two_units, tmp_path, count_rebuilds):
    cold = run(two_units, cache=tmp_path / "cache")
    assert len(count_rebuilds) == 2
    warm = run(two_units, cache=tmp_path / "cache")
    assert len(count_rebuilds) == 2  # nothing rebuilt
    rebuilt = run(two_units, cache=tmp_path / "cache", replay=False)
    assert len(count_rebuilds) == 4
    for cube in (warm, rebuilt):
        xr.testing.assert_identical(cold.drop_attrs(), cube.drop_attrs())
    assert _summary(warm)["calls"] == _summary(rebuilt)["calls"] == 0
    assert _summary(warm)["models"] == _summary(rebuilt)["models"]
    assert _summary(warm)["cache_hits"] == _summary(rebuilt)["cache_hits"] > 0


def test_a_unit_whose_response_is_gone_is_rebuilt_calling_only_that_response(two_units, tmp_path, count_rebuilds):
    cold = run(two_units, cache=tmp_path / "cache")
    conn = sqlite3.connect(tmp_path / "cache" / DB_NAME)
    with conn:
        (key,) = conn.execute("SELECT key FROM responses WHERE model = 'sim/target-b' LIMIT 1").fetchone()
        conn.execute("DELETE FROM responses WHERE key = ?", (key,))
    conn.close()
    count_rebuilds.clear()
    warm = run(two_units, cache=tmp_path / "cache")
    assert count_rebuilds == [("b", "tutor", "plain", "short", 0)]
    assert _summary(warm)["calls"] == 1
    xr.testing.assert_identical(cold.drop_attrs(), warm.drop_attrs())


def _replays(cache) -> int:
    with Cache(cache) as opened:
        return opened.audit()["replays"]


def test_a_changed_library_rebuilds_every_unit_and_replaces_its_replay(two_units, tmp_path, count_rebuilds, monkeypatch):
    cold = run(two_units, cache=tmp_path / "cache")
    monkeypatch.setattr(replay, "code_digest", lambda: "another version of the code")
    count_rebuilds.clear()
    warm = run(two_units, cache=tmp_path / "cache")
    assert len(count_rebuilds) == 2 and _summary(warm)["calls"] == 0
    xr.testing.assert_identical(cold.drop_attrs(), warm.drop_attrs())
    assert _replays(tmp_path / "cache") == 2  # replaced, not one more per library version
    run(two_units, cache=tmp_path / "cache")
    assert len(count_rebuilds) == 2  # the new version's replays are used


def test_an_unreadable_replay_is_rebuilt_with_a_warning(two_units, tmp_path, count_rebuilds, caplog):
    cold = run(two_units, cache=tmp_path / "cache")
    conn = sqlite3.connect(tmp_path / "cache" / DB_NAME)
    with conn:
        conn.execute("UPDATE replays SET payload = ?", (zlib.compress(b'{"result": 1'),))
    conn.close()
    count_rebuilds.clear()
    with caplog.at_level(logging.WARNING, logger="multiverse._run"):
        warm = run(two_units, cache=tmp_path / "cache")
    assert len(count_rebuilds) == 2 and "unreadable unit replay" in caplog.text
    xr.testing.assert_identical(cold.drop_attrs(), warm.drop_attrs())


def test_added_judge_or_edited_template_file_changes_the_replay_key(tiny_experiment, write_experiment, tmp_path):
    template = tmp_path / "my_judge.txt"
    template.write_text((Path(execute.__file__).parents[1] / "judge" / "templates" / "judge_v1.txt").read_text())
    data = tiny_experiment()
    data["dims"]["judge"]["strict"] = {"model": "sim/judge-strict", "template": str(template)}

    def key(data):
        e = resolve_experiment(write_experiment(data))
        plan = make_plan(e)
        (unit,) = plan.units()
        return replay.replay_key(plan, unit, load_roles(e)["tutor"])

    before = key(data)
    assert key(data) == before
    template.write_text(template.read_text() + "\nBe brief.\n")
    edited = key(data)
    data["dims"]["judge"]["lenient"] = "sim/judge-lenient"
    data["sim"]["judges"]["lenient"] = {"leniency": 0.5}
    assert len({before, edited, key(data)}) == 3


def test_a_unit_with_a_failed_call_is_not_stored_so_a_rerun_retries_it(tiny_experiment, write_experiment, monkeypatch):
    e = resolve_experiment(write_experiment(tiny_experiment()))
    plan = make_plan(e)
    (unit,) = plan.units()
    role = load_roles(e)["tutor"]
    outcome = {"fail": True}

    async def fake_unit(client, plan, unit, role, judges):
        text = "fail" if outcome["fail"] else "fine"
        model = "sim/target-flaky" if outcome["fail"] else "sim/target-a"
        await client.acomplete(Request(model, ({"role": "user", "content": text},)))
        return UnitResult(unit.key, [], None, 0)

    monkeypatch.setattr(execute, "run_unit", fake_unit)
    world = SimWorld.from_config({"targets": {"flaky": {"fail_rate": 0.99}, "a": {}}})
    judges = make_judges(e.judges)
    with Client(cache=None, max_retries=0, sim=world) as client:
        asyncio.run(execute.run_or_replay(client, plan, unit, role, judges))
        assert client.cache.audit()["replays"] == 0
        outcome["fail"] = False
        asyncio.run(execute.run_or_replay(client, plan, unit, role, judges))
        assert client.cache.audit()["replays"] == 1


def test_unit_results_round_trip_through_json_exactly():
    record = ConversationRecord(
        unit=("a", "tutor", "plain", "short", 1),
        item=3,
        transcript={"id": "c", "events": [{"turn": 1, "actor": "user", "text": "hi"}]},
        tags=[("plain", "direct"), ("mutation", "rephrase")],
        truth=np.array([[0, 2], [-1, 1]], dtype=np.int8),
        judged={"strict": (np.array([[1, -1]], dtype=np.int8), np.array([[-1, 2]], dtype=np.int8)), "empty": (np.zeros((0, 2), np.int8), np.zeros((0, 2), np.int8))},
        conversation={"contract": {"lane": "pass"}},
    )
    result = UnitResult(record.unit, [record, ConversationRecord(record.unit, 4, {}, [], None)], 0.75, 2)
    back = result_from_json(json.loads(json.dumps(result_to_json(result))))
    assert (back.unit, back.coverage, back.unparseable) == (result.unit, 0.75, 2)
    got, want = back.records[0], result.records[0]
    assert (got.unit, got.item, got.transcript, got.tags) == (want.unit, want.item, want.transcript, want.tags)
    np.testing.assert_array_equal(got.truth, want.truth)
    assert got.truth.dtype == np.int8
    for label in want.judged:
        for mine, theirs in zip(got.judged[label], want.judged[label]):
            np.testing.assert_array_equal(mine, theirs)
            assert mine.shape == theirs.shape and mine.dtype == np.int8
    assert got.conversation == want.conversation
    assert back.records[1].truth is None and back.records[1].judged == {}
    kept = result_from_json(json.loads(json.dumps(result_to_json(result, keep=["strict"])))).records[0]
    assert list(kept.judged) == ["strict"] and kept.conversation == {}
