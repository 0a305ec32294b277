"""Transcripts: the ordered record of one conversation, and the store that keeps them.

A transcript is an ordered tuple of :class:`Event` objects.  Assistant turn ``i``
(the cube's 1-based ``turn``) is the ``i``-th assistant event.  Tool calls are
recorded as :class:`Action` objects on the assistant event that made them, so the
role-contract judge reads observed actions, never prose.

The store is one SQLite file (``transcripts.sqlite``) keyed by transcript id: the
standard library's sqlite3 gives atomic, concurrent-reader storage without a
server, which is all an append-only id -> JSON map needs.  Beside the
transcripts it keeps the judges' stated reasons, one row per (conversation,
turn, principle, judge); :func:`multiverse.judge_reasons` reads them as a table.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from multiverse.core.canonical import digest

__all__ = ["REASON_FIELDS", "Action", "Event", "StoreError", "Transcript", "TranscriptStore", "transcript_inputs"]

REASON_FIELDS = (
    "system", "role", "user_sim", "condition", "replicate", "item", "turn", "principle", "judge",
    "transcript_id", "reason",
)
"""Columns of a stored judge reason: the conversation's labels, the cell, the transcript, the text."""
_REASON_KEY = REASON_FIELDS[:9]

@dataclass(frozen=True)
class Action:
    """One structured action (tool call) an assistant event requested."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": dict(self.arguments)}


@dataclass(frozen=True)
class Event:
    """One event of a conversation.

    Parameters
    ----------
    turn
        Strictly increasing event sequence number (the case JSON's ``turn``).
    actor
        ``user``, ``assistant``, ``system`` or ``tool``.
    text
        What the actor said; may be empty for pure action or control events.
    actions
        Structured actions (tool calls) recorded on an assistant event.
    set_role
        A trusted role transition carried by a system event.
    meta
        Free metadata: request metadata (``request_id``, ``contract_version``,
        ``included_turns``, ``instruction_sha256``), monitor tags, etc.
    """

    turn: int
    actor: str
    text: str = ""
    actions: tuple[Action, ...] = ()
    set_role: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"turn": self.turn, "actor": self.actor}
        if self.text:
            out["text"] = self.text
        if self.actions:
            out["actions"] = [a.to_dict() for a in self.actions]
        if self.set_role is not None:
            out["set_role"] = self.set_role
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Event:
        return cls(
            turn=int(data["turn"]),
            actor=str(data["actor"]),
            text=str(data.get("text", "")),
            actions=tuple(
                Action(a["name"], MappingProxyType(dict(a.get("arguments") or {})))
                for a in data.get("actions", ())
            ),
            set_role=data.get("set_role"),
            meta=MappingProxyType(dict(data.get("meta") or {})),
        )


@dataclass(frozen=True)
class Transcript:
    """One conversation: its events plus what generated it.

    ``scenario`` holds the generating scenario (persona, goal, target and home
    cells, origin, parent, pressure); ``ended`` is one of
    :data:`multiverse.core.schema.ENDED_STATES`.
    """

    role: str
    events: tuple[Event, ...]
    scenario: Mapping[str, Any] = field(default_factory=dict)
    ended: str = "completed"
    id: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", self.digest())

    def digest(self) -> str:
        """Content address: sha256 of the canonical JSON without the id."""
        return digest(self.to_dict(include_id=False), length=32, allow_nan=True)

    @property
    def assistant_events(self) -> tuple[Event, ...]:
        """Assistant events in order; the ``i``-th is assistant turn ``i + 1``."""
        return tuple(e for e in self.events if e.actor == "assistant")

    @property
    def n_turns(self) -> int:
        """Number of assistant turns."""
        return len(self.assistant_events)

    def through_turn(self, turn: int) -> Transcript:
        """The transcript cut after assistant turn ``turn`` (1-based)."""
        seen = 0
        for i, event in enumerate(self.events):
            if event.actor == "assistant":
                seen += 1
                if seen == turn:
                    return Transcript(self.role, self.events[: i + 1], self.scenario, self.ended)
        return self

    def to_case(self, contract: Mapping[str, Any], *, case_id: str | None = None) -> dict[str, Any]:
        """The case-JSON form read by :func:`multiverse.evaluate_case`."""
        transcript = []
        for e in self.events:
            item: dict[str, Any] = {"turn": e.turn, "actor": e.actor}
            if e.actions:
                item["observed_actions"] = [a.name for a in e.actions]
            if e.set_role is not None:
                item["set_role"] = e.set_role
            for key in ("request_id", "contract_version", "included_turns", "instruction_sha256"):
                if key in e.meta:
                    item[key] = e.meta[key]
            transcript.append(item)
        return {"case_id": case_id or self.id, "contract": dict(contract), "transcript": transcript}

    def to_dict(self, *, include_id: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "role": self.role,
            "events": [e.to_dict() for e in self.events],
            "scenario": dict(self.scenario),
            "ended": self.ended,
        }
        if include_id:
            out["id"] = self.id
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Transcript:
        return cls(
            role=str(data["role"]),
            events=tuple(Event.from_dict(e) for e in data["events"]),
            scenario=MappingProxyType(dict(data.get("scenario") or {})),
            ended=str(data.get("ended", "completed")),
            id=str(data.get("id", "")),
        )


def transcript_inputs(transcript: Transcript) -> list[dict[str, Any]]:
    """The events of a transcript as structured prompt inputs.

    Each event becomes ``{"turn", "actor", "text"}``, plus ``assistant_turn``
    (1-based) on assistant events, ``actions`` (``name`` and ``arguments``) where
    it made tool calls, and ``set_role`` on trusted role transitions.
    """
    out: list[dict[str, Any]] = []
    assistant_turn = 0
    for event in transcript.events:
        item: dict[str, Any] = {"turn": event.turn, "actor": event.actor, "text": event.text}
        if event.actor == "assistant":
            assistant_turn += 1
            item["assistant_turn"] = assistant_turn
        if event.actions:
            item["actions"] = [action.to_dict() for action in event.actions]
        if event.set_role is not None:
            item["set_role"] = event.set_role
        out.append(item)
    return out


class StoreError(ValueError):
    """A transcript store that cannot be read (not a SQLite file, damaged, without this library's tables) or written.

    The message is one line naming the file.
    """


_SQLITE_HEADER = b"SQLite format 3\x00"
_READ_ERRORS = (sqlite3.Error, ValueError, KeyError, TypeError, AttributeError)


class TranscriptStore:
    """An id -> transcript map in one SQLite file.

    Writes are single transactions; re-putting an id is a no-op (content
    addressed), so concurrent or repeated runs never corrupt the store.

    Parameters
    ----------
    path
        The SQLite file, created with its tables when missing.
    scrub
        Applied to every transcript's JSON text and every reason before it is
        stored (the run passes :func:`multiverse.llm.redact.scrub`, so no known
        secret value reaches the file).

    See Also
    --------
    TranscriptStore.open_existing : read a store that must already exist, without writing to it.
    """

    FILENAME = "transcripts.sqlite"

    def __init__(self, path: str | Path, *, scrub: Callable[[str], str] | None = None):
        self.path = Path(path)
        self._scrub = scrub
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # A run inside a running event loop (a notebook) writes from its loop's worker thread while
        # the thread that opened the store waits: handed over, never shared, hence no thread check.
        columns = ", ".join(f"{name} {'INTEGER' if name in ('replicate', 'item', 'turn') else 'TEXT'} NOT NULL"
                            for name in REASON_FIELDS)
        try:
            self._conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("CREATE TABLE IF NOT EXISTS transcripts (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
            self._conn.execute(f"CREATE TABLE IF NOT EXISTS reasons ({columns}, PRIMARY KEY ({', '.join(_REASON_KEY)}))")
            self._conn.commit()
        except sqlite3.Error as exc:
            if hasattr(self, "_conn"):
                self._conn.close()
            raise StoreError(f"{self.path}: cannot open the transcript store ({' '.join(str(exc).split())})") from None

    @classmethod
    def open_existing(cls, path: str | Path) -> TranscriptStore:
        """Open a store that must exist, read-only: nothing is created or written.

        Raises
        ------
        StoreError
            If ``path`` is not a regular file, not a SQLite database, damaged,
            or has no ``transcripts`` table of this library's form.
        """
        path = Path(path)
        store = cls.__new__(cls)
        store.path, store._scrub = path, None
        try:
            if not path.is_file():
                raise StoreError(f"{path}: not a transcript store (not a regular file)")
            with open(path, "rb") as handle:
                header = handle.read(len(_SQLITE_HEADER))
        except OSError as exc:
            raise StoreError(f"{path}: cannot read the transcript store ({exc.strerror})") from None
        if header != _SQLITE_HEADER:
            raise StoreError(f"{path}: not a transcript store (not a SQLite database)")
        try:
            store._conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=60,
                                          check_same_thread=False)
            columns = {row[1] for row in store._conn.execute("PRAGMA table_info(transcripts)")}
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: not a readable transcript store ({' '.join(str(exc).split())})") from None
        if not {"id", "body"} <= columns:
            store._conn.close()
            raise StoreError(f"{path}: not a transcript store (no transcripts table with id and body)")
        return store

    def _read(self, query: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(query, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: damaged transcript store ({' '.join(str(exc).split())})") from None

    def _write(self, query: str, rows: list[tuple[Any, ...]]) -> None:
        try:
            with self._conn:
                self._conn.executemany(query, rows)
        except sqlite3.Error as exc:  # a full disk, a read-only folder
            raise StoreError(f"{self.path}: cannot write the transcript store ({' '.join(str(exc).split())})") from None

    def put(self, transcripts: Iterable[Transcript]) -> None:
        """Store transcripts (one transaction).

        Raises
        ------
        StoreError
            If the file cannot be written (a full disk).
        """
        scrub = self._scrub or (lambda text: text)
        rows = [(t.id, scrub(json.dumps(t.to_dict(), sort_keys=True, ensure_ascii=False))) for t in transcripts]
        self._write("INSERT OR IGNORE INTO transcripts VALUES (?, ?)", rows)

    def put_reasons(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Store judge reasons (one transaction), each row holding every name of :data:`REASON_FIELDS`.

        A row for a (conversation, turn, principle, judge) already stored replaces it.
        """
        scrub = self._scrub or (lambda text: text)
        values = [tuple(scrub(row[name]) if name == "reason" else row[name] for name in REASON_FIELDS) for row in rows]
        marks = ", ".join("?" * len(REASON_FIELDS))
        self._write(f"INSERT OR REPLACE INTO reasons VALUES ({marks})", values)

    def reasons(self) -> list[dict[str, Any]]:
        """Every stored judge reason as a dict of :data:`REASON_FIELDS`, in key order (none in a store without them).

        Raises
        ------
        StoreError
            If the reasons table is not of this library's form.
        """
        if not self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'reasons'"):
            return []
        rows = self._read(f"SELECT {', '.join(REASON_FIELDS)} FROM reasons ORDER BY {', '.join(_REASON_KEY)}")
        return [dict(zip(REASON_FIELDS, row)) for row in rows]

    def get(self, transcript_id: str) -> Transcript:
        """The transcript with this id.

        Raises
        ------
        KeyError
            If the store holds no such transcript.
        StoreError
            If the stored transcript cannot be read.
        """
        rows = self._read("SELECT body FROM transcripts WHERE id = ?", (transcript_id,))
        if not rows:
            raise KeyError(f"{self.path}: no transcript with id {transcript_id!r}")
        try:
            return Transcript.from_dict(json.loads(rows[0][0]))
        except _READ_ERRORS as exc:
            detail = " ".join(str(exc).split())[:120]
            raise StoreError(f"{self.path}: transcript {transcript_id!r} is damaged ({type(exc).__name__}: {detail})") from None

    def __contains__(self, transcript_id: object) -> bool:
        return bool(self._read("SELECT 1 FROM transcripts WHERE id = ?", (transcript_id,)))

    def __len__(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM transcripts")[0][0])

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> TranscriptStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
