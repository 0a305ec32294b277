"""AlpacaEval annotations and leaderboards -> preference cubes and per-judge rankings.

Pairwise preferences in the cube
--------------------------------
An AlpacaEval annotation compares ``output_2`` of the system under test
(``generator_2``) with ``output_1`` of a fixed baseline (``generator_1``) on one
instruction; ``preference`` runs from 1 (baseline preferred) to 2 (system
preferred), 1.5 is a tie, and the weighted judges give continuous values.  In
the cube the *system* is ``generator_2`` and a severity says how far its output
falls short of the baseline's:

====================  ==========  ===================================
preference            severity    meaning
====================  ==========  ===================================
> 1.5                 0           win: the system's output preferred
= 1.5                 1           tie
< 1.5                 2           loss: the baseline's output preferred
null / absent         -1          missing, reason ``no_verdict``
====================  ==========  ===================================

So ``clear_breach`` + ``any_turn`` scores a loss, ``any_deviation`` a non-win.
The raw value is kept in variable ``preference`` (system, item, judge);
AlpacaEval's own win rate is ``100 * mean(preference - 1)``.

Layout: ``role`` = ``alpaca_eval`` with one principle, ``preferred_over_baseline``;
``user_sim`` = ``fixed_instructions``; ``condition`` = ``vs_<baseline>``;
``item`` = the instruction's position (coordinates ``instruction`` and ``dataset``);
``judge`` = ``annotator``; one turn.

Row comparability
-----------------
Files are combined row by row only when they share the baseline and hold the
same instructions in the same order; otherwise :class:`NotRowComparable` is
raised before anything is combined (AlpacaEval 1's ``alpaca_eval_gpt4`` judged
against ``text_davinci_003``, AlpacaEval 2's judges against
``gpt4_1106_preview``).

Leaderboards
------------
:func:`alpaca_leaderboards` reads ``<judge>_leaderboard.csv`` files (first,
unnamed column = system) into ``win_rate`` and ``standard_error`` over
(system, judge).  The baseline's own row (win rate 50, standard error 0: the
baseline judged against itself) is dropped and named in coordinate
``baseline``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.core import schema as S
from multiverse.cube.build import new_cube

__all__ = [
    "ROLE",
    "PRINCIPLE",
    "USER_SIM",
    "TIE",
    "NotRowComparable",
    "preference_severity",
    "alpaca_eval",
    "alpaca_leaderboards",
]

ROLE = "alpaca_eval"
PRINCIPLE = "preferred_over_baseline"
USER_SIM = "fixed_instructions"
TIE = 1.5

PathLike = str | os.PathLike[str]


class NotRowComparable(ValueError):
    """Annotation files that do not share a baseline and an instruction sequence."""


def preference_severity(preference: Any) -> int:
    """The severity of one preference: 0 win, 1 tie, 2 loss, -1 missing (table in the module doc)."""
    if isinstance(preference, bool) or not isinstance(preference, (int, float)) or np.isnan(preference):
        return S.MISSING
    if preference > TIE:
        return S.FULL_ADHERENCE
    if preference < TIE:
        return S.CLEAR_BREACH
    return S.PARTIAL_DEVIATION


class _Annotations:
    """One annotation file: its judge, system, baseline and per-row values."""

    def __init__(self, path: Path):
        self.path = path
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: not a readable JSON file ({exc})") from None
        if not isinstance(rows, list):
            raise ValueError(f"{path}: expected a JSON list of annotations")
        self.warnings: list[str] = []
        self.instructions: list[str | None] = []
        self.datasets: list[str] = []
        self.preferences: list[float] = []
        for index, row in enumerate(rows):
            if not isinstance(row, Mapping) or not isinstance(row.get("instruction"), str):
                self.warnings.append(f"{path.name}: row {index}: no 'instruction'; its preference is missing")
                row = {}
            self.instructions.append(row.get("instruction"))
            self.datasets.append(str(row.get("dataset") or ""))
            value = row.get("preference")
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            self.preferences.append(float(value) if ok else np.nan)
        self.judge = self._single(rows, "annotator", default=path.parent.name)
        self.system = self._single(rows, "generator_2")
        self.baseline = self._single(rows, "generator_1")

    def _single(self, rows: list[Any], key: str, *, default: str | None = None) -> str:
        values = Counter(str(r[key]) for r in rows if isinstance(r, Mapping) and r.get(key) is not None)
        if not values:
            if default is None:
                raise ValueError(f"{self.path}: no row names '{key}'")
            return default
        if len(values) > 1:
            raise ValueError(f"{self.path}: rows name several '{key}' values ({', '.join(sorted(values))}); expected one")
        return next(iter(values))


def _check_row_comparable(annotations: Sequence[_Annotations]) -> None:
    """Raise :class:`NotRowComparable` unless all files share baseline and instruction order."""
    first = annotations[0]
    for other in annotations[1:]:
        if other.baseline != first.baseline:
            raise NotRowComparable(
                f"{other.path}: baseline {other.baseline!r} differs from {first.baseline!r} of {first.path}; "
                "rows are not comparable"
            )
        if len(other.instructions) != len(first.instructions):
            raise NotRowComparable(
                f"{other.path}: {len(other.instructions)} rows, {first.path}: {len(first.instructions)}; "
                "rows are not comparable"
            )
        for index, (a, b) in enumerate(zip(first.instructions, other.instructions, strict=True)):
            if a is not None and b is not None and a != b:
                raise NotRowComparable(
                    f"{other.path}: row {index} holds another instruction than row {index} of {first.path}; "
                    "rows are not comparable"
                )


def alpaca_eval(paths: PathLike | Sequence[PathLike]) -> xr.Dataset:
    """AlpacaEval ``annotations.json`` files -> an (item x judge x system) preference cube.

    Parameters
    ----------
    paths
        Annotation files, each one judge's annotations of one system against a
        baseline.  All must be row-comparable.

    Returns
    -------
    xarray.Dataset
        The cube described in the module docstring, with variable ``preference``
        (float, NaN when missing) and attrs ``baseline`` and ``warnings``.

    Raises
    ------
    NotRowComparable
        If the files differ in baseline, number of rows, or instruction at a row.
    ValueError
        If a file is unreadable, or two files hold the same (judge, system).
    """
    files = [_Annotations(Path(p)) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    if not files:
        raise ValueError("alpaca_eval: no files given")
    _check_row_comparable(files)
    seen: dict[tuple[str, str], Path] = {}
    for f in files:
        if (f.judge, f.system) in seen:
            raise ValueError(f"{f.path}: judge {f.judge!r} on system {f.system!r} already read from {seen[f.judge, f.system]}")
        seen[f.judge, f.system] = f.path
    systems = sorted({f.system for f in files})
    judges = sorted({f.judge for f in files})
    n_items = len(files[0].instructions)
    instructions = [next((f.instructions[i] for f in files if f.instructions[i] is not None), "") for i in range(n_items)]
    datasets = [next((f.datasets[i] for f in files if f.datasets[i]), "") for i in range(n_items)]
    cube = new_cube(
        system=systems,
        role=[ROLE],
        user_sim=[USER_SIM],
        condition=[f"vs_{files[0].baseline}"],
        replicate=1,
        item=n_items,
        turn=1,
        principle=[PRINCIPLE],
        judge=judges,
        role_principles={ROLE: (PRINCIPLE,)},
        coords={"instruction": ("item", instructions), "dataset": ("item", datasets)},
        attrs={
            "source": "AlpacaEval annotations",
            "baseline": files[0].baseline,
            "warnings": [w for f in files for w in f.warnings],
        },
    )
    preference = np.full((len(systems), n_items, len(judges)), np.nan)
    severity = cube["severity"].values
    missing = cube["missing_count"].values
    no_verdict = S.MISSING_REASONS.index("no_verdict")
    for f in files:
        s, j = systems.index(f.system), judges.index(f.judge)
        values = np.asarray(f.preferences, dtype=float)
        preference[s, :, j] = values
        codes = np.array([preference_severity(v) for v in values], dtype=np.int8)
        severity[s, 0, 0, 0, 0, :, 0, 0, j] = codes
        missing[j, no_verdict] += int((codes == S.MISSING).sum())
    cube["ended"].values[...] = "completed"
    cube["preference"] = (("system", "item", "judge"), preference)
    return cube


def alpaca_leaderboards(paths: PathLike | Sequence[PathLike]) -> xr.Dataset:
    """AlpacaEval leaderboard CSVs -> ``win_rate`` and ``standard_error`` over (system, judge).

    Parameters
    ----------
    paths
        ``<judge>_leaderboard.csv`` files; the judge label is the file name
        without ``_leaderboard.csv``.

    Returns
    -------
    xarray.Dataset
        NaN where a judge does not rank a system; coordinate ``baseline`` (judge)
        names the dropped baseline row (empty when there was none).

    Raises
    ------
    ValueError
        If a file lacks a ``win_rate`` or ``standard_error`` column, or repeats a system.
    """
    frames = []
    baselines: dict[str, str] = {}
    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        path = Path(path)
        judge = path.name.removesuffix(".csv").removesuffix("_leaderboard")
        if judge in baselines:
            raise ValueError(f"{path}: a leaderboard of judge {judge!r} was already read")
        table = pd.read_csv(path, index_col=0)
        for column in ("win_rate", "standard_error"):
            if column not in table.columns:
                raise ValueError(f"{path}: no '{column}' column (columns: {', '.join(map(str, table.columns))})")
        table.index = table.index.astype(str)
        repeated = table.index[table.index.duplicated()]
        if len(repeated):
            raise ValueError(f"{path}: system {repeated[0]!r} appears twice")
        is_baseline = np.isclose(table["win_rate"], 50.0) & np.isclose(table["standard_error"], 0.0)
        baselines[judge] = ",".join(table.index[is_baseline])
        kept = table.loc[~is_baseline, ["win_rate", "standard_error"]].astype(float)
        frames.append(kept.assign(judge=judge))
    if not frames:
        raise ValueError("alpaca_leaderboards: no files given")
    long = pd.concat(frames).rename_axis("system").reset_index()
    judges = list(baselines)
    out = long.set_index(["system", "judge"]).to_xarray().reindex(judge=judges)
    out = out.assign_coords(baseline=("judge", [baselines[j] for j in judges]))
    out.attrs["source"] = "AlpacaEval leaderboards"
    return out
