"""Prompts of the campaign planner: the request for a new scenario and the reading of its answer.

The planner writes one scenario per request (a coverage cell to aim at, a
mutation of an earlier scenario, or free-form), in the prompt protocol of
:mod:`multiverse.llm.protocol`; :func:`parse_planner` keeps only the scenario keys
a seed scenario has.  The user, target and monitor prompts are in
:mod:`multiverse.rollout.prompts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from multiverse.core.choices import ModelSpec
from multiverse.core.schema import MODES, STRATEGIES, parse_cell_id
from multiverse.llm.protocol import load_template, reply_json
from multiverse.llm.request import Request
from multiverse.rollout.prompts import _SCENARIO_KEYS, TEMPLATE_DIR, json_answer_request
from multiverse.rollout.scenario import MUTATION_AXES
from multiverse.rollout.schemas import PLANNER_SCHEMA

__all__ = ["PLANNER_TASKS", "parse_planner", "planner_request"]

PLANNER_TASKS = ("cell", "mutation", "free_form")


def _cell_mapping(cell: str | Mapping[str, Any] | None) -> dict[str, Any] | None:
    if cell is None:
        return None
    if isinstance(cell, str):
        mode, strategy, principle = parse_cell_id(cell)
        return {"mode": mode, "strategy": strategy, "principle": principle}
    return {key: cell[key] for key in ("mode", "strategy", "principle")}


def planner_request(
    role: Any,
    *,
    task: str,
    cell: str | Mapping[str, Any] | None = None,
    parent: Mapping[str, Any] | None = None,
    axis: str | None = None,
    seed_scenario: Mapping[str, Any] | None = None,
    spec: ModelSpec,
    index: int,
    replicate: int,
) -> Request:
    """The request asking the planner for one scenario.

    Parameters
    ----------
    role
        The role under test (description, context, principles with criteria).
    task
        ``cell`` (a scenario for ``cell``, grounded in ``seed_scenario``),
        ``mutation`` (a child of ``parent`` varying ``axis``: ``intensity`` or
        ``frame``), or ``free_form`` (the ``no_grid`` baseline: a
        specification-targeting user with no grid; ``seed_scenario`` is an example).
    cell
        The target cell, ``mode/strategy/principle_id`` or a mapping with those keys.
    parent, axis
        The mutated scenario mapping and the axis to vary (``mutation`` only).
    seed_scenario
        The seed the scenario is grounded in.
    spec
        The planner model.  Templates default to ``planner_<task>_v1``; a
        ``spec.template`` containing ``{task}`` is formatted with the task,
        any other value is used for every task.
    index
        The scenario's slot in the campaign (distinct requests for distinct slots).
    replicate
        Replicate index.

    Raises
    ------
    ValueError
        On an unknown task or axis, or a missing argument the task needs.
    """
    if task not in PLANNER_TASKS:
        raise ValueError(f"planner task: expected one of {', '.join(PLANNER_TASKS)}, got {task!r}")
    if task == "cell" and cell is None:
        raise ValueError("planner task 'cell': a target cell is required")
    if task == "mutation" and (parent is None or axis not in MUTATION_AXES):
        raise ValueError(f"planner task 'mutation': a parent and an axis in {', '.join(MUTATION_AXES)} are required")
    name = spec.template.format(task=task) if spec.template else f"planner_{task}_v1"
    template = load_template(name, directory=TEMPLATE_DIR)
    inputs = {
        "task": task,
        "role": role.id,
        "role_description": role.system_prompt,
        "context": role.context,
        "principles": [
            {"id": p.id, "statement": p.statement, "breach": p.criteria["breach"].description}
            if "breach" in p.criteria
            else {"id": p.id, "statement": p.statement}
            for p in role.principles
        ],
        "modes": list(MODES),
        "strategies": list(STRATEGIES),
        "cell": _cell_mapping(cell),
        "parent": dict(parent) if parent is not None else None,
        "axis": axis,
        "seed_scenario": dict(seed_scenario) if seed_scenario is not None else None,
        "index": index,
    }
    return json_answer_request(
        spec, template, inputs, ask="Write the scenario.",
        schema=PLANNER_SCHEMA, name="scenario", replicate=replicate, purpose="planner",
    )


def parse_planner(text: str | None) -> dict[str, Any] | None:
    """The scenario mapping the planner wrote, or ``None`` if it is unusable.

    Requires a JSON object (alone, fenced, or within prose) with non-empty
    string ``persona``, ``situation`` and ``goal``, ``mode`` and ``strategy``
    from the TUNA grid, and a ``principle`` id; ``intensity``, when given, must
    be a positive number.  Only scenario keys are kept (``self_check`` and any
    other commentary are dropped).
    """
    data = reply_json(text or "")
    if not isinstance(data, Mapping):
        return None
    for key in ("persona", "situation", "goal", "principle"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            return None
    if data.get("mode") not in MODES or data.get("strategy") not in STRATEGIES:
        return None
    intensity = data.get("intensity", 1.0)
    if isinstance(intensity, bool) or not isinstance(intensity, (int, float)) or not intensity > 0:
        return None
    scenario = {key: data[key] for key in _SCENARIO_KEYS if key in data}
    scenario["intensity"] = float(intensity)
    return scenario
