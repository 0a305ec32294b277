"""Simulation study 5: the web agent against its simulated CRM, and judge-vs-state-check agreement.

Runs ``sim_web_agent.yaml``: the ``clean`` target never breaches but takes the
confirm-then-act path (``legit_actions``), so its transcripts hold confirmed
writes and the trusted ``set_role`` events around them, and the role-contract
oracle must report no violation; the ``typical`` target breaches at planted
rates.  Per ``web_agent`` principle, Cohen's kappa on clear breaches between
each model judge and the deterministic state checks (``state_checks``, which
read the replayed CRM), over every assistant turn both rated, is written to
``kappa.csv`` and ``kappa.md`` beside the cube: the table the paper quotes
(its live counterpart reported 0.88 / 0.86 / 0.89 / 0.14 for consent,
hierarchy, protected values and strict execution).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from _common import EXPERIMENTS, finite_or_none

CHECK = "state"
"""The experiment's label of the deterministic state checks."""
MODEL_JUDGES = ("strict", "lenient")
WRITES = frozenset({"save_record", "update_record", "delete_record", "send_email", "export_records"})


def kappa_table(cube, *, check: str = CHECK, judges=MODEL_JUDGES) -> pd.DataFrame:
    """Per principle and model judge: Cohen's kappa with the state checks on clear breaches, with its counts.

    Columns: ``principle``, ``judge``, ``cohen_kappa`` (NaN where undefined),
    ``n_units`` (turns both rated), ``check_breaches`` and ``judge_breaches``
    (clear breaches each reported on those turns).
    """
    from multiverse.analysis import agreement

    kappa = agreement(cube, metric="cohen_kappa", standard="clear_breach", by="principle")
    rows = []
    for judge in judges:
        for principle in cube["principle"].values:
            cell = kappa.sel(judge=judge, judge_b=check, principle=principle)
            ours = cube["severity"].sel(judge=judge, principle=principle).values
            theirs = cube["severity"].sel(judge=check, principle=principle).values
            both = (ours >= 0) & (theirs >= 0)
            rows.append({
                "principle": str(principle), "judge": judge, "cohen_kappa": float(cell),
                "n_units": int(cell["n_units"]), "check_breaches": int(((theirs == 2) & both).sum()),
                "judge_breaches": int(((ours == 2) & both).sum()),
            })
    return pd.DataFrame(rows)


def _markdown(table: pd.DataFrame) -> str:
    lines = ["| principle | judge | Cohen's kappa | turns | check breaches | judge breaches |", "|---|---|---|---|---|---|"]
    for row in table.itertuples():
        kappa = "undefined" if np.isnan(row.cohen_kappa) else f"{row.cohen_kappa:.2f}"
        lines.append(f"| {row.principle} | {row.judge} | {kappa} | {row.n_units} | {row.check_breaches} | {row.judge_breaches} |")
    return "\n".join(lines) + "\n"


def _clean_writes(out: Path, cube) -> dict[str, int]:
    """The clean target's confirmed writes that ran and the trusted role changes of its conversations."""
    from multiverse.core.transcript import TranscriptStore

    ids = [str(t) for t in np.ravel(cube["transcript_id"].sel(system="clean").values) if str(t)]
    writes = trusted = 0
    with TranscriptStore(out / TranscriptStore.FILENAME) as store:
        for transcript in map(store.get, ids):
            events = transcript.events
            trusted += sum(1 for e in events if e.actor == "system" and e.set_role)
            writes += sum(1 for e in events if e.actor == "tool" and e.meta.get("action") in WRITES
                          and e.meta.get("status") == "ok")
    return {"confirmed_writes": writes, "trusted_role_changes": trusted, "conversations": len(ids)}


def main(*, out_dir: Path, cache_dir: Path, experiment: Path | None = None, **_: object) -> dict[str, object]:
    import multiverse

    run_dir = out_dir / "run"
    cube = multiverse.run(experiment or EXPERIMENTS / "sim_web_agent.yaml", out=run_dir, cache=cache_dir)
    table = kappa_table(cube)
    table.to_csv(out_dir / "kappa.csv", index=False)
    (out_dir / "kappa.md").write_text(_markdown(table), encoding="utf-8")
    contract = cube["severity"].sel(judge="contract")
    numbers: dict[str, object] = {
        f"clean.{key}": value for key, value in _clean_writes(run_dir, cube).items()
    }
    numbers["clean.contract_violations"] = int((contract.sel(system="clean") == 2).sum())
    numbers["typical.contract_violations"] = int((contract.sel(system="typical") == 2).sum())
    for row in table.itertuples():
        numbers[f"kappa.{row.judge}.{row.principle}"] = finite_or_none(row.cohen_kappa)
        numbers[f"n_units.{row.judge}.{row.principle}"] = row.n_units
    return numbers
