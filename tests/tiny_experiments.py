"""What tests of several folders start from: the small offline experiment, and the studies of ``experiments/``."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parents[1]
SPECS = REPO_ROOT / "specs"


def tiny_experiment(*, horizon: int = 3, breach: float | None = 0.1, **overrides):
    """Tutor, one sim target, one user, one strict judge, 2 items; keyword arguments replace top-level keys.

    ``horizon`` is the one condition's, ``breach`` the target's planted rate on
    every principle (``None``: the offline world's default).
    """
    data = {
        "name": "tiny",
        "roles": ["tutor"],
        "systems": {"a": "sim/target-a"},
        "dims": {
            "user_sim": {"plain": "sim/user-plain"},
            "judge": {"strict": "sim/judge-strict"},
            "condition": {"short": {"horizon": horizon, "search": "seed_only"}},
        },
        "replicates": 1,
        "items": 2,
        "specs": str(SPECS),
        "sim": {
            "targets": {"a": {} if breach is None else {"breach": {"*": breach}}},
            "judges": {"strict": {}},
            "users": {"plain": {}},
        },
    }
    data.update(overrides)
    return data


def load_study(name: str) -> ModuleType:
    """The study module ``experiments/<name>.py``, loaded as ``make run`` loads it (``_common.load_study``)."""
    experiments = str(REPO_ROOT / "experiments")
    if experiments not in sys.path:
        sys.path.insert(0, experiments)
    from _common import load_study as load

    return load(name)
