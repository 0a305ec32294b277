"""Tiny offline experiments and an in-process ``multiverse`` command, for the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_helpers import tiny

from multiverse.cli import main


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
