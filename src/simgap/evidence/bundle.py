"""EvidenceBundle: the rig's recorded evidence, loaded lazily and once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from simgap.rig import Rig

T = TypeVar("T")


class EvidenceBundle:
    """Loads each kind of evidence the first time a branch asks for it, then keeps it.

    Branches call ``get(name, loader)`` with a loader from ``simgap.evidence``; the bundle
    memoises by name so two branches that read the same dataset read it once.
    """

    def __init__(self, rig: Rig) -> None:
        self.rig = rig
        self._cache: dict[str, Any] = {}

    def get(self, name: str, loader: Callable[[Rig], T]) -> T:
        """The value named ``name``, loading it with ``loader(rig)`` the first time."""
        if name not in self._cache:
            self._cache[name] = loader(self.rig)
        value: T = self._cache[name]
        return value

    def has(self, name: str) -> bool:
        """Whether ``name`` was loaded already."""
        return name in self._cache
