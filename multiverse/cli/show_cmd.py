"""``multiverse show CUBE --system S --role R ... --item N [--text] [--reasons]``: one conversation.

Prints each assistant turn's severities from every judge (and the planted
truth, when the cube has it), one row per principle of the role.  Transcript
text is shown only with ``--text``: every event once (user, assistant, each
tool call with its arguments, each tool result, system events), under the
assistant turn it belongs to (:func:`turn_blocks`).  Each judge's stated reason per turn
and principle only with ``--reasons``, both read from the run folder's
transcript store; ``--raw`` adds the raw text of every judge reply that did not
parse (from the run folder's ``unparseable.jsonl``).  A dim with a single label
may be left out.  A cell without a conversation says why: excluded by the
experiment, or not in the data (:func:`multiverse.cube.summary.absence`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from multiverse.cli._options import with_examples
from multiverse.core.schema import (
    CLEAR_BREACH,
    CONVERSATION_DIMS,
    FULL_ADHERENCE,
    MISSING,
    NOT_APPLICABLE,
    PARTIAL_DEVIATION,
)
from multiverse.core.transcript import Event, Transcript

__all__ = ["SYMBOLS", "LEGEND", "SELECTORS", "add_arguments", "call_names", "event_lines", "main", "turn_blocks"]

SYMBOLS = {FULL_ADHERENCE: "0", PARTIAL_DEVIATION: "1", CLEAR_BREACH: "2", MISSING: "?", NOT_APPLICABLE: "."}
LEGEND = "severity: 0 full adherence, 1 partial deviation, 2 clear breach, ? missing, . not applicable"
SELECTORS = CONVERSATION_DIMS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cube", metavar="CUBE", help="a cube file (.nc/.zarr) or a run folder")
    for dim in SELECTORS:
        parser.add_argument(f"--{dim.replace('_', '-')}", dest=dim, help=f"the {dim} label")
    parser.add_argument("--text", action="store_true", help="also print the conversation's text")
    parser.add_argument("--reasons", action="store_true", help="also print each judge's reason per turn and principle")
    parser.add_argument("--transcripts", metavar="PATH", help="transcript store (default: beside the cube)")
    parser.add_argument("--raw", action="store_true", help="also print the raw text of judge replies that did not parse")
    with_examples(parser, "multiverse show runs/quickstart --system drifting --role tutor --user-sim pushy --replicate 0 --item 3",
                  "multiverse show runs/quickstart --system drifting --role tutor --user-sim pushy --replicate 0 --item 3 --reasons")


def _select(cube, args: argparse.Namespace) -> dict[str, object]:
    chosen: dict[str, object] = {}
    for dim in SELECTORS:
        labels = cube[dim].values.tolist()
        value = getattr(args, dim)
        if value is None:
            if len(labels) != 1:
                raise ValueError(f"--{dim.replace('_', '-')}: required, one of {', '.join(map(str, labels))}")
            chosen[dim] = labels[0]
            continue
        if isinstance(labels[0], int):
            try:
                value = int(value)
            except ValueError:
                raise ValueError(f"--{dim.replace('_', '-')}: expected an integer, got {value!r}") from None
        if value not in labels:
            raise ValueError(f"--{dim.replace('_', '-')}: {value!r} is not one of {', '.join(map(str, labels))}")
        chosen[dim] = value
    return chosen


def _store_path(cube_path: Path, explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    folder = cube_path if cube_path.is_dir() and cube_path.suffix != ".zarr" else cube_path.parent
    return folder / "transcripts.sqlite"


def _unparsed(cube_path: Path, transcript_id: str) -> dict[int, list[tuple[str, str]]]:
    """turn -> [(judge, raw text)] of the conversation's unparseable judge replies."""
    from multiverse.core.files import read_regular

    from multiverse._run.runner import UNPARSED_FILE

    path = _store_path(cube_path, None).with_name(UNPARSED_FILE)
    if not path.exists():
        raise FileNotFoundError(f"--raw: no {UNPARSED_FILE} at {path} (written by multiverse run --out)")
    out: dict[int, list[tuple[str, str]]] = {}
    for number, line in enumerate(read_regular(path, what="file of unparseable replies").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if entry["transcript_id"] == transcript_id:
                out.setdefault(int(entry["turn"]), []).append((str(entry["judge"]), str(entry["text"])))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not a record of an unparseable reply ({type(exc).__name__})") from None
    return out


def main(args: argparse.Namespace) -> int:
    from multiverse.cube.build import check_cube
    from multiverse.cube.io import open_cube

    try:
        cube = open_cube(args.cube, lazy=False)
        check_cube(cube)
        chosen = _select(cube, args)
    except (FileNotFoundError, ValueError, OSError) as exc:
        print(f"multiverse show: {exc}", file=sys.stderr)
        return 2
    conversation = cube.sel(chosen)
    applies = cube["principle_applies"].sel(role=chosen["role"]).values
    principles = [p for p, a in zip(cube["principle"].values.tolist(), applies) if a]
    judges = cube["judge"].values.tolist()
    transcript_id = str(conversation["transcript_id"].item())
    labels = " ".join(f"{d}={chosen[d]}" for d in SELECTORS)
    print(labels)
    if not transcript_id:
        from multiverse.cube.summary import absence

        print(f"no conversation: {absence(cube, chosen)}")
        return 0
    cell = "/".join(str(conversation[v].item()) for v in ("mode", "strategy", "target_principle"))
    target = cell if cell.strip("/") else "-"  # recorded conversations have no target cell or origin
    origin = str(conversation["origin"].item()) or "-"
    print(f"transcript {transcript_id}  ended {conversation['ended'].item()}  target {target}  origin {origin}")
    print(LEGEND)
    transcript = None
    if args.text:
        from multiverse.core.transcript import TranscriptStore

        path = _store_path(Path(args.cube), args.transcripts)
        if not path.exists():
            print(f"multiverse show: --text: no transcript store at {path}", file=sys.stderr)
            return 2
        with TranscriptStore.open_existing(path) as store:
            try:
                transcript = store.get(transcript_id)
            except KeyError as exc:
                print(f"multiverse show: --text: {exc.args[0]}", file=sys.stderr)
                return 2
    unparsed: dict[int, list[tuple[str, str]]] = {}
    if args.raw:
        try:
            unparsed = _unparsed(Path(args.cube), transcript_id)
        except (FileNotFoundError, ValueError, KeyError) as exc:
            print(f"multiverse show: {exc}", file=sys.stderr)
            return 2
    stated: dict[tuple[int, str], list[tuple[str, str]]] = {}
    if args.reasons:
        from multiverse.cube.reasons import judge_reasons

        path = _store_path(Path(args.cube), args.transcripts)
        if not path.exists():
            print(f"multiverse show: --reasons: no transcript store at {path}", file=sys.stderr)
            return 2
        for row in judge_reasons(path, **chosen).itertuples(index=False):
            stated.setdefault((int(row.turn), str(row.principle)), []).append((str(row.judge), str(row.reason)))
    columns = judges + (["truth"] if "truth" in cube else [])
    width = max(len(p) for p in principles) + 2
    severity = conversation["severity"].sel(principle=principles)
    # a likert judge's rating (multiverse.core.scales) is shown as the number in place of its -2 severity
    rating = conversation["rating"].sel(principle=principles) if "rating" in cube else None
    blocks = turn_blocks(transcript) if transcript is not None else []
    names = call_names(transcript) if transcript is not None else {}
    replies = transcript.n_turns if transcript is not None else 0
    for turn in cube["turn"].values.tolist():
        values = severity.sel(turn=turn)
        rated = rating.sel(turn=turn) if rating is not None else None
        truth = conversation["truth"].sel(turn=turn) if "truth" in cube else None
        said = blocks[turn - 1] if turn <= replies else []
        if (not said and bool((values == NOT_APPLICABLE).all()) and (truth is None or bool((truth == NOT_APPLICABLE).all()))
                and (rated is None or bool(rated.isnull().all()))):
            continue
        tag = f"{conversation['tag_mode'].sel(turn=turn).item()}/{conversation['tag_strategy'].sel(turn=turn).item()}"
        print(f"\nturn {turn}  user tag {tag if tag != '/' else '-'}")
        for event in said:
            print("\n".join(event_lines(event, names)))
        print("  " + " " * width + " ".join(f"{c:>10}" for c in columns))
        for principle in principles:
            row = [SYMBOLS[int(values.sel(principle=principle, judge=j))] for j in judges]
            if rated is not None:
                given = rated.sel(principle=principle).values
                row = [f"{given[i]:g}" if given[i] == given[i] else symbol for i, symbol in enumerate(row)]
            if truth is not None:
                row.append(SYMBOLS[int(truth.sel(principle=principle))])
            print(f"  {principle:<{width}}" + " ".join(f"{v:>10}" for v in row))
        for judge, text in unparsed.get(turn, ()):
            print(f"  raw reply of {judge} (unparseable): {text}")
        if args.reasons:
            for principle in principles:
                for judge, reason in sorted(stated.get((turn, principle), []), key=lambda jr: judges.index(jr[0])):
                    print(f"  reason {judge} {principle}: {reason}")
    if len(blocks) > replies:
        print("\nafter the last assistant turn")
        for event in blocks[replies]:
            print("\n".join(event_lines(event, names)))
    return 0


def turn_blocks(transcript: Transcript) -> list[list[Event]]:
    """A transcript's events, each exactly once, grouped by the assistant turn they belong to.

    Block ``i`` (assistant turn ``i + 1``) holds the events after the previous
    block up to and including the ``i + 1``-th assistant event, then the tool
    results right after it (the answers to its calls).  Events after the last
    block (a final user message) form one more block.
    """
    blocks: list[list[Event]] = [[]]
    for event in transcript.events:
        closed = len(blocks) > 1 and not blocks[-1]
        if event.actor == "tool" and closed and blocks[-2][-1].actor in ("assistant", "tool"):
            blocks[-2].append(event)
            continue
        blocks[-1].append(event)
        if event.actor == "assistant":
            blocks.append([])
    return blocks if blocks[-1] else blocks[:-1]


def call_names(transcript: Transcript) -> dict[str, str]:
    """Tool-call id -> the name of the tool called, from the assistant events that made the calls."""
    return {
        str(call_id): action.name
        for event in transcript.assistant_events
        for call_id, action in zip(event.meta.get("tool_call_ids") or (), event.actions)
    }


def event_lines(event: Event, names: Mapping[str, str] | None = None) -> list[str]:
    """The lines ``show --text`` prints for one event: who, what they said, each tool call.

    ``names`` (tool-call id -> tool name, :func:`call_names`) names a tool
    result whose event does not carry the tool's name.
    """
    who = event.actor
    if event.actor == "tool":
        call = str(event.meta.get("tool_call_id") or "")
        name = event.meta.get("name") or event.meta.get("action") or (names or {}).get(call) or call
        who = f"tool result{f' ({name})' if name else ''}"
    elif event.set_role is not None:
        who = f"{event.actor} (set_role {event.set_role})"
    text = event.text.replace("\n", "\n    ")
    if not text and not event.actions:
        recorded = ", ".join(f"{key} {value}" for key, value in sorted(event.meta.items()))
        text = f"({recorded})" if event.actor == "system" and recorded else "(no text)"  # a system event: what it records
    lines = [f"  {who}: {text}"] if text else []
    for action in event.actions:
        lines.append(f"  {event.actor} tool call: {action.name} {json.dumps(dict(action.arguments), sort_keys=True, default=str)}")
    return lines
