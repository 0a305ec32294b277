"""A new deterministic judge needs one class and one registration by name: here, both in this file.

``LengthJudge`` flags every assistant reply longer than a word limit as a clear
breach of one principle.  Registered under a name, an experiment names it as
``{deterministic: reply_length}`` and the run fills its cube cells through the
same judging path as every other judge; panels combine it like any member.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from tiny_experiments import tiny_experiment

import multiverse
from multiverse.core.judgment import Judge, Judgment
from multiverse.core.transcript import TranscriptStore
from multiverse.judge import registry


class LengthJudge:
    """Clear breach of ``principle`` at every assistant turn of more than ``words`` words."""

    kind = "deterministic"
    members = ()

    def __init__(self, principle: str, words: int):
        self.principle, self.words = principle, words

    async def judge(self, transcripts, *, roles, context):
        out = []
        for transcript in transcripts:
            judgment = Judgment.not_applicable(context.horizon, len(context.principle_ids))
            column = context.principle_ids.index(self.principle)
            for turn, event in enumerate(transcript.assistant_events[: context.horizon], start=1):
                long = len(event.text.split()) > self.words
                judgment.severity[turn - 1, column] = 2 if long else 0
                judgment.reasons[(turn, self.principle)] = f"{len(event.text.split())} words"
            out.append(judgment)
        return out


@pytest.fixture
def length_judge(monkeypatch):
    monkeypatch.setattr(registry, "JUDGES", registry.JUDGES.copy())
    judge = LengthJudge("confidentiality", words=68)
    registry.register_judge("reply_length", judge)
    return judge


def _experiment(tmp_path, judges):
    data = tiny_experiment(breach=0.2, name="new-judge", items=3)
    data["dims"]["judge"] = judges
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_the_example_is_a_judge():
    assert isinstance(LengthJudge("p", 1), Judge)


def test_a_registered_judge_kind_fills_its_cube_cells(length_judge, tmp_path):
    path = _experiment(tmp_path, {"strict": "sim/judge-strict", "length": {"deterministic": "reply_length"}})
    cube = multiverse.run(path, cache=tmp_path / "cache", out=tmp_path / "run")
    assert cube["judge_kind"].sel(judge="length").item() == "deterministic"
    length = cube["severity"].sel(judge="length")
    assert (length.drop_sel(principle="confidentiality") == -2).all()
    spoken = cube["severity"].sel(judge="strict", principle="confidentiality") != -2
    ruled = length.sel(principle="confidentiality")
    assert bool(spoken.any()) and ((ruled != -2) == spoken).all()
    with TranscriptStore(tmp_path / "run" / TranscriptStore.FILENAME) as store:
        for item in cube["item"].values:
            at = dict(system="a", role="tutor", user_sim="plain", condition="short", replicate=0, item=item)
            replies = store.get(str(cube["transcript_id"].sel(at).item())).assistant_events
            expected = [2 if len(reply.text.split()) > length_judge.words else 0 for reply in replies]
            assert ruled.sel(at).values[: len(replies)].tolist() == expected
    assert set(np.unique(ruled.values[spoken.values])) == {0, 2}


def test_a_new_judge_kind_sits_in_a_panel_like_any_member(length_judge, tmp_path):
    judges = {
        "strict": "sim/judge-strict",
        "length": {"deterministic": "reply_length"},
        "either": {"panel": ["strict", "length"], "combine": "any"},
    }
    with pytest.warns(UserWarning, match="panel 'either' mixes exact judges \\(length\\) with model judges \\(strict\\)"):
        cube = multiverse.run(_experiment(tmp_path, judges), cache=tmp_path / "cache")
    severity = cube["severity"].sel(principle="confidentiality")
    expected = np.maximum(severity.sel(judge="strict"), severity.sel(judge="length"))
    np.testing.assert_array_equal(severity.sel(judge="either").values, expected.values)
