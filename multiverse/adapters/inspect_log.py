"""inspect_ai evaluation logs -> a judgment cube and its transcripts.

Logs are read through inspect_ai's own reader (``inspect_ai.log.read_eval_log``),
so every log format it writes (``.eval``, ``.json``) and every version it can
read are read the same way; inspect_ai is an optional dependency (``make
inspect`` installs it from ``requirements-inspect.lock``).

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
                       own float reading of every value (``value_to_float``)
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
reducers to ``value``, as inspect_ai does when it writes the log.
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
import xarray as xr

from multiverse.adapters._items import item_labels
from multiverse.adapters._label_maps import integer
from multiverse.core import schema as S
from multiverse.core.scales import SCALES, category_codes
from multiverse.core.transcript import Action, Event, Transcript, TranscriptStore
from multiverse.cube.build import new_cube
from multiverse.cube.scales import scale_coords

__all__ = ["PRINCIPLE", "USER_SIM", "REDUCERS", "InspectUnavailable", "inspect_log", "reduce_epochs"]

PRINCIPLE = "score"
USER_SIM = "inspect"
CONDITION = "inspect"
REDUCERS = ("mean", "median", "mode", "max", "pass_at_<k>", "at_least_<k>")
_LETTERS = {"C": "pass", "I": "fail", "N": "fail"}
PathLike = str | os.PathLike[str]


class InspectUnavailable(ImportError):
    """inspect_ai is not installed (it is an optional dependency: ``make inspect``)."""


def _inspect_log_api() -> Any:
    try:
        from inspect_ai import log as inspect_log_module
        from inspect_ai.scorer import value_to_float
    except ImportError as exc:
        raise InspectUnavailable(
            f"adapters.inspect_log needs inspect_ai ({exc}); install it with 'make inspect' "
            "(requirements-inspect.lock)") from None
    return inspect_log_module, value_to_float()


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


def _events(messages: Iterable[Any]) -> tuple[Event, ...]:
    """inspect_ai chat messages -> events: roles become actors, tool calls actions, tool results tool events."""
    events = []
    for number, message in enumerate(messages, start=1):
        role = message.role
        meta: dict[str, Any] = {}
        actions: tuple[Action, ...] = ()
        if role == "assistant":
            actions = tuple(Action(call.function, dict(call.arguments or {})) for call in (message.tool_calls or ()))
            if getattr(message, "model", None):
                meta["model"] = message.model
        elif role == "tool":
            meta = {"function": message.function or "", "tool_call_id": message.tool_call_id or ""}
            if message.error is not None:
                meta["error"] = message.error.message
        actor = role if role in S.ACTORS else "system"
        events.append(Event(turn=number, actor=actor, text=message.text or "", actions=actions, meta=meta))
    return tuple(events)


def _read(files: Sequence[Path], *, tasks: str, warnings: list[str]) -> list[_Sample]:
    api, _ = _inspect_log_api()
    samples: list[_Sample] = []
    for file in files:
        try:
            log = api.read_eval_log(str(file))
        except Exception as exc:  # inspect_ai raises many kinds; the file is what the user must hear about
            raise ValueError(f"{file}: inspect_ai cannot read this log ({type(exc).__name__}: {exc})") from None
        if log.status != "success":
            warnings.append(f"{file.name}: log status {log.status!r}; its samples are read as they are")
        task, model = log.eval.task, log.eval.model
        for sample in log.samples or ():
            sample_id = str(sample.id)
            role = task if tasks == "role" else USER_SIM
            transcript = Transcript(
                role=role,
                events=_events(sample.messages),
                scenario={"task": task, "sample_id": sample_id, "epoch": int(sample.epoch),
                          "target": sample.target if isinstance(sample.target, str) else list(sample.target)},
                ended="failed" if sample.error is not None else "completed",
            )
            scores = {name: score.value for name, score in (sample.scores or {}).items()}
            samples.append(_Sample(file.name, model, task, int(sample.epoch), sample_id, transcript, scores,
                                   sample.error is not None))
    return samples


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
        if not all(isinstance(v, str) and v in ("C", "I", "N", "P") for v in values):
            raise refuse(lambda v: not (isinstance(v, str) and v in ("C", "I", "N", "P")),
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
    InspectUnavailable
        If inspect_ai is not installed.
    ValueError
        One line naming the log, sample and scorer of a value no scale holds,
        a duplicated (model, task, epoch, sample), or an unreadable log.
    """
    if tasks not in ("role", "condition"):
        raise ValueError(f"inspect_log: tasks={tasks!r}, expected 'role' or 'condition'")
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    files = [f for p in paths for f in _log_files(Path(p))]
    warnings: list[str] = []
    samples = _read(files, tasks=tasks, warnings=warnings)
    if not samples:
        raise ValueError(f"{', '.join(map(str, paths))}: the logs hold no samples")
    _, to_float = _inspect_log_api()
    judges = _flatten(samples, scorers)
    if not judges:
        raise ValueError(f"{', '.join(map(str, paths))}: no sample carries a score")
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
    return _build(samples, judges, scale_of, tasks=tasks, to_float=to_float, files=files, warnings=warnings, store=store)


def _build(samples: list[_Sample], judges: list[str], scale_of: dict[str, tuple[str, dict[str, int]]], *, tasks: str,
           to_float: Any, files: list[Path], warnings: list[str], store: Any) -> xr.Dataset:
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
            value[pos + (j,)] = to_float(raw)
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
