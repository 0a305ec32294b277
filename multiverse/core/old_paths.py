"""Import paths of the previous release, kept working for one release.

The package was laid out anew as one package per pipeline stage (see
``docs/architecture.md``).  Code that still imports a module by its old path
(``multiverse.fuzz.campaign``, ``multiverse.judges``, ``multiverse.io``, ...) gets
the module at its new path, the very same module object, and a
``DeprecationWarning`` naming the new path, attributed to the importing line.
The old paths go in the next release.

``multiverse.score`` and ``multiverse.run`` are functions now, so their former
submodule paths (``multiverse.score.registry``, ``multiverse.run.runner``) cannot
be kept: importing one raises ``ModuleNotFoundError`` naming where the module
went.  Their public names stay importable from :mod:`multiverse` and from
:mod:`multiverse.scoring`.

Written by hand because the standard library offers no module alias: a
``sys.modules`` entry would be created eagerly (importing every stage at
``import multiverse``) and would not warn.  The finder and loader follow the
import protocols by duck typing: ``importlib.abc`` alone costs 10 ms to import.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import ModuleType

__all__ = ["OLD_PATHS", "RETIRED", "install", "new_path"]

OLD_PATHS: dict[str, str] = {
    "multiverse.fuzz": "multiverse.rollout",
    "multiverse.judges": "multiverse.judge",
    "multiverse.judging": "multiverse.core.judgment",
    "multiverse.io": "multiverse.cube.io",
    "multiverse.cube_summary": "multiverse.cube.summary",
    "multiverse.reasons": "multiverse.cube.reasons",
    "multiverse.specs": "multiverse.config.specs",
    "multiverse.experiment": "multiverse.config.experiment",
    "multiverse.rollouts": "multiverse.config.recorded",
    "multiverse.protocol": "multiverse.llm.protocol",
    "multiverse.grid": "multiverse.core.grid",
    "multiverse.choices": "multiverse.core.choices",
    "multiverse.registry": "multiverse.core.registry",
    "multiverse.transcript": "multiverse.core.transcript",
    "multiverse.sim.config": "multiverse.config.sim_block",
}
"""Old module or package path -> its new path; a package's submodules follow it."""

RETIRED: dict[str, str] = {
    "multiverse.score": "multiverse.scoring",
    "multiverse.run": "multiverse._run",
}
"""Former packages whose name is now a public function -> where their modules went."""


def new_path(name: str) -> str | None:
    """The new path of an old module path ``name``, or ``None`` when it is not an old path."""
    for old, new in OLD_PATHS.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


def _importer_stacklevel() -> int:
    """The ``stacklevel`` that attributes a warning raised in this module to the importing line."""
    frame = sys._getframe(2)  # the caller of the function that warns
    level = 2
    while frame is not None and _machinery(frame.f_globals.get("__name__", "")):
        if not _skipped_by_warnings(frame):
            level += 1
        frame = frame.f_back
    return level


def _skipped_by_warnings(frame: object) -> bool:
    """Whether ``warnings`` itself skips this frame when it counts ``stacklevel`` (the import system's)."""
    filename = frame.f_code.co_filename  # type: ignore[attr-defined]
    return "importlib" in filename and "_bootstrap" in filename


def _machinery(module: str) -> bool:
    """Whether a frame of ``module`` is part of importing (the import system, this module, the package's ``__getattr__``)."""
    return module == "multiverse" or module.startswith(("importlib", __name__))


class _Alias:
    """Loads an old path as the module at its new path (the same object), warning once per path."""

    def __init__(self, old: str, new: str):
        self.old = old
        self.new = new
        self._spec = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{self.old} moved to {self.new}; the old import path goes in the next release",
            DeprecationWarning,
            stacklevel=_importer_stacklevel(),
        )
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the alias's spec on the module: give it back its own.
        module.__spec__ = self._spec


class _OldPathFinder:
    """Finds the old paths of :data:`OLD_PATHS` and refuses the retired ones of :data:`RETIRED`."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("multiverse."):
            return None
        for old, new in RETIRED.items():
            if fullname == old or fullname.startswith(old + "."):
                raise ModuleNotFoundError(
                    f"{fullname}: {old} is a function now; its modules moved to {new + fullname[len(old):]} "
                    f"(public names: from {'multiverse.scoring' if old.endswith('score') else 'multiverse'} import ...)",
                    name=fullname,
                )
        new = new_path(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(fullname, new))


def install() -> None:
    """Put the old-path finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _OldPathFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OldPathFinder())
