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


def _fresh(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_import_leaves_xarray_unloaded_until_needed():
    assert _fresh("import sys, multiverse; print('xarray' in sys.modules)") == ["False"]


def test_accessor_registers_when_xarray_loads_after_multiverse():
    code = "import multiverse, xarray as xr; print(hasattr(xr.Dataset(), 'multiverse'))"
    assert _fresh(code) == ["True"]


def test_accessor_registers_when_xarray_was_loaded_first():
    code = "import xarray as xr, multiverse; print(hasattr(xr.Dataset(), 'multiverse'))"
    assert _fresh(code) == ["True"]


def test_version_flag_prints_the_library_version(capsys):
    from multiverse.cli import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"multiverse {multiverse.__version__}\n"
    import importlib.metadata

    assert multiverse.__version__ == importlib.metadata.version("multiverse")


def test_calling_the_lazy_score_first_keeps_its_submodules_importable():
    """``multiverse.score(cube)`` before ``import multiverse.scoring.registry`` must not hide the package."""
    code = (
        "import multiverse\n"
        "assert callable(multiverse.score)\n"
        "import multiverse.scoring.registry as registry\n"
        "import multiverse._run.runner as runner\n"
        "assert callable(multiverse.run)\n"
        "print(registry.__name__, runner.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["multiverse.scoring.registry", "multiverse._run.runner"]
