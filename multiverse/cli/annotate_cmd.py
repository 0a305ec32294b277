"""``multiverse annotate export|import``: human labels in and out of a run.

``annotate export RUN_OR_CUBE --n N --stratify role,severity,bucket --out DIR
[--format jsonl|csv|html] [--seed S]`` writes ``DIR/tasks.jsonl`` (one blinded
task per sampled conversation), for ``csv`` also ``DIR/labels.csv`` (the blank
label sheet), for ``html`` the annotation form in ``DIR/form/`` (when the
viewer is part of the build), and ``DIR/strata_key.json`` (what each opaque stratum id means:
for the researcher, not the annotators), and ``DIR/export.json`` (how the tasks
were drawn).  ``DIR`` follows the output-folder rule (:mod:`multiverse.core.outputs`):
it is replaced only when missing, empty or written by ``annotate export`` before,
and what that did not write stays.

``annotate import LABELS... --cube CUBE --out CUBE2`` adds every annotator of
the label files as a judge ``human:<annotator>`` and writes the new cube; it
refuses to overwrite a file that is not a cube.

Exit codes: 0 written, 2 bad input (one line on stderr naming the file, line
and field).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from multiverse.cli._options import with_examples

FORMATS = ("jsonl", "csv", "html")
KIND = "annotate export"
"""The output kind of ``annotate export`` (:mod:`multiverse.core.outputs`)."""
PARAMETERS = "export.json"
"""The file recording how the tasks were drawn (``n``, ``stratify``, ``seed``, ``format``)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = sub.add_parser("export", help="Write annotation tasks for a stratified sample of conversations.")
    export.add_argument("source", metavar="RUN_OR_CUBE", help="a run folder, or a cube with transcripts.sqlite beside it")
    export.add_argument("--n", type=int, required=True, help="conversations to sample")
    export.add_argument("--stratify", default="role", help="comma-separated strata: role, severity, bucket, system, "
                        "user_sim, condition (default: role)")
    export.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    export.add_argument("--out", required=True, metavar="DIR", help="output folder")
    export.add_argument("--format", choices=FORMATS, default="jsonl", help="label format (default jsonl)")
    export.add_argument("--transcripts", metavar="PATH", help="transcript store (default: beside the cube)")
    imp = sub.add_parser("import", help="Add annotators' labels to a cube as judges human:<annotator>.")
    imp.add_argument("labels", nargs="+", metavar="LABELS", help="label files (.jsonl or .csv)")
    imp.add_argument("--cube", required=True, help="the cube (or run folder) the tasks came from")
    imp.add_argument("--out", required=True, metavar="CUBE2", help="the new cube (.nc or .zarr)")
    export_example = ("multiverse annotate export runs/quickstart --n 40 --stratify role,severity,bucket "
                      "--out runs/annotate --format csv")
    import_example = "multiverse annotate import runs/annotate/labels.csv --cube runs/quickstart --out runs/labelled.nc"
    with_examples(export, export_example)
    with_examples(imp, import_example)
    with_examples(parser, export_example, import_example)


def _html_writer():
    try:
        from multiverse.view import write_annotation_site
    except ImportError:
        raise ValueError("--format html: not available in this build (no multiverse.view annotation form); "
                         "use --format jsonl or csv") from None
    return write_annotation_site


def _export(args: argparse.Namespace) -> int:
    from multiverse.adapters.annotation_labels import blank_sheet
    from multiverse.adapters.annotation_tasks import annotation_tasks, strata_key
    from multiverse.core.outputs import check_output_dir, replace_dir
    from multiverse.cube.io import open_cube
    from multiverse.llm.redact import scrub

    stratify = [s.strip() for s in args.stratify.split(",") if s.strip()]
    out = Path(args.out)
    check_output_dir(out, kind=KIND, protected={"the run or cube": args.source, "the transcript store": args.transcripts})
    writer = _html_writer() if args.format == "html" else None
    tasks = annotation_tasks(args.source, n=args.n, stratify=stratify, seed=args.seed, transcripts=args.transcripts)
    tasks = [json.loads(scrub(json.dumps(task, sort_keys=True))) for task in tasks]
    key = strata_key(open_cube(args.source, lazy=False), stratify=stratify)
    with replace_dir(out, kind=KIND) as staging:
        with open(staging / "tasks.jsonl", "w", encoding="utf-8") as handle:
            for task in tasks:
                handle.write(json.dumps(task, sort_keys=True) + "\n")
        if args.format == "csv":
            blank_sheet(tasks).to_csv(staging / "labels.csv", index=False)
        if writer is not None:
            writer(tasks, staging / "form")
        (staging / "strata_key.json").write_text(json.dumps(key, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        manifest = {"command": KIND, "n": args.n, "stratify": stratify, "seed": args.seed,
                    "format": args.format, "tasks": len(tasks)}
        (staging / PARAMETERS).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"annotate export: {len(tasks)} tasks ({len(key)} strata) -> {out}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from multiverse.adapters.annotation_labels import HUMAN_PREFIX, import_labels

    cube = import_labels(args.labels, cube=args.cube, out=args.out)
    humans = [j for j in cube["judge"].values.tolist() if str(j).startswith(HUMAN_PREFIX)]
    counts = cube["missing_count"].sel(judge=humans)
    severity = cube["severity"].sel(judge=humans)
    print(f"annotate import: {len(humans)} annotators -> {args.out}")
    for judge in humans:
        valid = int((severity.sel(judge=judge) >= 0).sum())
        missing = {r: int(counts.sel(judge=judge, missing_reason=r)) for r in ("not_recorded", "no_verdict")}
        print(f"  {judge}: {valid} labels, missing {missing['not_recorded']} blank, {missing['no_verdict']} off the scale")
    return 0


def main(args: argparse.Namespace) -> int:
    try:
        return _export(args) if args.action == "export" else _import(args)
    except (ValueError, FileNotFoundError, KeyError, OSError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"multiverse annotate {args.action}: {message}", file=sys.stderr)
        return 2
