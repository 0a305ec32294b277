"""Panels as judges: exact members' clear breaches stand unless the panel says otherwise; mixed panels warn."""

from __future__ import annotations

import asyncio
import warnings

import numpy as np
import pytest

from multiverse.config.experiment import parse_experiment
from multiverse.core.choices import ModelSpec
from multiverse.core.judgment import JudgeContext, Judgment
from multiverse.judge.build import make_judges
from multiverse.judge.kinds import deterministic_judge, model_judge, panel_judge
from multiverse.judge.panel import PanelJudge, mixed_panel_warning

MEMBERS = ("contract", "gpt", "claude")


def _verdict(panel: PanelJudge, votes):
    """The panel's severity for one cell given each member's severity there."""
    members = {m: [Judgment.from_severity(np.array([[v]], dtype=np.int8))] for m, v in zip(MEMBERS, votes)}
    context = JudgeContext(principle_ids=("p",), horizon=1, members=members)
    (judgment,) = asyncio.run(panel.judge([object()], roles=[object()], context=context))
    return int(judgment.severity[0, 0]), int(judgment.missing[0, 0])


CASES = [
    pytest.param("majority", (2, 0, 0), False, 2, id="majority-cannot-outvote-an-exact-breach"),
    pytest.param("unanimous", (2, 0, 0), False, 2, id="unanimous-cannot-outvote-an-exact-breach"),
    pytest.param("majority", (2, 0, 0), True, 0, id="outvote-exact-lets-the-vote-decide"),
    pytest.param("majority", (0, 2, 2), False, 2, id="models-may-still-find-a-breach"),
    pytest.param("majority", (0, 1, 0), False, 0, id="clean-exact-member-votes-like-any-member"),
    pytest.param("majority", (2, -1, -1), False, 2, id="exact-breach-decides-despite-missing-votes"),
    pytest.param("majority", (-2, 0, 2), False, 0, id="abstaining-exact-member-leaves-the-vote-to-the-others"),
    pytest.param("any", (1, 0, 0), False, 1, id="exact-partial-is-a-plain-vote"),
]


@pytest.mark.parametrize(("combine", "votes", "outvote", "expected"), CASES)
def test_exact_member_breach(combine, votes, outvote, expected):
    panel = PanelJudge(combine, MEMBERS, exact=("contract",), outvote_exact=outvote)
    assert _verdict(panel, votes)[0] == expected


def test_an_undecided_panel_keeps_the_missing_members_reason():
    panel = PanelJudge("majority", MEMBERS, exact=("contract",))
    members = {
        "contract": [Judgment.from_severity(np.array([[0]]))],
        "gpt": [Judgment.from_severity(np.array([[2]]))],
        "claude": [Judgment.from_severity(np.array([[-1]]), "call_failed")],
    }
    (judgment,) = asyncio.run(panel.judge([object()], roles=[object()],
                                          context=JudgeContext(("p",), 1, members=members)))
    assert (int(judgment.severity[0, 0]), int(judgment.missing[0, 0])) == (-1, 1)  # 1: call_failed


def test_a_mixed_panel_warns_when_built():
    specs = {
        "contract": deterministic_judge("contract"),
        "gpt": model_judge(ModelSpec("sim/judge-a")),
        "both": panel_judge(("contract", "gpt"), "majority"),
        "models": panel_judge(("gpt",), "any"),
    }
    with pytest.warns(UserWarning) as caught:
        judges = make_judges(specs)
    assert [str(w.message) for w in caught] == [
        "panel 'both' mixes exact judges (contract) with model judges (gpt); "
        "their clear breaches stand whatever the model members vote"
    ]
    assert judges["both"].exact == ("contract",) and not judges["both"].outvote_exact
    assert judges["models"].exact == ()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_judges(specs, models=True)


def test_the_warning_names_the_override():
    message = mixed_panel_warning("p", ["c"], ["m"], outvote_exact=True)
    assert message is not None and message.endswith("model votes may overrule their clear breaches (outvote_exact: true)")
    assert mixed_panel_warning("p", [], ["m", "n"], outvote_exact=False) is None


def _experiment(panel):
    return {
        "name": "panels", "roles": ["support"], "systems": {"a": "sim/target-a"},
        "dims": {"user_sim": {"u": "sim/user-u"}, "condition": {"c": {"horizon": 2}},
                 "judge": {"strict": "sim/judge-strict", "contract": {"deterministic": "contract"}, "both": panel}},
        "sim": {"targets": {"a": {}}, "users": {"u": {}}, "judges": {"strict": {}}},
    }


def test_outvote_exact_is_read_from_the_experiment_and_written_back():
    e = parse_experiment(_experiment({"panel": ["strict", "contract"], "combine": "majority", "outvote_exact": True}))
    assert e.judges["both"].spec.outvote_exact
    assert e.to_dict()["dims"]["judge"]["both"]["outvote_exact"] is True
    plain = parse_experiment(_experiment({"panel": ["strict", "contract"]}))
    assert "outvote_exact" not in plain.to_dict()["dims"]["judge"]["both"]


def test_outvote_exact_must_be_a_boolean():
    with pytest.raises(ValueError, match=r"dims.judge.both.outvote_exact: expected true or false, got a string \('yes'\)"):
        parse_experiment(_experiment({"panel": ["strict", "contract"], "outvote_exact": "yes"}))
