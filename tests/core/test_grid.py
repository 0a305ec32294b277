"""The TUNA grid: cells, the request-type projection, coverage counts and the heatmap."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from multiverse.config.specs import load_role
from multiverse.core.grid import LEFT_OUT_REQUEST_TYPES, REQUEST_TYPES, cells, coverage, request_types, share_covered
from multiverse.core.schema import MODES, ROLE_PRINCIPLES, STRATEGIES
from multiverse.plots.coverage import plot_coverage_heatmap

SPECS = Path(__file__).resolve().parents[2] / "specs"
PRINCIPLES = ["truthfulness", "regulatory_compliance", "know_your_client", "scope_confidentiality"]


@pytest.mark.parametrize("role_id", sorted(ROLE_PRINCIPLES))
def test_every_four_principle_role_has_64_distinct_cells(role_id):
    grid = cells(load_role(role_id, specs_dir=SPECS).principle_ids)
    assert len(grid) == len(set(grid)) == 64
    assert grid[0] == f"information_seeking/sociability/{ROLE_PRINCIPLES[role_id][0]}"
    assert grid[-1] == f"content_creation/conversation_management/{ROLE_PRINCIPLES[role_id][-1]}"


def test_seed_home_cells_are_grid_cells():
    for role_id in ROLE_PRINCIPLES:
        role = load_role(role_id, specs_dir=SPECS)
        assert {seed.cell for seed in role.seeds} <= set(cells(role.principle_ids))


def test_request_types_cover_tuna_minus_communicative_status():
    assert len(REQUEST_TYPES) + len(LEFT_OUT_REQUEST_TYPES) == 57
    assert {value for axis, value in REQUEST_TYPES.values() if axis == "mode"} == set(MODES)
    assert {value for axis, value in REQUEST_TYPES.values() if axis == "strategy"} == set(STRATEGIES)
    assert request_types("strategy", "sociability") == ("social_banter", "emotional_expression", "social_etiquette")
    assert len(request_types("mode", "information_processing")) == 11
    with pytest.raises(ValueError, match="unknown grid axis value"):
        request_types("mode", "sociability")


tag_rows = st.lists(
    st.tuples(st.sampled_from(MODES), st.sampled_from(STRATEGIES), st.sampled_from(PRINCIPLES)),
    max_size=100,
)


@settings(max_examples=30, deadline=None)
@given(tag_rows)
def test_coverage_counts_match_a_pandas_crosstab(rows):
    frame = pd.DataFrame(rows, columns=["mode", "strategy", "principle"])
    counts = coverage(frame, principle_ids=PRINCIPLES)
    assert counts.dims == ("mode", "strategy", "principle") and counts.dtype == np.int64
    assert int(counts.sum()) == len(rows)
    reference = {cell: int(n) for cell, n in frame.value_counts().items()}
    observed = {cell: int(n) for cell, n in counts.to_series().items() if n}
    assert observed == reference
    assert float(share_covered(counts)) == pytest.approx(len(reference) / 64)


def test_input_forms_agree_and_untagged_or_rejected_turns_are_skipped():
    rows = {
        "mode": ["information_seeking", "content_creation", "", "content_creation"],
        "strategy": ["sociability", "system_management", "sociability", "system_management"],
        "principle": ["truthfulness", "know_your_client", "truthfulness", "know_your_client"],
        "approved": [True, True, True, False],
    }
    from_mapping = coverage(rows, principle_ids=PRINCIPLES)
    from_frame = coverage(pd.DataFrame(rows), principle_ids=PRINCIPLES)
    from_tuple = coverage((rows["mode"][:2], rows["strategy"][:2], rows["principle"][:2]), principle_ids=PRINCIPLES)
    xr.testing.assert_identical(from_mapping, from_frame)
    xr.testing.assert_identical(from_mapping, from_tuple)
    assert int(from_mapping.sum()) == 2


def test_empty_tags_give_zero_coverage():
    counts = coverage(pd.DataFrame(columns=["mode", "strategy", "principle"]), principle_ids=PRINCIPLES)
    assert counts.shape == (4, 4, 4) and int(counts.sum()) == 0
    assert float(share_covered(counts)) == 0.0


@pytest.mark.parametrize(
    ("column", "value"),
    [
        pytest.param("mode", "chit_chat", id="unknown-mode"),
        pytest.param("strategy", "flattery", id="unknown-strategy"),
        pytest.param("principle", "loyalty", id="principle-outside-role"),
    ],
)
def test_tags_outside_the_grid_are_errors(column, value):
    rows = {"mode": ["information_seeking"], "strategy": ["sociability"], "principle": ["truthfulness"]}
    rows[column] = [value]
    with pytest.raises(ValueError, match=f"unknown {column} \\['{value}'\\]"):
        coverage(rows, principle_ids=PRINCIPLES)


_ONE_TURN = {"mode": ["information_seeking"], "strategy": ["sociability"], "principle": ["truthfulness"]}


@pytest.mark.parametrize(
    ("tags", "principle_ids", "error", "match"),
    [
        pytest.param(_ONE_TURN, "truthfulness", TypeError, "got one string", id="principle-ids-a-string"),
        pytest.param(_ONE_TURN, [], ValueError, "distinct principle ids", id="no-principle-ids"),
        pytest.param(_ONE_TURN, ["truthfulness", "truthfulness"], ValueError, "distinct principle ids", id="repeated-principle-id"),
        pytest.param([("information_seeking", "sociability", "truthfulness")], PRINCIPLES, TypeError, "tags must be", id="tags-a-list"),
        pytest.param({"mode": ["information_seeking"], "strategy": ["sociability"]}, PRINCIPLES, ValueError, "lack column\\(s\\) principle", id="tags-lack-a-column"),
    ],
)
def test_bad_coverage_arguments_are_named(tags, principle_ids, error, match):
    with pytest.raises(error, match=match):
        coverage(tags, principle_ids=principle_ids)


def test_share_covered_rejects_counts_without_the_grid_dims():
    with pytest.raises(ValueError, match="expected dims mode, strategy, principle"):
        share_covered(xr.DataArray(np.zeros((4, 4)), dims=("mode", "strategy")))


def test_share_covered_keeps_other_dims_and_honours_min_count():
    counts = xr.concat(
        [
            coverage({"mode": ["information_seeking"] * 3, "strategy": ["sociability"] * 3, "principle": ["truthfulness"] * 3}, principle_ids=PRINCIPLES),
            coverage({"mode": list(MODES), "strategy": list(STRATEGIES), "principle": PRINCIPLES}, principle_ids=PRINCIPLES),
        ],
        dim="replicate",
    )
    np.testing.assert_allclose(share_covered(counts).to_numpy(), [1 / 64, 4 / 64])
    np.testing.assert_allclose(share_covered(counts, min_count=2).to_numpy(), [1 / 64, 0.0])


def test_heatmap_lays_out_mode_strategy_rows_and_principle_columns():
    counts = coverage({"mode": list(MODES), "strategy": list(STRATEGIES), "principle": PRINCIPLES}, principle_ids=PRINCIPLES)
    ax = plot_coverage_heatmap(counts)
    assert [t.get_text() for t in ax.get_xticklabels()] == [p.replace("_", " ") for p in PRINCIPLES]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert len(rows) == 16 and rows[0] == "information seeking / sociability"
    assert not any(line.get_visible() for line in ax.get_ygridlines())  # no gridline through the counts
    assert sorted(t.get_text() for t in ax.texts) == ["0"] * 60 + ["1"] * 4
    matplotlib.pyplot.close(ax.figure)


def test_heatmap_rejects_other_shapes():
    with pytest.raises(ValueError, match="expected dims"):
        plot_coverage_heatmap(xr.DataArray(np.zeros((4, 4)), dims=("mode", "strategy")))
