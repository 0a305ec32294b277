"""Tiny offline experiments and file snapshots shared by the CLI tests."""

from __future__ import annotations

from pathlib import Path

SPECS = Path(__file__).resolve().parents[2] / "specs"
DOCUMENTED_EXIT_CODES = (0, 1, 2, 3, 130)


def tiny(**overrides):
    """A small offline experiment mapping; keyword arguments replace top-level keys."""
    data = {
        "name": "tiny",
        "roles": ["tutor"],
        "systems": {"a": "sim/target-a"},
        "dims": {
            "user_sim": {"plain": "sim/user-plain"},
            "judge": {"strict": "sim/judge-strict"},
            "condition": {"short": {"horizon": 2, "search": "seed_only"}},
        },
        "replicates": 1,
        "items": 2,
        "specs": str(SPECS),
        "sim": {"targets": {"a": {}}, "judges": {"strict": {}}, "users": {"plain": {}}},
    }
    data.update(overrides)
    return data


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` with its bytes (to check that nothing changed)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
