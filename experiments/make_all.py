"""The main job: regenerate every result, figure and number of the paper.

``make run`` calls this script.  Each study in :data:`STUDIES` is a module in this
folder with ``main(*, out_dir, data_dir, cache_dir, figures_dir) -> dict`` that
writes its cube(s) under ``results/<study>/``, its figures under ``figures/`` and
returns the numbers the paper quotes.  A study whose inputs (its own source, the
experiment files it reads, the library's source) are unchanged since its last
successful run is skipped; its stored numbers are reused (a study's committed
input logs, ``<study>_logs/``, count among its inputs).  Model calls go through
the on-disk cache in ``.cache/``, so even a re-run study makes no call twice.

Finally every number is written to ``paper/numbers.json``, ``paper/paper.md``
is rendered from ``paper/paper.src.md`` (figures embedded with their captions),
and, where python-markdown and WeasyPrint are installed, ``paper/paper.pdf``
from it (not committed: it carries its creation time).

The outputs are deterministic, so a rerun (here or on another machine) leaves the
committed files as they were: BLAS and OpenMP run on one thread (a multi-threaded
matrix product splits its sums differently from run to run, and the worker
processes inherit the same limit through the environment), every study seeds its
own draws, and every number is written at :data:`_common.SIGNIFICANT_DIGITS`
significant digits, the precision the paper prints plus a margin.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import sys
import time
from pathlib import Path

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
"""Set to 1 before numpy loads a BLAS, here and (inherited) in every worker process."""
os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))

from _common import load_study, rounded  # noqa: E402  beside this script, which is run as a file; after the thread pins

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "experiments"
RESULTS = ROOT / "results"
FIGURES = ROOT / "figures"
CACHE = ROOT / ".cache" / "calls"
PAPER = ROOT / "paper"

STUDIES: tuple[str, ...] = (
    "sim_multiverse",
    "sim_campaign",
    "real_tau_bench",
    "real_tau2_judges",
    "real_alpaca_rankings",
    "sim_annotation",
    "sim_web_agent",
    "inspect_mockllm",
    "sim_probes",
)
"""Study modules, in the order they run."""


def _digest_paths(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(str(path.relative_to(ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


@functools.cache
def _shared_digest() -> str:
    """Digest of what every study reads: the library (code, templates, style, manifest) and the specs."""
    library = [p for p in (ROOT / "multiverse").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    specs = list((ROOT / "specs").rglob("*.yaml"))
    return _digest_paths(library + specs + [EXPERIMENTS / "_common.py"])


def _inputs_digest(study: str) -> str:
    own = sorted(EXPERIMENTS.glob(f"{study}*.yaml")) + [EXPERIMENTS / f"{study}.py"]
    own += sorted(p for p in EXPERIMENTS.glob(f"{study}_logs/*") if p.is_file())  # committed input logs
    return _digest_paths(own) + _shared_digest()


def run_study(study: str, *, data_dir: Path) -> dict:
    """Run one study unless its stamp shows it is up to date; return its numbers."""
    out_dir = RESULTS / study
    stamp = out_dir / "stamp.json"
    digest = _inputs_digest(study)
    if stamp.exists():
        stored = json.loads(stamp.read_text())
        if stored.get("digest") == digest:
            print(f"[{study}] up to date", flush=True)
            return stored["numbers"]
    print(f"[{study}] running", flush=True)
    start = time.perf_counter()
    out_dir.mkdir(parents=True, exist_ok=True)
    entry = load_study(study).main
    offered = {"out_dir": out_dir, "data_dir": data_dir, "cache_dir": CACHE, "figures_dir": FIGURES}
    accepted = inspect.signature(entry).parameters
    takes_all = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
    numbers = entry(**{k: v for k, v in offered.items() if takes_all or k in accepted})
    wall = time.perf_counter() - start
    stamp.write_text(json.dumps({"digest": digest, "numbers": numbers, "wall_s": wall}, indent=2, sort_keys=True))
    print(f"[{study}] done in {wall:.1f} s", flush=True)
    return numbers


def fetch_data() -> Path:
    """Fill the local data folder from the mirror (or the pinned upstream), verified."""
    from multiverse import data

    mirror = os.environ.get("MULTIVERSE_DATA_MIRROR") or None
    return data.fetch(mirror=mirror)


def flatten(values: dict | list, *, prefix: str) -> dict[str, object]:
    """Nested study results as dotted keys (``study.a.b``, list items ``study.a.0``), the form the
    paper's placeholders use; a pair key ``a|b`` becomes ``a_vs_b``."""
    flat: dict[str, object] = {}
    items = values.items() if isinstance(values, dict) else enumerate(values)
    for key, value in items:
        name = f"{prefix}.{str(key).replace('|', '_vs_')}"
        if isinstance(value, (dict, list)):
            flat.update(flatten(value, prefix=name))
        else:
            flat[name] = value
    return flat


def main() -> int:
    from threadpoolctl import threadpool_limits

    FIGURES.mkdir(exist_ok=True)
    data_dir = fetch_data()
    numbers: dict[str, object] = {}
    with threadpool_limits(limits=1):  # also where a BLAS was loaded before the variables above took effect
        for study in STUDIES:
            numbers.update(flatten(run_study(study, data_dir=data_dir), prefix=study))
    numbers = rounded(numbers)
    (PAPER / "numbers.json").write_text(json.dumps(numbers, indent=2, sort_keys=True) + "\n")
    sys.path.insert(0, str(PAPER))
    from pdf import render_pdf
    from render import render_file

    render_file(PAPER / "paper.src.md", PAPER / "numbers.json", PAPER / "paper.md")
    print(f"wrote {len(numbers)} numbers to paper/numbers.json and rendered paper/paper.md")
    if render_pdf(PAPER / "paper.md", PAPER / "paper.pdf") is not None:
        print("rendered paper/paper.pdf (figures as vector graphics)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
