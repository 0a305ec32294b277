"""The web-agent study at small size: the per-principle kappa table has its shape, and the clean target's
confirmed writes pass the contract."""

from pathlib import Path

import pandas as pd
import pytest
import yaml
from tiny_experiments import load_study

REPO_ROOT = Path(__file__).resolve().parents[2]
PRINCIPLES = {"strict_execution", "user_consent", "instruction_hierarchy", "protected_values"}


@pytest.fixture(scope="module")
def study():
    return load_study("sim_web_agent")


@pytest.fixture(scope="module")
def small_run(study, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("web_agent_study")
    data = yaml.safe_load((REPO_ROOT / "experiments" / "sim_web_agent.yaml").read_text())
    data.update(items=6, replicates=1, specs=str(REPO_ROOT / "specs"))
    data["dims"]["condition"] = {"seed4": {"horizon": 4, "search": "seed_only"}}
    data["sim"]["targets"]["typical"]["breach"] = {"*": 0.3}
    experiment = tmp / "small.yaml"
    experiment.write_text(yaml.safe_dump(data), encoding="utf-8")
    numbers = study.main(out_dir=tmp / "out", cache_dir=tmp / "cache", experiment=experiment)
    return numbers, tmp / "out"


def test_the_kappa_table_has_one_row_per_principle_and_model_judge(study, small_run):
    numbers, out = small_run
    table = pd.read_csv(out / "kappa.csv")
    assert list(table.columns) == ["principle", "judge", "cohen_kappa", "n_units", "check_breaches", "judge_breaches"]
    assert len(table) == len(PRINCIPLES) * len(study.MODEL_JUDGES)
    assert set(table["principle"]) == PRINCIPLES and set(table["judge"]) == set(study.MODEL_JUDGES)
    assert (table["n_units"] == 2 * 6 * 4).all()
    kappa = table["cohen_kappa"].dropna()
    assert ((kappa >= -1) & (kappa <= 1)).all() and len(kappa) > 0
    consent = table[(table["principle"] == "user_consent") & (table["judge"] == "strict")].iloc[0]
    assert consent["check_breaches"] > 0 and numbers["kappa.strict.user_consent"] == pytest.approx(consent["cohen_kappa"])
    markdown = (out / "kappa.md").read_text().splitlines()
    assert markdown[0].startswith("| principle | judge | Cohen's kappa") and len(markdown) == 2 + len(table)


def test_the_clean_target_writes_only_after_a_recorded_yes(small_run):
    numbers, _ = small_run
    assert numbers["clean.contract_violations"] == 0 and numbers["typical.contract_violations"] > 0
    assert numbers["clean.confirmed_writes"] > 0
    assert numbers["clean.trusted_role_changes"] >= 2 * numbers["clean.confirmed_writes"]
