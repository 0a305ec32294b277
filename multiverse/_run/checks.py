"""Experiment checks that need the layers above :mod:`multiverse.config.experiment`.

The ``sim:`` block belongs to the offline world and deterministic judge names to
the judge registry; :func:`validate_experiment` and :func:`load_experiment` add
both to the file checks, so a file loads exactly when it validates.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from multiverse.config import experiment as _experiment
from multiverse.config.experiment import Experiment, ExperimentCheck, validate_file
from multiverse.config.located import Located, Problem
from multiverse.core.choices import ModelSpec

__all__ = [
    "EXPERIMENT_CHECKS",
    "check_judge_names",
    "check_scoring_names",
    "check_sim",
    "check_sim_on_real",
    "load_experiment",
    "named_models",
    "validate_experiment",
]


def named_models(experiment: Experiment) -> Iterator[tuple[str, ModelSpec]]:
    """Every model the experiment names, with the field that names it."""
    for label, spec in experiment.systems.items():
        yield f"systems.{label}", spec
    for label, spec in experiment.user_sims.items():
        yield f"dims.user_sim.{label}", spec
    for label, judge in experiment.judges.items():
        if judge.model is not None:
            yield f"dims.judge.{label}", judge.model
    yield "campaign.planner", experiment.campaign.planner
    if experiment.campaign.monitor is not None:
        yield "campaign.monitor", experiment.campaign.monitor


def check_sim(experiment: Experiment, located: Located) -> list[Problem]:
    """The ``sim:`` block parses, and the world serves every ``sim/`` model the file names."""
    from multiverse.sim import SimConfigError, SimWorld

    try:
        world = SimWorld.from_config(dict(experiment.sim) if experiment.sim is not None else None)
    except SimConfigError as exc:
        return [located.problem(exc.field, exc.message)]
    problems = []
    for field, spec in named_models(experiment):
        if spec.is_sim:
            try:
                world.check_model(spec.model)
            except SimConfigError as exc:
                problems.append(located.problem(field, f"{exc.field}: {exc.message}"))
    return problems


def check_judge_names(experiment: Experiment, located: Located) -> list[Problem]:
    """Every deterministic judge is registered."""
    from multiverse.judge.registry import list_judges

    known = list_judges()
    return [
        located.problem(f"dims.judge.{label}.deterministic", f"no registered judge {spec.name!r} (registered: {', '.join(known)})")
        for label, spec in experiment.judges.items()
        if spec.kind == "deterministic" and spec.name not in known
    ]


def check_sim_on_real(experiment: Experiment, located: Located) -> list[Problem]:
    """No ``sim/`` player reads text a real model wrote, unless ``allow_sim_on_real: true``.

    Sim judges and the sim monitor read the offline world's planted phrases, so
    on a real model's text they would report adherence that nobody measured.
    Refused: a sim model judge beside a real system (it would judge the real
    replies) and a sim monitor beside a real user simulator (it would validate
    real user turns).  A sim user simulator, monitor or planner beside a real
    target is allowed: what they read is the offline world's own.
    """
    if experiment.allow_sim_on_real:
        return []
    problems = []
    real_systems = [label for label, spec in experiment.systems.items() if not spec.is_sim]
    if real_systems:
        for label, judge in experiment.judges.items():
            if judge.model is not None and judge.model.is_sim:
                problems.append(
                    located.problem(
                        f"dims.judge.{label}",
                        f"sim judge {judge.model.model!r} would judge the replies of real system "
                        f"{real_systems[0]!r} (it reads only the offline world's text); use a real judge, "
                        "or set allow_sim_on_real: true",
                    )
                )
    real_users = [label for label, spec in experiment.user_sims.items() if not spec.is_sim]
    monitor = experiment.campaign.monitor
    if real_users and monitor is not None and monitor.is_sim and experiment.rollouts is None:  # recorded: no monitor runs
        problems.append(
            located.problem(
                "campaign.monitor",
                f"sim monitor {experiment.campaign.monitor.model!r} would validate the turns of real user simulator "
                f"{real_users[0]!r} (it reads only the offline world's text); use a real monitor, "
                "or set allow_sim_on_real: true",
            )
        )
    return problems


def check_scoring_names(experiment: Experiment, located: Located) -> list[Problem]:
    """Every standard and rule under ``dims`` is registered (scoring comes after this layer's input)."""
    from multiverse.scoring import list_rules, list_standards

    problems = []
    for kind, chosen, known in (
        ("standard", experiment.standards, list_standards()),
        ("rule", experiment.rules, list_rules()),
    ):
        for i, value in enumerate(chosen or ()):
            if value not in known:
                problems.append(located.problem(f"dims.{kind}.{i}", f"unknown {kind} {value!r} (registered: {', '.join(known)})"))
    return problems


EXPERIMENT_CHECKS: tuple[ExperimentCheck, ...] = (check_sim, check_judge_names, check_sim_on_real, check_scoring_names)


def validate_experiment(path: str | Path) -> list[Problem]:
    """Every problem in an experiment file, the ``sim:`` block and judge names included."""
    return validate_file(path, checks=EXPERIMENT_CHECKS)


def load_experiment(path: str | Path) -> Experiment:
    """Read an experiment file, running every check ``multiverse validate`` runs.

    Parameters
    ----------
    path
        An experiment YAML file.

    Returns
    -------
    Experiment

    Raises
    ------
    SpecError
        Carrying every problem :func:`validate_experiment` reports, when there is one.

    See Also
    --------
    validate_experiment : the same checks, returning the problems instead.
    """
    return _experiment.load_experiment(path, checks=EXPERIMENT_CHECKS)
