"""``write_site``: a self-contained static site of one run or cube.

The site opens from ``file://`` with no server and no network: pages, styles
and scripts are package data files copied beside the data, and the data are
JavaScript files (see :mod:`multiverse.view._jsdata`) loaded on demand, so the
index of a large run loads only its table, and a conversation page only the
chunk holding that conversation.

Layout of ``out``::

    index.html          provenance, counts, linked figures, the conversation table
    conversation.html   one conversation (``conversation.html#n=<row>``)
    assets/             styles and scripts
    data/index.js       the table and everything the index shows
    data/ids.js         each row's transcript id (loaded when the table is searched)
    data/conv-*.js      conversation records, CHUNK_SIZE per file
    data/units-*.js     units two raters disagree on (agreement-cell links)
    data/scores-*.js    every conversation's score per judge, standard and rule
    data/trust.js       each judge's canary results and probe effects (shown beside its severities)
    figures/            the report's figures as linked SVG
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from tqdm import tqdm

from multiverse import __version__
from multiverse.analysis import N_BOOT
from multiverse.core import schema as S
from multiverse.core.transcript import TranscriptStore
from multiverse.core.outputs import check_output_dir, replace_dir
from multiverse.cube.build import check_cube
from multiverse.cube.io import open_cube
from multiverse.scoring import score
from multiverse.view._conversation import conversation_records
from multiverse.view._figures import linked_figures
from multiverse.view._html import figure_block
from multiverse.view._jsdata import CHUNK_SIZE, chunks, plain, write_data
from multiverse.view._oracle import RoleContracts, specs_dir_of
from multiverse.view._reasons import ReasonIndex, read_reasons
from multiverse.view._trust import judge_trust
from multiverse.view._table import ConversationTable, conversation_table, disagreement_units, raters_of, stacked

__all__ = ["SiteError", "write_site"]

ASSETS = ("viewer.css", "common.js", "index.js", "conversation.js")
PROVENANCE_KEYS = ("multiverse_version", "plan_digest", "experiment_digest", "created", "campaign_judge",
                   "source", "spec_digests", "dependency_versions", "warnings")


class SiteError(ValueError):
    """The input cannot be shown (e.g. annotation tasks of the wrong form)."""


def template(name: str) -> str:
    """The text of one packaged page, style or script."""
    return resources.files("multiverse.view").joinpath("templates", name).read_text(encoding="utf-8")


def copy_assets(out: Path, names: tuple[str, ...]) -> None:
    """Copy packaged styles and scripts into ``out/assets``."""
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    for name in names:
        (assets / name).write_text(template(name), encoding="utf-8")


def _decoded(cube: xr.Dataset, key: str) -> Any:
    value = cube.attrs.get(key)
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def provenance(cube: xr.Dataset) -> dict[str, Any]:
    """What the index shows of where the cube came from."""
    experiment = _decoded(cube, "experiment")
    name = experiment.get("name") if isinstance(experiment, dict) else None
    out: dict[str, Any] = {"experiment": name or cube.attrs.get("title", ""), "viewer_version": __version__}
    for key in PROVENANCE_KEYS:
        if key in cube.attrs:
            out[key] = _decoded(cube, key)
    return out


def counts(cube: xr.Dataset, table: ConversationTable) -> dict[str, Any]:
    """Conversations by end state, judgments valid and missing (by reason) per judge, failed calls."""
    column = table.columns.index("ended")
    ended: dict[str, int] = {}
    for row in table.rows:
        ended[row[column]] = ended.get(row[column], 0) + 1
    judges = [str(j) for j in cube["judge"].values.tolist()]
    severity = cube["severity"]
    valid = (severity >= 0).sum([d for d in severity.dims if d != "judge"]).values
    missing = (severity == S.MISSING).sum([d for d in severity.dims if d != "judge"]).values
    by_reason = {}
    if "missing_count" in cube:
        for judge in judges:
            row = cube["missing_count"].sel(judge=judge)
            by_reason[judge] = {str(r): int(c) for r, c in zip(row["missing_reason"].values, row.values) if c}
    run = _decoded(cube, "run")
    return {
        "conversations": len(table.rows),
        "cells": int(np.prod([cube.sizes[d] for d in S.CONVERSATION_DIMS])),
        "ended": ended,
        "judgments": {j: {"valid": int(v), "missing": int(m), "missing_by_reason": by_reason.get(j, {})}
                      for j, v, m in zip(judges, valid, missing)},
        "failures": run.get("failures", {}) if isinstance(run, dict) else {},
        "calls": run.get("calls") if isinstance(run, dict) else None,
        "sequential": run.get("sequential") if isinstance(run, dict) else None,
    }


def role_principles(cube: xr.Dataset) -> dict[str, list[str]]:
    """The principles that apply to each role."""
    principles = [str(p) for p in cube["principle"].values.tolist()]
    if "principle_applies" not in cube:
        return {str(r): principles for r in cube["role"].values}
    return {str(r): [p for p, a in zip(principles, cube["principle_applies"].sel(role=r).values) if a]
            for r in cube["role"].values}


def encoded_rows(table: ConversationTable) -> tuple[list[str], dict[str, list[Any]], list[list[Any]]]:
    """The table without ``transcript_id``, text columns as codes into per-column dictionaries.

    Returns ``(columns, dictionaries, rows)``: a text column's cell is the index
    of its value in ``dictionaries[column]``.  Repeated labels and grid cells
    then cost a few bytes per row, which keeps a large run's index small.
    """
    keep = [i for i, name in enumerate(table.columns) if name != "transcript_id"]
    columns = [table.columns[i] for i in keep]
    text = [i for i in keep if table.rows and isinstance(table.rows[0][i], str)]
    dictionaries: dict[str, list[Any]] = {}
    lookups: dict[int, dict[Any, int]] = {}
    for i in text:
        values = sorted({row[i] for row in table.rows})
        dictionaries[table.columns[i]] = values
        lookups[i] = {v: k for k, v in enumerate(values)}
    rows = [[lookups[i][row[i]] if i in lookups else row[i] for i in keep] for row in table.rows]
    return columns, dictionaries, rows


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def _write_scores(cube: xr.Dataset, table: ConversationTable, data: Path) -> dict[str, Any]:
    """One file per judge: ``{"<standard>|<rule>": [value per row]}``; returns the key of each judge's file."""
    scores = score(cube)
    shape = tuple(cube.sizes[d] for d in S.CONVERSATION_DIMS)
    flat = np.ravel_multi_index(tuple(table.positions.T), shape) if len(table.positions) else np.zeros(0, int)
    keys = {}
    for j, judge in enumerate(scores["judge"].values.tolist()):
        per_judge = {}
        for standard in scores["standard"].values.tolist():
            for rule in scores["rule"].values.tolist():
                values = stacked(scores.sel(judge=judge, standard=standard, rule=rule))[flat]
                per_judge[f"{standard}|{rule}"] = [None if np.isnan(v) else round(float(v), 4) for v in values]
        key = f"scores-{j}"
        write_data(data, key, per_judge)
        keys[str(judge)] = key
    return {"files": keys, "standards": scores["standard"].values.tolist(), "rules": scores["rule"].values.tolist(),
            "units": {str(r): str(u) for r, u in zip(scores["rule"].values, scores["unit"].values)}
            if "unit" in scores.coords else {}}


def _write_units(cube: xr.Dataset, table: ConversationTable, data: Path, links: list[str]) -> dict[str, str]:
    """The disagreement-unit files the agreement figures link to; ``"<standard>|<a>|<b>"`` -> data key."""
    from urllib.parse import parse_qs

    raters = raters_of(cube)
    keys: dict[str, str] = {}
    for link in links:
        params = {k: v[0] for k, v in parse_qs(link[1:]).items()}
        if params.get("view") != "units":
            continue
        a, b, standard = params["a"], params["b"], params["standard"]
        if a not in raters or b not in raters:
            continue
        a, b = sorted((a, b), key=raters.index)  # one file per unordered pair; the page swaps columns
        name = f"{standard}|{a}|{b}"
        if name in keys:
            continue
        key = f"units-{_safe(standard)}-{raters.index(a)}-{raters.index(b)}"
        rows = disagreement_units(cube, table, a, b, standard=None if standard == "severity" else standard)
        write_data(data, key, rows)
        keys[name] = key
    return keys


def write_site(
    cube: xr.Dataset | str | Path,
    out: str | Path,
    *,
    transcripts: str | Path | None = None,
    reasons: pd.DataFrame | None = None,
    specs_dir: str | Path | None = None,
    figures: bool = True,
    n_boot: int = N_BOOT,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
    progress: bool = False,
) -> Path:
    """Write the static viewer of a run or cube into ``out`` and return the path of its ``index.html``.

    Parameters
    ----------
    cube
        A judgment cube, or the path of a run folder or cube file.
    out
        Output folder; replaced as a whole when it is missing, empty or written
        by the viewer before, refused otherwise (the output-folder rule,
        :mod:`multiverse.core.outputs`: what the viewer did not write stays).
    transcripts
        The transcript store (default: ``transcripts.sqlite`` beside the cube,
        when ``cube`` is a path).  Without one, conversation pages show the
        judgments but no text.
    reasons
        Judge reasons as a table with the columns of
        :data:`multiverse.view._reasons.COLUMNS` (default: those the store keeps).
    specs_dir
        Where the roles and contracts live (default: the experiment's, else the
        project's); used for the active role per turn.
    figures
        Draw the report's figures with links (the slowest part of a large cube).
    n_boot, seed
        Resampling draws and seed of the figures' intervals and tests.  The
        analyses behind the figures are those of ``multiverse report``
        (:func:`multiverse.analysis.overview.overview`), read from beside the
        cube file when ``cube`` is a path and they were kept there for the same
        cube, draws and seed (:func:`multiverse.analysis.overview_cache.cached_overview`).
    log
        Called with one line per test of the specification curve (the lines
        ``multiverse report`` prints) and per analysis skipped.
    progress
        Show progress bars on stderr (on a terminal, for steps that take more
        than two seconds).

    Returns
    -------
    pathlib.Path
        ``out/index.html``.

    Raises
    ------
    multiverse.core.outputs.OutputDirError
        If ``out`` must not be replaced (checked before anything is read).
    SiteError
        If ``cube`` is not a judgment cube.
    FileNotFoundError
        If ``cube`` is a path with no cube.

    See Also
    --------
    multiverse.report.write_report, write_annotation_site
    """
    out = Path(out)
    store_path = Path(transcripts) if transcripts is not None else None
    inputs = {"the cube": None if isinstance(cube, xr.Dataset) else cube, "the transcript store": store_path}
    check_output_dir(out, kind="view", protected=inputs)
    source = None
    analyses = None
    if not isinstance(cube, xr.Dataset):
        path = Path(cube)
        source = path.name
        folder = path if path.is_dir() and path.suffix != ".zarr" else path.parent
        if figures:
            from multiverse.analysis.overview_cache import cached_overview

            cube, analyses = cached_overview(path, n_boot=n_boot, seed=seed, progress=progress)
        else:
            cube = open_cube(path, lazy=False)
        if store_path is None and (folder / TranscriptStore.FILENAME).exists():
            store_path = folder / TranscriptStore.FILENAME
    try:
        check_cube(cube)
    except ValueError as exc:
        raise SiteError(f"{source or 'the dataset'}: not a judgment cube ({exc})") from None
    if figures and analyses is None:
        from multiverse.analysis.overview import overview

        analyses = overview(cube, n_boot=n_boot, seed=seed, progress=progress)
    say = log or (lambda line: None)
    table = conversation_table(cube)
    kept = ReasonIndex(reasons if reasons is not None else read_reasons(store_path))
    contracts = RoleContracts(specs_dir_of(cube, specs_dir))
    with replace_dir(out, kind="view") as staging:
        data = staging / "data"
        shown: list[str] = []
        notes: list[str] = []
        links: list[str] = []
        if analyses is not None:
            from multiverse.analysis.overview import curve_tests

            drawn, notes = linked_figures(cube, staging / "figures", analyses=analyses)
            for line in curve_tests(analyses) + notes:
                say(line)
            for figure in drawn:
                shown.append(figure_block(figure.name, figure.inline_svg()))
                links += figure.links
        store = TranscriptStore.open_existing(store_path) if store_path is not None and store_path.exists() else None
        try:
            records = chunks(conversation_records(cube, table, store=store, contracts=contracts, reasons=kept))
            for key, block in tqdm(records, total=math.ceil(len(table.rows) / CHUNK_SIZE), desc="conversations",
                                   unit="chunk", delay=2, file=sys.stderr, disable=None if progress else True,
                                   leave=False):
                write_data(data, key, block)
        finally:
            if store is not None:
                store.close()
        columns, dictionaries, rows = encoded_rows(table)
        trust = judge_trust(cube, analyses.results.get("probe_effects") if analyses is not None else None)
        write_data(data, "trust", plain(trust))
        write_data(data, "ids", [row[table.columns.index("transcript_id")] for row in table.rows])
        index = {
            "provenance": {**provenance(cube), "path": source},
            "counts": counts(cube, table),
            "columns": columns,
            "dictionaries": dictionaries,
            "rows": rows,
            "judges": [str(j) for j in cube["judge"].values.tolist()],
            "trust": trust,
            "raters": raters_of(cube),
            "role_principles": role_principles(cube),
            "chunk_size": CHUNK_SIZE,
            "scores": _write_scores(cube, table, data),
            "units": _write_units(cube, table, data, links),
            "has_transcripts": store_path is not None and store_path.exists(),
            "has_reasons": bool(kept),
            "notes": notes,
        }
        write_data(data, "index", plain(index))
        page = template("index.html").replace("<!--FIGURES-->", "\n".join(shown) or "<p>No figures drawn.</p>")
        (staging / "index.html").write_text(page, encoding="utf-8")
        (staging / "conversation.html").write_text(
            template("conversation.html").replace("__CHUNK_SIZE__", str(CHUNK_SIZE)), encoding="utf-8")
        copy_assets(staging, ASSETS)
    return out / "index.html"
