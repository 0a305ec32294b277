"""The shared cube constructor, the truth-as-judge view and the long table."""

import numpy as np
import pytest

from multiverse.cube.build import new_cube, to_long, with_truth_judge


def small_cube(*, with_truth=True):
    cube = new_cube(
        system=["a", "b"], role=["tutor"], user_sim=["u"], condition=["c"], replicate=2, item=3,
        turn=2, principle=["academic_integrity", "confidentiality"], judge=["j1", "j2"],
        with_truth=with_truth, coords={"judge_model": ("judge", ["sim/judge-1", "sim/judge-2"])},
    )
    rng = np.random.default_rng(0)
    cube["severity"].values[...] = rng.integers(-1, 3, cube["severity"].shape)
    if with_truth:
        cube["truth"].values[...] = rng.integers(0, 3, cube["truth"].shape)
    cube["missing_count"].values[...] = 5
    return cube


def test_truth_joins_as_one_more_judge():
    cube = small_cube()
    out = with_truth_judge(cube)
    assert list(out["judge"].values) == ["j1", "j2", "truth"]
    assert out["severity"].dtype == np.int8
    assert out["severity"].dims == cube["severity"].dims
    np.testing.assert_array_equal(out["severity"].sel(judge="truth").values, cube["truth"].values)
    np.testing.assert_array_equal(out["severity"].sel(judge=["j1", "j2"]).values, cube["severity"].values)
    assert list(out["judge_model"].values) == ["sim/judge-1", "sim/judge-2", ""]
    assert out["missing_count"].sel(judge="truth").sum() == 0


@pytest.mark.parametrize(
    ("cube", "message"),
    [
        pytest.param(small_cube(with_truth=False), "no 'truth'", id="no-truth-planted"),
        pytest.param(with_truth_judge(small_cube()), "already exists", id="truth-judge-twice"),
    ],
)
def test_truth_judge_refuses(cube, message):
    with pytest.raises(ValueError, match=message):
        with_truth_judge(cube)


def test_long_table_drops_not_applicable_rows_and_keeps_the_rest():
    cube = small_cube()
    cube["severity"].values[0, ...] = -2
    frame = to_long(cube)
    assert (frame["severity"] != -2).all()
    assert len(frame) == int((cube["severity"] != -2).sum())
    assert {"system", "judge", "turn", "principle", "truth", "transcript_id"} <= set(frame.columns)
