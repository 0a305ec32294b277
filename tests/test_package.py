"""The package's public surface and import hygiene."""

import subprocess
import sys

import multiverse


def test_public_api_lists_fixed_names():
    for name in ("evaluate_case", "evaluate_batch", "run", "open_cube", "score", "pass_hat_k", "agreement", "to_long"):
        assert name in multiverse.__all__


def test_import_does_not_load_litellm():
    code = "import sys, multiverse; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
