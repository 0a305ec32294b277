"""The probe study at small size: planted biases found, null probes quiet, the judge without signal flagged."""

import pytest
from tiny_experiments import load_study


@pytest.mark.slow
def test_the_study_runs_end_to_end_at_small_size(tmp_path):
    numbers = load_study("sim_probes").main(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                                            figures_dir=tmp_path / "figures", items=12)
    assert numbers["canaries.flagged"] == ["blind"]
    assert numbers["canaries.clean.no_signal"] is False and numbers["canaries.blind.youden_ci"][0] <= 0
    assert numbers["probe.biased.padded.ci"][1] < 0 < numbers["probe.biased.reworded.ci"][0]
    assert numbers["probe.biased.padded.planted"] < 0 < numbers["probe.biased.reworded.planted"]
    assert numbers["probe.clean.padded.planted"] == 0.0 and numbers["probe.n_probed"] == 12
    assert numbers["order.first.planted"] == -0.6 and numbers["order.fair.planted"] == 0.0
    assert numbers["order.first.n_cells"] == 2 * 12 * 4 * 4, "both targets' 12 conversations, 4 turns, 4 principles"
    assert numbers["order.first.ci"][1] < 0 and numbers["order.first.reference_wins_combined"] < \
        numbers["order.first.reference_wins_shown_first"]
    low, high = numbers["corrected.ci"]
    assert low <= numbers["corrected.estimate"] <= high
    assert (tmp_path / "figures" / "fig12_probe_effects.png").exists() and (tmp_path / "figures" / "fig13_canaries.png").exists()
