"""A cache a cluster shares without a shared filesystem: responses travel with the tasks.

With a joblib backend (``loky``, ``dask``, ``ray``, ...), workers never open the
cache's SQLite file.  For each rollout unit the driver, the one process that
opens the cache, packs a :class:`Shipment`: the cached responses the unit read
the last time it ran (the keys its replay, or its *needs* row, was bound to)
and, when that replay is still valid, the replay itself.  The worker seeds an
in-memory :class:`~multiverse.llm.Cache` with them, runs the unit through
:func:`~multiverse._run.execute.run_or_replay` exactly as a local run would,
and returns a :class:`Returned`: the responses it had to ask a model for, the
replay it stored and the keys it read.  The driver alone writes them
(:func:`store_returned`), one transaction for the responses, then the replay
bound to them, so the cache keeps its guarantees: one writer, every write
atomic, a driver killed at any instant leaves only whole entries, and a rerun
asks again only for what was never stored.

A unit whose needs the cache does not know (it never finished through a
replay-keeping run, or its cells changed) is shipped nothing; its worker asks
the models for what it needs and the driver keeps the first answer to a key it
already had.  In offline mode such a unit runs on the driver instead, so a
miss is never reported for a response the cache holds.

Why not a cache server: every worker would need a connection back to the
driver during its task; shipping keeps tasks pure functions of their input,
which is what dask, ray and joblib schedule, retry and move between machines.
On a multi-node dask cluster the shipment is part of the task's arguments
(``client.submit`` pickles it to the worker, large ones can be ``scatter``-ed),
on ray it is the remote function's argument (ray's object store moves it);
either way only the driver's machine holds the cache folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from multiverse.llm.cache import Cache, CacheEntry

__all__ = ["NEEDS_PREFIX", "Returned", "Shipment", "pack_shipment", "seeded_cache", "store_returned", "unpack_returned"]

NEEDS_PREFIX = "needs/"
"""Prefix of the replay rows that record only which responses a unit read (a unit with a failed call)."""


@dataclass
class Shipment:
    """What the driver sends with one unit's task.

    Attributes
    ----------
    entries
        ``(key, entry)`` of every cached response the unit read last time.
    replay
        ``(replay key, response keys, payload)`` of the unit's valid replay, or ``None``.
    known
        Whether the cache knew the unit's needs (it ran before).
    """

    entries: list[tuple[str, CacheEntry]] = field(default_factory=list)
    replay: tuple[str, list[str], str] | None = None
    known: bool = False


@dataclass
class Returned:
    """What a worker sends back with one unit's result.

    Attributes
    ----------
    entries
        ``(key, entry)`` of every response the worker asked a model for.
    replay
        ``(replay key, response keys, payload, fingerprint)`` of the replay the
        worker stored, or ``None`` (a call failed, or the unit was replayed).
    needs
        ``(replay key, response keys)``: what the unit read, when no replay was stored.
    """

    entries: list[tuple[str, CacheEntry]] = field(default_factory=list)
    replay: tuple[str, list[str], str, str] | None = None
    needs: tuple[str, list[str]] | None = None


def pack_shipment(cache: Cache, replay_key: str) -> Shipment:
    """The responses (and valid replay) the unit of ``replay_key`` needs, read from the driver's cache."""
    keys = cache.replay_response_keys(replay_key)
    if keys is None:
        keys = cache.replay_response_keys(NEEDS_PREFIX + replay_key)
    if keys is None:
        return Shipment()
    entries = [(key, entry) for key in dict.fromkeys(keys) if (entry := cache.get(key)) is not None]
    payload = cache.get_replay(replay_key)
    replay = (replay_key, keys, payload) if payload is not None else None
    return Shipment(entries=entries, replay=replay, known=True)


def seeded_cache(shipment: Shipment) -> Cache:
    """An in-memory cache holding what ``shipment`` carries (the worker's only cache)."""
    cache = Cache(None)
    cache.put_many(shipment.entries)
    if shipment.replay is not None:
        key, response_keys, payload = shipment.replay
        cache.put_replay(key, response_keys=response_keys, payload=payload)
    return cache


def unpack_returned(cache: Cache, shipment: Shipment, replay_key: str) -> Returned:
    """What a worker's seeded ``cache`` gained while running the unit of ``replay_key``."""
    shipped = {key for key, _ in shipment.entries}
    new_keys = [key for key in cache.keys() if key not in shipped]
    entries = [(key, entry) for key in new_keys if (entry := cache.get(key)) is not None]
    stored = cache.replay_response_keys(replay_key)
    if shipment.replay is None and stored is not None:
        payload = cache.get_replay(replay_key)
        fingerprint = cache.fingerprint(stored)
        if payload is not None and fingerprint is not None:
            return Returned(entries=entries, replay=(replay_key, stored, payload, fingerprint))
    if stored is not None:  # replayed from the shipment: nothing new to bind
        return Returned(entries=entries)
    return Returned(entries=entries, needs=(replay_key, [*shipped, *new_keys]))


def store_returned(cache: Cache, returned: Sequence[Returned]) -> None:
    """Write what workers returned into the driver's cache: responses first, then replays bound to them.

    A replay is stored only when the driver's copy of every response it read
    has the fingerprint the worker saw (a key the driver already held with
    another text keeps the driver's text, and the unit is rebuilt next time).
    """
    for part in returned:
        if part.entries:
            cache.put_many(part.entries)
        if part.replay is not None:
            key, response_keys, payload, fingerprint = part.replay
            if cache.fingerprint(response_keys) == fingerprint:
                cache.put_replay(key, response_keys=response_keys, payload=payload)
        elif part.needs is not None:
            key, response_keys = part.needs
            cache.put_replay(NEEDS_PREFIX + key, response_keys=response_keys, payload="")

