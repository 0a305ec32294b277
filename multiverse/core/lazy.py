"""Lazy public names for packages (PEP 562), so importing a package stays cheap.

A package lists ``name -> module`` in a table and gets ``__getattr__`` and
``__dir__`` from :func:`lazy_exports`; a name's module is imported on first use
and the value is then cached in the package's namespace.  Names that were
renamed keep working for one release through ``deprecated={old: new}``: using
the old name warns (``DeprecationWarning``) and returns the new name's value.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], *, deprecated: Mapping[str, str] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` resolving ``exports`` on first use.

    Parameters
    ----------
    package
        The package's ``__name__``.
    exports
        Public name -> the module defining it.
    deprecated
        Old name -> the public name that replaced it (kept for one release; not listed by ``dir``).
    """
    table = dict(exports)
    renamed = dict(deprecated or {})

    def __getattr__(name: str) -> Any:
        if name in renamed:
            warnings.warn(
                f"{package}.{name} was renamed {package}.{renamed[name]}; the old name goes in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(sys.modules[package], renamed[name])
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
