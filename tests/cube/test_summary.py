"""The one-screen cube summary counts what is valid and missing, by judge and reason."""

import numpy as np

import multiverse
from multiverse.cube.build import new_cube


def _cube():
    cube = new_cube(
        system=["a"], role=["tutor"], user_sim=["u"], condition=["c"], replicate=1, item=2, turn=2,
        principle=["academic_integrity"], judge=["strict", "lenient"], with_truth=True,
        role_principles={"tutor": ("academic_integrity",)},
    )
    severity = cube["severity"].values
    severity[..., 0] = 0  # strict: every cell valid
    severity[..., 0, 0, 1, 0, 1] = -1  # lenient: item 0 turn 2 missing, the rest valid
    severity[..., 0, 1, :, 0, 1] = 2
    severity[..., 0, 0, 0, 0, 1] = 1
    cube["missing_count"].loc[{"judge": "lenient", "missing_reason": "unparseable"}] = 1
    cube["ended"].values[..., 0] = "completed"
    cube["ended"].values[..., 1] = "monitor_ended"
    return cube


def test_summary_counts_valid_missing_and_reasons():
    found = multiverse.summary(_cube())
    assert found.judgments == {
        "strict": {"valid": 4, "missing": 0, "not_applicable": 0},
        "lenient": {"valid": 3, "missing": 1, "not_applicable": 0},
    }
    assert found.missing_reasons == {"strict": {}, "lenient": {"unparseable": 1}}
    assert found.conversations == {"completed": 1, "monitor_ended": 1, "failed": 0}
    assert found.has_truth
    assert found.sizes["judge"] == 2 and found.sizes["turn"] == 2


def test_summary_text_fits_one_screen_and_names_missing_reasons():
    text = str(multiverse.summary(_cube()))
    assert len(text.splitlines()) <= 24
    assert "lenient  3 / 1 / 0  (missing: unparseable 1)" in text
    assert "conversations: 2 (completed 1, monitor_ended 1, failed 0)" in text
    assert "planted truth: present" in text


def test_summary_of_an_unfilled_cube_counts_no_conversation_and_no_failure():
    cube = new_cube(system=["a"], role=["tutor"], user_sim=["u"], condition=["c"], replicate=1, item=3, turn=1,
                    principle=["academic_integrity"], judge=["j"])
    found = multiverse.summary(cube)
    assert found.conversations == {"completed": 0, "monitor_ended": 0, "failed": 0, "not in the data": 3}
    assert "conversations: 0 (completed 0, monitor_ended 0, failed 0); empty cells: 3 not in the data" in str(found)
    assert found.judgments["j"] == {"valid": 0, "missing": 0, "not_applicable": 3}
    assert not found.has_truth
    assert np.all(cube["severity"].values == -2)


def test_summary_stays_the_function_after_its_module_is_imported():
    import multiverse.cube.summary  # noqa: F401

    assert callable(multiverse.summary) and multiverse.summary.__name__ == "summary"
