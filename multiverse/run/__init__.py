"""Running experiments: plan -> rollouts -> judgments -> the judgment cube.

:func:`run` is the entry point; :func:`validate_experiment` checks a file with
every layer's checks; :func:`plan_report` says what a run would cost, calling
nothing.

Importing this package binds the name ``run`` on :mod:`multiverse` to the
package itself, which would hide the function ``multiverse.run``; the package
is therefore callable and forwards to :func:`run`, so ``multiverse.run(...)``
works whatever was imported first.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from multiverse.run.checks import validate_experiment
from multiverse.run.plan_report import plan_report
from multiverse.run.runner import run

__all__ = ["plan_report", "run", "validate_experiment"]


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return run(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
