"""Build hook: ship ``specs/roles`` and ``specs/contracts`` inside the package as ``multiverse/_specs``.

``specs/`` at the top of the checkout stays the one editable source; a built
wheel carries a copy, which :func:`multiverse.config.specs.find_specs_dir` falls back to
outside a checkout.  setuptools cannot name files outside the package in
``package-data``, hence this small ``build_py`` step.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SPEC_FOLDERS = ("roles", "contracts")


class BuildWithSpecs(build_py):
    """``build_py`` that also copies the shipped roles and contracts into the built package."""

    def run(self) -> None:
        super().run()
        source = Path(__file__).resolve().parent / "specs"
        target = Path(self.build_lib) / "multiverse" / "_specs"
        for folder in SPEC_FOLDERS:
            shutil.rmtree(target / folder, ignore_errors=True)
            shutil.copytree(source / folder, target / folder)


setup(cmdclass={"build_py": BuildWithSpecs})
