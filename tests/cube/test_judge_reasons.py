"""Judge reasons are kept with the transcripts and read back as a table, in to_long and by show."""

from __future__ import annotations

from pathlib import Path

import pytest

from multiverse import judge_reasons, open_cube, run, to_long
from multiverse.cli import main as cli
from multiverse.config.specs import load_role
from multiverse.core.choices import ModelSpec
from multiverse.core.transcript import TranscriptStore
from multiverse.judge.model import judge_request, parse_judgment
from multiverse.llm import Client
from multiverse.sim import SimWorld

PRINCIPLES = 4  # the tutor role's principles
SPECS = Path(__file__).resolve().parents[2] / "specs"


@pytest.fixture(scope="module")
def reasoned_run(tmp_path_factory, tiny_experiment):
    """A run folder with one model judge and the contract judge."""
    import yaml

    folder = tmp_path_factory.mktemp("reasons")
    data = tiny_experiment(roles=["tutor", "support"])
    data["dims"]["judge"]["contract"] = {"deterministic": "contract"}
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    cube = run(path, cache=folder / "cache", out=folder / "run")
    return folder / "run", cube, data


def test_every_model_judgment_keeps_its_reason(reasoned_run):
    out, cube, _data = reasoned_run
    table = judge_reasons(out)
    judged = cube["severity"].sel(judge="strict") >= 0
    assert len(table) == int(judged.sum()) > 0
    assert set(table["judge"]) == {"strict"}
    assert table["reason"].str.len().min() > 0
    assert list(table.columns) == [
        "system", "role", "user_sim", "condition", "replicate", "item", "turn", "principle", "judge",
        "transcript_id", "reason",
    ]
    one = table.iloc[0]
    at = {d: one[d] for d in ("system", "role", "user_sim", "condition", "replicate", "item")}
    assert cube["transcript_id"].sel(at).item() == one["transcript_id"]


def test_reasons_are_the_judges_own_words(reasoned_run):
    """The stored text is the reason the judge's cached reply gave for that turn and principle."""
    out, cube, data = reasoned_run
    table = judge_reasons(out / "cube.nc", role="tutor", item=0, turn=2)
    assert len(table) == PRINCIPLES
    with TranscriptStore(out / TranscriptStore.FILENAME) as store:
        transcript = store.get(table["transcript_id"].iloc[0])
    request = judge_request(load_role("tutor", specs_dir=SPECS), transcript, 2, spec=ModelSpec("sim/judge-strict"))
    with Client(cache=out.parent / "cache", offline=True, sim=SimWorld.from_config(data["sim"])) as client:
        _severities, said = parse_judgment(client.complete(request).text, table["principle"])
    assert dict(zip(table["principle"], table["reason"])) == said
    assert judge_reasons(out / "transcripts.sqlite", judge="contract").empty
    with pytest.raises(KeyError, match="no column 'colour'"):
        judge_reasons(out, colour="red")
    with pytest.raises(FileNotFoundError, match="no transcript store"):
        judge_reasons(out.parent / "nowhere" / "cube.nc")


def test_to_long_adds_reasons_only_when_asked(reasoned_run):
    out, cube, _data = reasoned_run
    plain = to_long(open_cube(out))
    assert "reason" not in plain.columns
    long = to_long(open_cube(out), reasons=True)
    assert len(long) == len(plain)
    model = long[(long["judge"] == "strict") & (long["severity"] >= 0)]
    assert model["reason"].notna().all() and len(model) > 0
    assert long[long["judge"] == "contract"]["reason"].isna().all()
    in_memory = to_long(cube, reasons=True)
    assert in_memory["reason"].notna().sum() == model["reason"].notna().sum()
    unsaved = cube.copy()
    unsaved.encoding = {}
    with pytest.raises(FileNotFoundError, match="pass reasons=<run folder>"):
        to_long(unsaved, reasons=True)
    assert to_long(unsaved, reasons=out)["reason"].notna().sum() == len(model)


def test_show_prints_reasons_only_with_the_flag(reasoned_run, capsys):
    out, _cube, _data = reasoned_run
    selection = ["--role", "tutor", "--item", "0"]
    assert cli(["show", str(out), *selection]) == 0
    assert "reason strict" not in capsys.readouterr().out
    assert cli(["show", str(out), *selection, "--reasons"]) == 0
    text = capsys.readouterr().out
    table = judge_reasons(out, role="tutor", item=0)
    for row in table.itertuples():
        assert f"reason strict {row.principle}: {row.reason}" in text
    assert text.count("reason strict") == len(table)
    assert cli(["show", str(out), *selection, "--reasons", "--transcripts", str(out / "none.sqlite")]) == 2
    assert "--reasons: no transcript store" in capsys.readouterr().err
