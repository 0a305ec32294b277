"""Partial transcripts (monitor-ended) are kept and counted, left out of coverage, and scored as outcomes."""

from __future__ import annotations

from multiverse import run, score
from multiverse.core.transcript import TranscriptStore


def test_partial_conversations_are_kept_counted_and_scored_over_the_turns_they_had(write_experiment, tmp_path,
                                                                                  tiny_experiment):
    data = tiny_experiment(items=12, budget=None)
    data["dims"]["condition"] = {"fuzz": {"horizon": 4, "search": "random_cell"}}
    data["sim"]["monitor"] = {"reject_rate": 0.6}
    cube = run(write_experiment(data), cache=tmp_path / "cache", out=tmp_path / "run")
    info = cube.attrs["run"]
    ended = cube["ended"].values.ravel().tolist()
    assert info["ended"] == {state: ended.count(state) for state in ("completed", "monitor_ended", "failed")}
    assert info["ended"]["monitor_ended"] > 0 and info["ended"]["completed"] > 0
    assert info["failures"]["monitor_ended"] == info["ended"]["monitor_ended"]
    with TranscriptStore(tmp_path / "run" / TranscriptStore.FILENAME) as store:
        assert all(str(t) in store for t in cube["transcript_id"].values.ravel())
    values = score(cube, standards="any_deviation", rules="any_turn")
    partial = (cube["ended"] == "monitor_ended").broadcast_like(values)
    judged = (cube["severity"] >= 0).any(["turn", "principle"]).broadcast_like(values)
    assert (values["status"].values[(partial & judged).values] != 3).all()  # an outcome, not excluded
