"""A wheel built from the checkout and installed elsewhere finds every shipped role and contract."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("multiverse", "specs", "pyproject.toml", "setup.py", "README.md", "LICENSE")


@pytest.mark.slow
def test_installed_wheel_loads_every_shipped_role_and_contract(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if copy is shutil.copytree else {}))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", str(source), "-w", str(tmp_path / "wheel")], check=True)
    (wheel,) = (tmp_path / "wheel").glob("multiverse-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(tmp_path / "site"), str(wheel)], check=True)
    roles = sorted(p.stem for p in (ROOT / "specs" / "roles").glob("*.yaml"))
    contracts = sorted(p.stem for p in (ROOT / "specs" / "contracts").glob("*.yaml"))
    script = (
        "import multiverse, multiverse.config.specs as s\n"
        "assert multiverse.__file__.startswith(%r), multiverse.__file__\n"
        "print(sorted(s.load_roles(%r)))\n"
        "print(sorted(s.load_contract(c).name for c in %r))\n"
    ) % (str(tmp_path / "site"), roles, contracts)
    env = {k: v for k, v in os.environ.items() if k != "MULTIVERSE_SPECS"} | {"PYTHONPATH": str(tmp_path / "site")}
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = subprocess.run([sys.executable, "-c", script], cwd=outside, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(roles), str(contracts)]
