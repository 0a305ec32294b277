"""Importing the scoring layer leaves the heavy numerical libraries unloaded until a function needs them."""

import subprocess
import sys

import pytest


def _loaded_after(statement: str, modules: tuple[str, ...]) -> list[str]:
    code = f"import sys; {statement}; print(*[m for m in {modules!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.parametrize(
    "statement",
    [
        pytest.param("import multiverse; multiverse.score", id="lazy-attribute"),
        pytest.param("import multiverse.scoring", id="package"),
        pytest.param("from multiverse.scoring.pass_k import pass_hat_k", id="pass-k-module"),
    ],
)
def test_importing_score_does_not_import_scipy_or_statsmodels(statement):
    assert _loaded_after(statement, ("scipy", "statsmodels")) == []


def test_pass_hat_k_imports_scipy_when_called():
    statement = (
        "import numpy as np; from multiverse.scoring.pass_k import pass_hat_k_kernel; "
        "pass_hat_k_kernel(np.ones((2, 3), bool), np.ones((2, 3), bool), k=[1], axis=1)"
    )
    assert _loaded_after(statement, ("scipy",)) == ["scipy"]
