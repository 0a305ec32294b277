"""The small offline experiment the tests start from, as a mapping (one definition for every test folder)."""

from __future__ import annotations

from pathlib import Path

SPECS = Path(__file__).resolve().parents[1] / "specs"


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
