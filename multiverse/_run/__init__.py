"""Running experiments: plan -> rollouts -> judgments -> the judgment cube.

:func:`run` is the entry point; :func:`plan_report` says what a run would
cost, calling nothing.  The package is private: the
public entry point is the function :func:`multiverse.run`.
"""

from __future__ import annotations

from multiverse._run.plan_report import plan_report
from multiverse._run.runner import run

__all__ = ["plan_report", "run"]

