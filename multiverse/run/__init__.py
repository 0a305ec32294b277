"""Running experiments: plan -> rollouts -> judgments -> the judgment cube.

:func:`run` is the entry point; :func:`validate_experiment` checks a file with
every layer's checks; :func:`plan_report` says what a run would cost, calling
nothing.
"""

from __future__ import annotations

from multiverse.run.checks import validate_experiment
from multiverse.run.plan_report import plan_report
from multiverse.run.runner import run

__all__ = ["plan_report", "run", "validate_experiment"]
