"""The annotation form: a static page on which people label conversations, blinded to the judges.

:func:`write_annotation_site` takes annotation tasks (one per conversation, the
format ``multiverse annotate export`` writes, see :data:`TASK_KEYS`) and writes a
self-contained site: for each task the conversation, the role's principles with
their criteria, a three-level severity sheet per assistant turn x principle and
a 1-5 rating per user turn x axis.  Labels stay in the browser's local storage
(keyed by the task set's digest, so two exports never mix) and are downloaded
as JSONL, one object per label::

    {"task": ..., "annotator": ..., "turn": ..., "principle": ..., "severity": 0|1|2}
    {"task": ..., "annotator": ..., "turn": ..., "axis": ..., "rating": 1..5}

``turn`` is the 1-based assistant turn for severities and the 1-based user turn
for ratings.  The page sends nothing anywhere (its content security policy
forbids any connection).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from multiverse.core.outputs import replace_dir
from multiverse.view._jsdata import write_data
from multiverse.view.site import copy_assets, template

__all__ = ["TASK_KEYS", "TaskError", "write_annotation_site"]

TASK_KEYS = {
    "task": (str, int),
    "role": (str,),
    "principles": (list,),
    "events": (list,),
    "assistant_turns": (list,),
    "user_turns": (list,),
    "axes": (list,),
    "severity_levels": (dict,),
}
"""Required keys of a task and their JSON types.  Other keys (``strata``, which may
name the judges' verdicts) are left out of the site, so annotators stay blind."""

ASSETS = ("viewer.css", "common.js", "annotate.js")


class TaskError(ValueError):
    """An annotation task that does not have the documented form."""


def _check_task(position: int, task: Any) -> dict[str, Any]:
    where = f"task {position + 1}"
    if not isinstance(task, Mapping):
        raise TaskError(f"{where}: expected an object, got {type(task).__name__}")
    for key, types in TASK_KEYS.items():
        if key not in task:
            raise TaskError(f"{where}: missing field {key!r}")
        if not isinstance(task[key], types) or isinstance(task[key], bool):
            raise TaskError(f"{where}: field {key!r}: expected {' or '.join(t.__name__ for t in types)}")
    where = f"task {task['task']!r}"
    for i, principle in enumerate(task["principles"]):
        if not isinstance(principle, Mapping) or not isinstance(principle.get("id"), str):
            raise TaskError(f"{where}: principles[{i}]: expected an object with a text 'id'")
    for i, event in enumerate(task["events"]):
        if not isinstance(event, Mapping) or not isinstance(event.get("actor"), str):
            raise TaskError(f"{where}: events[{i}]: expected an object with a text 'actor'")
    counts = {"assistant_turns": sum(e["actor"] == "assistant" for e in task["events"]),
              "user_turns": sum(e["actor"] == "user" for e in task["events"])}
    for key, count in counts.items():
        for turn in task[key]:
            if not isinstance(turn, int) or isinstance(turn, bool) or not 1 <= turn <= count:
                raise TaskError(f"{where}: {key}: {turn!r} is not a 1-based index of one of its {count} "
                                f"{key.split('_')[0]} events")
    return {key: task[key] for key in TASK_KEYS}


def write_annotation_site(tasks: Iterable[Mapping[str, Any]], out_dir: str | Path, *, title: str = "annotation") -> Path:
    """Write the annotation form for ``tasks`` into ``out_dir`` and return the path of its ``index.html``.

    Parameters
    ----------
    tasks
        Annotation tasks, one per conversation, with the keys of
        :data:`TASK_KEYS` (as ``multiverse annotate export`` writes them).
    out_dir
        Output folder; replaced as a whole when the viewer wrote it before (or
        it is empty), refused otherwise.
    title
        Shown at the top of the page.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    TaskError
        If a task lacks a field or has one of the wrong type, naming the task and field.
    multiverse.core.outputs.OutputDirError
        If ``out_dir`` must not be replaced (:mod:`multiverse.core.outputs`).

    See Also
    --------
    write_site : the viewer of a run, with the judges shown.
    """
    checked = [_check_task(i, task) for i, task in enumerate(tasks)]
    if not checked:
        raise TaskError("no annotation tasks given")
    ids = [str(t["task"]) for t in checked]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise TaskError(f"task {repeated[0]!r}: appears more than once")
    body = json.dumps(checked, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
    out = Path(out_dir)
    with replace_dir(out, kind="annotation form") as staging:
        write_data(staging / "data", "tasks", {"digest": digest, "title": title, "tasks": checked})
        (staging / "index.html").write_text(template("annotate.html"), encoding="utf-8")
        copy_assets(staging, ASSETS)
    return out / "index.html"
