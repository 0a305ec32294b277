"""Tiny offline experiments and an in-process ``multiverse`` command, for the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from multiverse.cli import main

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


@pytest.fixture
def experiment_file(tmp_path):
    """Write an experiment (mapping or YAML text) into ``tmp_path/exp``; return its path."""

    def write(data=None, name: str = "experiment.yaml") -> Path:
        folder = tmp_path / "exp"
        folder.mkdir(exist_ok=True)
        path = folder / name
        text = data if isinstance(data, str) else yaml.safe_dump(tiny() if data is None else data, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def cli(capsys):
    """Run ``multiverse ARGS`` in-process; return (exit code, stdout, stderr)."""

    def call(*args: str) -> tuple[int, str, str]:
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
        out, err = capsys.readouterr()
        return code, out, err

    return call


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` with its bytes (to check that nothing changed)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
