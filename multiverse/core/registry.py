"""``Registry[T]``: named things of one kind that users can add to.

Judge kinds, deterministic judges, evidentiary standards, scoring rules,
embedders and tool environments are looked up by the names an experiment file
or a call gives; each kind keeps one :class:`Registry`.  It is a small ordered
map with the rules every such table needs: built-ins first in registration
order, a taken name refused unless ``overwrite=True``, an unknown name an error
that lists the known ones, and an optional check run on every registered value.

A registry read by an earlier stage than the one defining its built-ins (the
experiment reader checks judge kinds and scoring names, which the judge and
scoring stages define) names the module that registers them, ``builtins=``: it
is imported the first time the registry is used, as a plugin's entry point
would be, so the reader never imports a later stage itself.

The standard library has no such type and the evaluation harnesses that have
one (lm-eval's ``register_*`` decorators, inspect_ai's registry) tie it to
their own task objects, hence this one (stdlib only, so every layer may use it).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, overload

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """An ordered, name -> value table of one kind of thing.

    Parameters
    ----------
    kind
        What the values are (``"judge"``, ``"standard"``, ...); error messages use it.
    check
        Called on every value before it is registered; returns the value to
        store (e.g. a wrapped form) or raises ``ValueError``/``TypeError``.
    builtins
        The module that registers the built-in values, imported on first use.

    Examples
    --------
    >>> colours = Registry("colour")
    >>> colours.register("red", "#f00")
    '#f00'
    >>> colours["red"], list(colours)
    ('#f00', ['red'])
    >>> @colours.register("blue")
    ... def blue():
    ...     return "#00f"
    >>> colours.names()
    ('red', 'blue')
    """

    def __init__(self, kind: str, *, check: Callable[[str, T], T] | None = None, builtins: str | None = None):
        self.kind = kind
        self._check = check
        self._builtins = builtins
        self._items: dict[str, T] = {}

    def _load_builtins(self) -> None:
        """Import the module registering the built-ins, once (its own registrations land first)."""
        if self._builtins is not None:
            module, self._builtins = self._builtins, None
            importlib.import_module(module)

    @overload
    def register(self, name: str, value: T, *, overwrite: bool = False) -> T: ...

    @overload
    def register(self, name: str, *, overwrite: bool = False) -> Callable[[T], T]: ...

    def register(self, name, value=None, *, overwrite=False):
        """Register ``value`` as ``name``; without ``value``, a decorator that does.

        Returns
        -------
        The value as given (so the decorator form leaves the decorated object unchanged).

        Raises
        ------
        ValueError
            If ``name`` is empty or taken and ``overwrite`` is false, or the check refuses the value.
        """
        if value is None:
            return lambda found: self.register(name, found, overwrite=overwrite)
        self._load_builtins()
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} name: expected a non-empty string, got {name!r}")
        if name in self._items and not overwrite:
            raise ValueError(f"{self.kind} {name!r} is already registered (pass overwrite=True)")
        self._items[name] = self._check(name, value) if self._check is not None else value
        return value

    def __getitem__(self, name: str) -> T:
        """The value registered as ``name``.

        Raises
        ------
        KeyError
            Naming the registered values, if there is none by that name.
        """
        self._load_builtins()
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(f"no {self.kind} {name!r}; registered: {', '.join(self._items) or 'none'}") from None

    def get(self, name: str, default: T | None = None) -> T | None:
        """The value registered as ``name``, or ``default``."""
        self._load_builtins()
        return self._items.get(name, default)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (an unknown name is a ``KeyError``, as for lookups)."""
        self[name]
        del self._items[name]

    def names(self) -> tuple[str, ...]:
        """Registered names, in registration order (built-ins first)."""
        self._load_builtins()
        return tuple(self._items)

    def copy(self) -> Registry[T]:
        """An independent registry with the same entries (e.g. for a test)."""
        self._load_builtins()
        other: Registry[T] = Registry(self.kind, check=self._check)
        other._items = dict(self._items)
        return other

    def __contains__(self, name: object) -> bool:
        self._load_builtins()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        self._load_builtins()
        return iter(self._items)

    def __len__(self) -> int:
        self._load_builtins()
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._items)})"
