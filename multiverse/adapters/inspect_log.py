"""inspect_ai evaluation logs -> a judgment cube and its transcripts.

The logs are read by the project's own reader of inspect_ai's log formats
(``.eval`` and ``.json``, log format versions 1 and 2: see
:mod:`multiverse.adapters._inspect_files`), not by inspect_ai: inspect_ai with
the packages it installs is about 200 MB, and reading a log needs none of it.
The tests pin this reader against inspect_ai's ``read_eval_log`` on logs
inspect_ai wrote.  A log of another version or format is refused with one
line naming the file and what was expected.

=====================  =================================================================
inspect_ai             cube
=====================  =================================================================
model                  ``system`` (the model string; also coordinate ``system_model``)
task                   ``role`` (default) or ``condition`` (``tasks="condition"``)
sample                 ``item`` (ids kept in coordinate ``sample_id``)
epoch                  ``replicate`` (epoch 1 is replicate 0)
scorer                 ``judge``; a dict-valued scorer is one judge per key, ``scorer/key``
score value            the label on the final assistant turn of principle ``score`` (-2 on
                       the turns before), on the scorer's scale; ``value`` keeps inspect's
                       own float reading of every value (its ``value_to_float``: C 1,
                       P 0.5, I and N 0, booleans and numbers as floats)
messages, tool calls   the transcript (``transcript_id``; put in ``store=``)
=====================  =================================================================

``user_sim`` is ``inspect`` (the user turns are the task's own).  A scorer's
scale (:mod:`multiverse.core.scales`) is read off its values unless declared
with ``scales={scorer: scale}``:

* ``C`` / ``I`` (inspect's CORRECT / INCORRECT; ``N``, no answer, reads as a
  fail as inspect scores it 0), booleans, or numbers 0 / 1: ``binary``, pass
  being correct;
* the same with ``P`` (partial credit): ``severity``, C full adherence, P
  partial deviation, I and N clear breach;
* other integers: ``likert`` over the observed range (the ratings in ``rating``).

A scorer whose values fit no scale (non-integer numbers, text other than the
letters above, lists, or a dict whose keys do not) is refused with one line
naming the log, the sample and the scorer; leave it out with ``scorers=``.
A sample that ended in an error is a ``failed`` conversation with missing
labels; a sample without a score from some scorer is missing for that judge
(reason ``not_recorded``).  :func:`reduce_epochs` applies inspect_ai's epoch
reducers to ``value``, as inspect_ai does when it writes the log;
:func:`log_metrics` reads the metrics inspect_ai wrote into the logs' results.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.adapters._inspect_files import read_log_file
from multiverse.adapters._items import item_labels
from multiverse.adapters._label_maps import integer
from multiverse.core import schema as S
from multiverse.core.scales import SCALES, category_codes
from multiverse.core.transcript import Action, Event, Transcript, TranscriptStore
from multiverse.cube.build import new_cube
from multiverse.cube.scales import scale_coords

__all__ = ["PRINCIPLE", "USER_SIM", "REDUCERS", "inspect_log", "log_metrics", "reduce_epochs"]

PRINCIPLE = "score"
USER_SIM = "inspect"
CONDITION = "inspect"
REDUCERS = ("mean", "median", "mode", "max", "pass_at_<k>", "at_least_<k>")
_LETTERS = {"C": "pass", "I": "fail", "N": "fail"}
_LETTER_FLOATS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
PathLike = str | os.PathLike[str]


@dataclass
class _Sample:
    file: str
    system: str
    task: str
    epoch: int
    sample_id: str
    transcript: Transcript
    scores: dict[str, Any]
    failed: bool


def _log_files(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.suffix in (".eval", ".json") and p.is_file())
        if not found:
            raise ValueError(f"{path}: no inspect_ai log (.eval or .json) in this folder")
        return found
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such log file or folder")
    return [path]


def _files(path: PathLike | Sequence[PathLike]) -> tuple[str, list[Path]]:
    """The log files of ``path`` (files, or folders searched for logs) and ``path`` as an error message names it."""
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    return ", ".join(map(str, paths)), [f for p in paths for f in _log_files(Path(p))]


def _text(content: Any) -> str:
    """A message's text as inspect_ai's ``ChatMessage.text`` gives it: the string, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or () if part.get("type") == "text")


def _events(messages: Iterable[Mapping[str, Any]]) -> tuple[Event, ...]:
    """inspect_ai chat messages -> events: roles become actors, tool calls actions, tool results tool events."""
    events = []
    for number, message in enumerate(messages, start=1):
        role = message["role"]
        meta: dict[str, Any] = {}
        actions: tuple[Action, ...] = ()
        if role == "assistant":
            actions = tuple(Action(call["function"], dict(call.get("arguments") or {}))
                            for call in message.get("tool_calls") or ())
            if message.get("model"):
                meta["model"] = message["model"]
        elif role == "tool":
            meta = {"function": message.get("function") or "", "tool_call_id": message.get("tool_call_id") or ""}
            if message.get("error") is not None:
                meta["error"] = message["error"]["message"]
        actor = role if role in S.ACTORS else "system"
        events.append(Event(turn=number, actor=actor, text=_text(message.get("content")), actions=actions, meta=meta))
    return tuple(events)


def _read(files: Sequence[Path], *, tasks: str, warnings: list[str]) -> list[_Sample]:
    samples: list[_Sample] = []
    for file in files:
        log = read_log_file(file)
        if log.header["status"] != "success":
            warnings.append(f"{file.name}: log status {log.header['status']!r}; its samples are read as they are")
        task, model = log.header["eval"]["task"], log.header["eval"]["model"]
        for sample in log.samples:
            sample_id, epoch, target = str(sample["id"]), int(sample["epoch"]), sample.get("target", "")
            failed = sample.get("error") is not None
            transcript = Transcript(
                role=task if tasks == "role" else USER_SIM,
                events=_events(sample.get("messages") or ()),
                scenario={"task": task, "sample_id": sample_id, "epoch": epoch,
                          "target": target if isinstance(target, str) else list(target)},
                ended="failed" if failed else "completed",
            )
            scores = {name: score.get("value") for name, score in (sample.get("scores") or {}).items()}
            samples.append(_Sample(file.name, model, task, epoch, sample_id, transcript, scores, failed))
    return samples


def _to_float(value: Any) -> float:
    """inspect_ai's ``value_to_float`` for the values a scale holds: C 1, P 0.5, I and N 0, else the number."""
    return _LETTER_FLOATS[value] if isinstance(value, str) else float(value)


def _where(sample: _Sample) -> str:
    return f"{sample.file}: sample {sample.sample_id} epoch {sample.epoch}"


def _flatten(samples: list[_Sample], chosen: Sequence[str] | None) -> list[str]:
    """Dict-valued scores become one judge per key (``scorer/key``); returns the judges in order."""
    judges: dict[str, None] = {}
    for sample in samples:
        flat: dict[str, Any] = {}
        for name, value in sample.scores.items():
            if chosen is not None and name not in chosen:
                continue
            if isinstance(value, Mapping):
                for key, item in value.items():
                    flat[f"{name}/{key}"] = item
            elif isinstance(value, (list, tuple)):
                raise ValueError(f"{_where(sample)}: scorer {name!r} gives a list; no label scale holds it "
                                 "(leave the scorer out with scorers=)")
            else:
                flat[name] = value
        sample.scores = flat
        judges.update(dict.fromkeys(flat))
    if chosen is not None:
        absent = [c for c in chosen if not any(j == c or j.startswith(f"{c}/") for j in judges)]
        if absent:
            raise ValueError(f"inspect_log: scorers {absent} give no score in these logs")
    return list(judges)


def _scale_of(judge: str, found: list[tuple[Any, str]], declared: str | None) -> tuple[str, dict[str, int]]:
    """The judge's scale and categories, detected from its values or checked against the declared scale.

    ``found`` pairs every value with where it was read (log, sample, epoch), for the one-line refusal.
    """
    values = [v for v, _ in found]

    def refuse(test: Any, why: str) -> ValueError:
        value, where = next((v, w) for v, w in found if test(v))
        return ValueError(f"{where}: scorer {judge!r} gives {value!r}; {why} (leave the scorer out with scorers=)")

    letters = {v for v in values if isinstance(v, str)}
    if letters:
        if not all(isinstance(v, str) and v in _LETTER_FLOATS for v in values):
            raise refuse(lambda v: not (isinstance(v, str) and v in _LETTER_FLOATS),
                         "no label scale holds it beside C / I / P / N letters")
        detected = "severity" if "P" in letters else "binary"
    elif all(isinstance(v, bool) for v in values):
        detected = "binary"
    else:
        if any(integer(v) is None and not isinstance(v, bool) for v in values):
            raise refuse(lambda v: integer(v) is None and not isinstance(v, bool),
                         "no label scale holds it (not an integer, a letter or a boolean)")
        detected = "binary" if {int(v) for v in values} <= {0, 1} else "likert"
    scale = declared or detected
    if scale not in SCALES or scale == "pairwise":
        raise ValueError(f"inspect_log: scales={{{judge!r}: {scale!r}}}: a scorer's scale is binary, severity or likert")
    if scale == "likert":
        if letters:
            raise refuse(lambda v: isinstance(v, str), "declared likert, but a letter is no rating")
        numbers = [int(v) for v in values]
        low, high = min(numbers), max(numbers)
        return scale, category_codes("likert", low=low, high=max(high, low + 1))
    if detected == "likert" or (scale == "binary" and detected == "severity"):
        raise ValueError(f"inspect_log: scorer {judge!r} declared {scale} but its values need the {detected} scale")
    return scale, category_codes(scale)


def _code(value: Any, scale: str) -> int:
    """The severity code of one score value on a binary or severity scale."""
    if isinstance(value, str):
        name = "partial_deviation" if value == "P" else _LETTERS[value]
    else:
        name = "pass" if bool(value) else "fail"
    if scale == "severity":
        name = {"pass": "full_adherence", "fail": "clear_breach"}.get(name, name)
    return category_codes(scale)[name]


def inspect_log(
    path: PathLike | Sequence[PathLike],
    *,
    scorers: Sequence[str] | None = None,
    scales: Mapping[str, str] | None = None,
    tasks: str = "role",
    store: TranscriptStore | PathLike | None = None,
) -> xr.Dataset:
    """inspect_ai logs (files, or folders searched for ``.eval`` / ``.json`` logs) -> a cube.

    Parameters
    ----------
    path
        A log file, a folder of logs, or several of either.
    scorers
        The scorers to read (default: all); a dict-valued scorer's keys come along.
    scales
        ``{judge: scale}`` for judges whose scale should not be read off their
        values (``binary``, ``severity`` or ``likert``).
    tasks
        ``"role"``: each task is a role; ``"condition"``: each task is a
        condition of one role, ``inspect``.
    store
        A :class:`~multiverse.core.transcript.TranscriptStore` or the path of
        its SQLite file; the transcripts go there, keyed by ``transcript_id``
        (a run folder's ``transcripts.sqlite`` beside ``cube.nc`` is what
        ``multiverse show``, ``view`` and ``export`` read).

    Returns
    -------
    xarray.Dataset
        The cube described in the module docstring; ``value`` (float, over
        the conversation dims and ``judge``) holds inspect_ai's float reading
        of every score; attrs ``source``, ``logs`` and ``warnings`` (a list).

    Raises
    ------
    ValueError
        One line naming the log, sample and scorer of a value no scale holds,
        a duplicated (model, task, epoch, sample), or a log this reader cannot
        read (its file and what was expected).
    """
    if tasks not in ("role", "condition"):
        raise ValueError(f"inspect_log: tasks={tasks!r}, expected 'role' or 'condition'")
    where, files = _files(path)
    warnings: list[str] = []
    samples = _read(files, tasks=tasks, warnings=warnings)
    if not samples:
        raise ValueError(f"{where}: the logs hold no samples")
    judges = _flatten(samples, scorers)
    if not judges:
        raise ValueError(f"{where}: no sample carries a score")
    seen: set[tuple[str, str, int, str]] = set()
    for s in samples:
        key = (s.system, s.task, s.epoch, s.sample_id)
        if key in seen:
            raise ValueError(f"{_where(s)}: model {s.system} task {s.task}: this sample and epoch appear in two logs")
        seen.add(key)
    unknown = sorted(set(scales or {}) - set(judges))
    if unknown:
        raise ValueError(f"inspect_log: scales= names {unknown}, not scorers of these logs ({', '.join(judges)})")
    scale_of = {j: _scale_of(j, [(s.scores[j], _where(s)) for s in samples if s.scores.get(j) is not None],
                             (scales or {}).get(j)) for j in judges}
    return _build(samples, judges, scale_of, tasks=tasks, files=files, warnings=warnings, store=store)


def log_metrics(path: PathLike | Sequence[PathLike]) -> pd.DataFrame:
    """The metrics inspect_ai wrote into the logs' results, one row per (log, score, metric).

    Parameters
    ----------
    path
        A log file, a folder of logs, or several of either (as :func:`inspect_log`).

    Returns
    -------
    pandas.DataFrame
        Columns ``log`` (file name), ``system`` (the model), ``task``,
        ``judge`` (the cube's name for the score: the scorer, or
        ``scorer/key`` for a key of a dict-valued scorer), ``reducer`` (the
        epoch reducer, None for inspect_ai's default), ``metric`` and
        ``value``; no rows for a log without results (a run that did not finish).
    """
    rows = []
    for file in _files(path)[1]:
        header = read_log_file(file, header_only=True).header
        for i, score in enumerate((header.get("results") or {}).get("scores") or ()):
            if not isinstance(score, dict) or not all(isinstance(score.get(k), str) for k in ("name", "scorer")):
                raise ValueError(f"{file}: results.scores[{i}] has no 'name' and 'scorer'; expected an inspect_ai log")
            judge = score["name"] if score["name"] == score["scorer"] else f"{score['scorer']}/{score['name']}"
            rows += [{"log": file.name, "system": header["eval"]["model"], "task": header["eval"]["task"],
                      "judge": judge, "reducer": score.get("reducer"), "metric": metric["name"],
                      "value": metric["value"]} for metric in (score.get("metrics") or {}).values()]
    return pd.DataFrame(rows, columns=["log", "system", "task", "judge", "reducer", "metric", "value"])


def _build(samples: list[_Sample], judges: list[str], scale_of: dict[str, tuple[str, dict[str, int]]], *, tasks: str,
           files: list[Path], warnings: list[str], store: Any) -> xr.Dataset:
    ids, items = item_labels(s.sample_id for s in samples)
    item_of = dict(zip(ids, items, strict=True))
    systems = sorted({s.system for s in samples})
    task_names = sorted({s.task for s in samples})
    roles, conditions = (task_names, [CONDITION]) if tasks == "role" else ([USER_SIM], task_names)
    horizon = max([s.transcript.n_turns for s in samples] + [1])
    coords: dict[str, tuple[str, list[Any]]] = {"sample_id": ("item", ids), "system_model": ("system", systems)}
    coords.update(scale_coords([scale_of[j][0] for j in judges], [scale_of[j][1] for j in judges]))
    cube = new_cube(
        system=systems, role=roles, user_sim=[USER_SIM], condition=conditions,
        replicate=sorted({s.epoch - 1 for s in samples}), item=items, turn=horizon, principle=[PRINCIPLE],
        judge=judges, role_principles={r: (PRINCIPLE,) for r in roles}, coords=coords,
        attrs={"source": "inspect_ai logs", "logs": [f.name for f in files], "warnings": warnings},
    )
    conv_dims = list(S.CONVERSATION_DIMS)
    value = np.full(tuple(cube.sizes[d] for d in conv_dims) + (len(judges),), np.nan)
    likert = any(scale_of[j][0] == "likert" for j in judges)
    rating = np.full(cube["severity"].shape, np.nan, dtype=np.float32) if likert else None
    label = {dim: {v: i for i, v in enumerate(cube[dim].values.tolist())} for dim in conv_dims}
    severity, missing = cube["severity"].values, Counter()
    for s in samples:
        role, condition = (s.task, CONDITION) if tasks == "role" else (USER_SIM, s.task)
        pos = (label["system"][s.system], label["role"][role], 0, label["condition"][condition],
               label["replicate"][s.epoch - 1], label["item"][item_of[s.sample_id]])
        cube["transcript_id"].values[pos] = s.transcript.id
        cube["ended"].values[pos] = "failed" if s.failed else "completed"
        final = max(s.transcript.n_turns, 1) - 1
        for j, judge in enumerate(judges):
            cell = pos + (final, 0, j)
            if s.failed or judge not in s.scores or s.scores[judge] is None:
                severity[cell] = S.MISSING
                missing[judge] += 1
                continue
            raw = s.scores[judge]
            value[pos + (j,)] = _to_float(raw)
            if scale_of[judge][0] == "likert":
                rating[cell] = float(raw)  # type: ignore[index]
            else:
                severity[cell] = _code(raw, scale_of[judge][0])
    not_recorded = S.MISSING_REASONS.index("not_recorded")
    for j, judge in enumerate(judges):
        cube["missing_count"].values[j, not_recorded] = missing[judge]
    cube["value"] = (conv_dims + ["judge"], value)
    if rating is not None:
        cube["rating"] = (S.SEVERITY_DIMS, rating)
    if store is not None:
        target = store if isinstance(store, TranscriptStore) else TranscriptStore(store)
        target.put(s.transcript for s in samples)
        if target is not store:
            target.close()
    return cube


def reduce_epochs(cube: xr.Dataset, reducer: str = "mean") -> xr.DataArray:
    """One value per sample: inspect_ai's epoch reducer over the replicates of ``value``.

    The reducers are inspect_ai's, computed the way inspect_ai computes them
    (``statistics.mean`` / ``median`` on the float values, the most common
    value for ``mode``, ``pass_at_<k>`` its unbiased estimator, ``at_least_<k>``
    1 when at least k epochs score 1), so the result equals the log's own
    ``reductions``.  NaN where no epoch has a value.
    """
    if "value" not in cube:
        raise ValueError("reduce_epochs: the cube has no 'value' variable (read it with adapters.inspect_log)")
    kernel = _reducer(reducer)
    values = cube["value"]
    return xr.apply_ufunc(
        lambda block: np.apply_along_axis(kernel, -1, block), values, input_core_dims=[["replicate"]],
        vectorize=False,
    ).rename(f"value_{reducer}")


def _reducer(name: str) -> Any:
    def scored(row: np.ndarray) -> list[float]:
        return [float(v) for v in row if not np.isnan(v)]

    def wrap(fn: Any) -> Any:
        return lambda row: fn(scored(row)) if scored(row) else np.nan

    if name == "mean":
        return wrap(statistics.mean)
    if name == "median":
        return wrap(statistics.median)
    if name == "max":
        return wrap(max)
    if name == "mode":
        return wrap(lambda v: Counter(v).most_common(1)[0][0])
    kind, _, k_text = name.rpartition("_")
    k = integer(k_text)
    if kind == "pass_at" and k is not None and k > 0:
        return wrap(lambda v: _pass_at(v, k))
    if kind == "at_least" and k is not None and k > 0:
        return wrap(lambda v: 1.0 if sum(1 for x in v if x >= 1.0) >= k else 0.0)
    raise ValueError(f"reduce_epochs: reducer {name!r}, expected one of {', '.join(REDUCERS)}")


def _pass_at(values: list[float], k: int) -> float:
    total, correct = len(values), sum(1 for v in values if v >= 1.0)
    if total < k:
        return float("nan")
    if total - correct < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(total - correct + 1, total + 1)))
