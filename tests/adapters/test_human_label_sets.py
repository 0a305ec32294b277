"""A public human-label set of the usual shape (three humans, two LLM judges, raw preference labels)
gives Table 1 and Dawid-Skene through the loading call alone."""

import numpy as np
import pandas as pd
import pytest

from multiverse.adapters import long_table
from multiverse.analysis import calibration_table, latent_class

RAW = {0: "A", 1: "B", 2: "Tie"}
LABELS = {"A": 0, "B": 1, "Tie": 2}


@pytest.fixture
def preference_file(tmp_path):
    """Pairwise preferences on 150 items: three humans and two LLM judges, with raw labels and a few oddities."""
    rng = np.random.default_rng(8)
    truth = rng.choice(3, size=150, p=[0.45, 0.4, 0.15])
    accuracy = {"human_1": 0.9, "human_2": 0.85, "human_3": 0.88, "gpt4": 0.8, "claude": 0.75}
    rows = []
    for item, true in enumerate(truth):
        for rater, acc in accuracy.items():
            label = true if rng.random() < acc else rng.choice([c for c in range(3) if c != true])
            value = RAW[int(label)]
            if rater == "claude" and item % 50 == 0:
                value = "refused"  # not in the mapping: missing, counted
            rows.append({"question_id": f"q{item:03d}", "model_pair": "m1-vs-m2", "annotator": rater, "preference": value})
    path = tmp_path / "preferences.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path, truth


def test_table_1_and_dawid_skene_from_the_loading_call(preference_file):
    path, truth = preference_file
    cube = long_table(path, item="question_id", system="model_pair", judge="annotator", score="preference",
                      labels=LABELS, nominal=True)
    assert cube.attrs["n_unmapped"] == 3
    table = calibration_table(cube, humans=["human_1", "human_2", "human_3"], n_boot=100)
    assert table["scale"].values.tolist() == ["categories"]
    percent = table["estimate"].sel(scale="categories", metric="percent", group="overall")
    assert float(percent.sel(rater="humans")) > float(percent.sel(rater="claude"))
    assert int(table["n_units"].sel(rater="claude", scale="categories", group="overall")) == 3 * 147
    classes = latent_class(cube)
    assert classes["confusion"].dims == ("rater", "true", "observed")
    recovered = classes["posterior"].squeeze(drop=True).argmax("true").values
    assert np.mean(recovered == truth) > 0.9
