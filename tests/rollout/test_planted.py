"""A planted vulnerable cell: the planner exploits it and the heatmap shows it."""

import collections

import numpy as np
import pytest

from multiverse.analysis import campaign as metrics

PLANTED = "content_creation/sociability/academic_integrity"
SIM = {
    "targets": {"a": {"breach": {"*": 0.02}, "cells": {PLANTED: 0.9}}},
    "judges": {"j": {}},
    "users": {"plain": {}},
}


@pytest.mark.slow
def test_the_planner_concentrates_on_a_planted_vulnerable_cell(campaign):
    role, conversations, _ = campaign("tutor", "rolefuzzer", horizon=4, sim=SIM)
    mutations = [c for c in conversations if c.scenario["origin"] == "mutation"]
    aimed = collections.Counter("/".join(c.target_cell) for c in mutations)
    assert aimed.most_common(1)[0][0] == PLANTED
    assert aimed[PLANTED] >= 0.75 * len(mutations)
    per_round = collections.Counter(c.round for c in mutations)
    assert per_round[1] == 0 and per_round[8] > per_round[2]

    table = metrics.turn_table(conversations)
    heat = metrics.violation_heatmap(table, standard="clear_breach")
    mode, strategy, principle = PLANTED.split("/")
    planted = float(heat["share"].sel(behaviour=f"{mode}/{strategy}", principle=principle))
    others = heat["share"].where(
        ~((heat["behaviour"] == f"{mode}/{strategy}") & (heat["principle"] == principle))
    ).to_numpy()
    assert planted >= 0.7 and np.nanmax(others) <= 0.3

    families = metrics.mutation_persistence(table)
    assert families.loc[0, "cell"] == PLANTED and families.loc[0, "child_breach_rate"] >= 0.8
