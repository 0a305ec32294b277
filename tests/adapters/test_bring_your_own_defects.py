"""The smaller defects users met bringing their own labels: standard=None in PPI, Dawid-Skene on unrated
cells, judge-only items PPI leaves out, and composite rewards that never reach tau-bench's success test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from adapter_fixtures import say, v1_record, write_json

from multiverse.adapters import long_table, tau_bench
from multiverse.analysis import consensus, corrected_rate, latent_class


@pytest.fixture
def severity_labels():
    """A model judge on 60 conversations; two humans on the first 30; the judge silent on two labelled ones."""
    rng = np.random.default_rng(5)
    rows = []
    for conv in range(60):
        truth = int(rng.random() < 0.3) * 2
        judge = truth if rng.random() < 0.85 else 2 - truth
        rows.append({"conv": conv, "system": "s", "rater": "model", "severity": None if conv in (3, 4) else judge})
        if conv < 30:
            for human in ("h1", "h2"):
                rows.append({"conv": conv, "system": "s", "rater": human, "severity": truth})
    return pd.DataFrame(rows)


def test_corrected_rate_takes_standard_none_and_reports_dropped_labels(severity_labels):
    cube = long_table(severity_labels, item="conv", system="system", judge="rater", score="severity")
    default = corrected_rate(cube, judge="model", human=["h1", "h2"], standard=None)
    named = corrected_rate(cube, judge="model", human=["h1", "h2"], standard="clear_breach")
    assert float(default["estimate"]) == float(named["estimate"])
    assert default.attrs["n_labelled_without_judge"] == 2, "conversations 3 and 4: labelled, judge silent"
    assert default.attrs["n_labelled"] == 28 and default.attrs["n_missing"] == 2


def test_latent_class_posteriors_are_defined_on_unrated_cells(severity_labels):
    cube = long_table(severity_labels, item="conv", system="system", judge="rater", score="severity")
    classes = latent_class(cube.sel(judge=["h1", "h2"]))
    unrated = ~classes["rated"].squeeze(drop=True)
    assert int(unrated.sum()) == 30, "the humans labelled only the first 30 conversations"
    posterior = classes["posterior"].squeeze(drop=True)
    np.testing.assert_allclose(posterior.where(unrated, drop=True).values,
                               np.broadcast_to(classes["prior"].values, (30, classes.sizes["true"])))
    assert posterior.argmax("true").notnull().all()


def test_dawid_skene_consensus_leaves_unlabelled_cells_missing(severity_labels):
    cube = long_table(severity_labels, item="conv", system="system", judge="rater", score="severity")
    out = consensus(cube, raters=["h1", "h2", "model"], method="dawid_skene", name="ds")
    codes = out["severity"].sel(judge="ds").squeeze(drop=True).values
    assert (codes >= 0).sum() == 60, "every conversation has some label, so a consensus"
    assert out.attrs["consensus"]["ds"]["method"] == "dawid_skene"


def test_composite_rewards_below_the_success_threshold_warn(tmp_path):
    records = [v1_record(task, 0, reward, [say("system", "# policy"), say("user", "hi"), say("assistant", "ok")])
               for task, reward in enumerate([0.0, 0.74, 0.99, 0.0])]
    cube = tau_bench(write_json(tmp_path / "gpt-x-retail.json", records))
    assert any("no reward reaches the success threshold" in w and "2 of 4" in w for w in cube.attrs["warnings"])
    clean = tau_bench(write_json(tmp_path / "gpt-y-retail.json", [dict(records[0], reward=1.0), records[1]]))
    assert not any("success threshold" in w for w in clean.attrs["warnings"])
