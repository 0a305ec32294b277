"""``multiverse show CUBE --system S --role R ... --item N [--text] [--reasons]``: one conversation.

Prints each assistant turn's severities from every judge (and the planted
truth, when the cube has it), one row per principle of the role.  Transcript
text is shown only with ``--text``, and each judge's stated reason per turn
and principle only with ``--reasons``, both read from the run folder's
transcript store; ``--raw`` adds the raw text of every judge reply that did not
parse (from the run folder's ``unparseable.jsonl``).  A dim with a single label
may be left out.
"""

from __future__ import annotations

import argparse
import sys
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

__all__ = ["SYMBOLS", "LEGEND", "SELECTORS", "add_arguments", "main"]

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
    import json

    from multiverse._run.runner import UNPARSED_FILE

    path = _store_path(cube_path, None).with_name(UNPARSED_FILE)
    if not path.exists():
        raise FileNotFoundError(f"--raw: no {UNPARSED_FILE} at {path} (written by multiverse run --out)")
    out: dict[int, list[tuple[str, str]]] = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            entry = json.loads(line)
            if entry["transcript_id"] == transcript_id:
                out.setdefault(int(entry["turn"]), []).append((entry["judge"], entry["text"]))
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
        print("not run (excluded by the experiment)")
        return 0
    cell = "/".join(str(conversation[v].item()) for v in ("mode", "strategy", "target_principle"))
    print(
        f"transcript {transcript_id}  ended {conversation['ended'].item()}  target {cell}  "
        f"origin {conversation['origin'].item()}"
    )
    print(LEGEND)
    transcript = None
    if args.text:
        from multiverse.core.transcript import TranscriptStore

        path = _store_path(Path(args.cube), args.transcripts)
        if not path.exists():
            print(f"multiverse show: --text: no transcript store at {path}", file=sys.stderr)
            return 2
        with TranscriptStore(path) as store:
            transcript = store.get(transcript_id)
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
    assistant = transcript.assistant_events if transcript is not None else ()
    for turn in cube["turn"].values.tolist():
        values = severity.sel(turn=turn)
        rated = rating.sel(turn=turn) if rating is not None else None
        truth = conversation["truth"].sel(turn=turn) if "truth" in cube else None
        if (bool((values == NOT_APPLICABLE).all()) and (truth is None or bool((truth == NOT_APPLICABLE).all()))
                and (rated is None or bool(rated.isnull().all()))):
            continue
        tag = f"{conversation['tag_mode'].sel(turn=turn).item()}/{conversation['tag_strategy'].sel(turn=turn).item()}"
        print(f"\nturn {turn}  user tag {tag if tag != '/' else '-'}")
        if transcript is not None and turn <= len(assistant):
            reply = assistant[turn - 1]
            before = [e for e in transcript.events if e.turn < reply.turn and e.actor == "user"]
            if before:
                print(f"  user: {before[-1].text}")
            print(f"  assistant: {reply.text}")
            for action in reply.actions:
                print(f"  action: {action.name} {dict(action.arguments)}")
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
    return 0
