"""Fill an exported annotation sheet with planted annotators, for trying the annotation path offline.

    multiverse run experiments/quickstart.yaml --out runs/quickstart
    multiverse annotate export runs/quickstart --n 40 --stratify role,severity,bucket --out runs/annotate
    python examples/fill_labels.py runs/annotate/tasks.jsonl --cube runs/quickstart --out runs/annotate/labels.jsonl
    multiverse annotate import runs/annotate/labels.jsonl --cube runs/quickstart --out runs/labelled.nc

Each annotator labels every task from the offline world's planted truth with
known error rates (``--annotator NAME:SENSITIVITY:SPECIFICITY``, repeatable;
default two).  The labels are simulated: use them to check the pipeline, not
as human judgments.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from multiverse.adapters.sim_annotators import sim_annotator_labels
from multiverse.cube.io import open_cube


def _annotator(text: str) -> tuple[str, dict[str, float]]:
    try:
        name, sensitivity, specificity = text.split(":")
        return name, {"sensitivity": float(sensitivity), "specificity": float(specificity)}
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME:SENSITIVITY:SPECIFICITY") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", type=Path, help="tasks.jsonl written by 'multiverse annotate export'")
    parser.add_argument("--cube", required=True, help="the run (or cube) the tasks came from")
    parser.add_argument("--out", required=True, type=Path, help="the label file to write (JSONL)")
    parser.add_argument("--annotator", action="append", type=_annotator, dest="annotators",
                        help="NAME:SENSITIVITY:SPECIFICITY (default ann_a:0.95:0.98 and ann_b:0.85:0.95)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    annotators = dict(args.annotators or [_annotator("ann_a:0.95:0.98"), _annotator("ann_b:0.85:0.95")])
    tasks = [json.loads(line) for line in args.tasks.read_text(encoding="utf-8").splitlines() if line.strip()]
    labels = sim_annotator_labels(tasks, open_cube(args.cube), annotators=annotators, seed=args.seed)
    args.out.write_text("".join(json.dumps(label) + "\n" for label in labels), encoding="utf-8")
    print(f"{len(labels)} simulated labels from {len(annotators)} planted annotators -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
