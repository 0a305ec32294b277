"""A small offline run, its viewer site, and a headless Chromium to open it in."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from helpers import SCRIPT_TEXT

SPECS = Path(__file__).resolve().parents[2] / "specs"
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def tiny_review_experiment() -> dict:
    """Two roles (one with a contract), two offline targets, two model judges and the contract oracle."""
    return {
        "name": "review",
        "roles": ["tutor", "support"],
        "systems": {"careful": "sim/target-careful", "drifting": "sim/target-drifting"},
        "dims": {
            "user_sim": {"plain": "sim/user-plain"},
            "judge": {"strict": "sim/judge-strict", "lenient": "sim/judge-lenient",
                      "contract": {"deterministic": "contract"}},
            "condition": {"fuzz": {"horizon": 4, "search": "rolefuzzer"}},
        },
        "replicates": 1,
        "budget": {"rounds": 2, "conversations": 3},
        "specs": str(SPECS),
        "sim": {
            "seed": 7,
            "targets": {"careful": {"breach": {"*": 0.02}, "partial": {"*": 0.05}},
                        "drifting": {"breach": {"*": 0.15}, "partial": {"*": 0.1}, "escalation": 0.04}},
            "judges": {"strict": {"sensitivity": {"*": 0.95}, "specificity": {"*": 0.97}},
                       "lenient": {"sensitivity": {"*": 0.85}, "specificity": {"*": 0.99}, "leniency": 0.5,
                                   "malformed_rate": 0.05}},
            "users": {"plain": {"pressure": 1.5}},
        },
    }


def plant_script_text(run_dir: Path) -> str:
    """Put :data:`SCRIPT_TEXT` into the first user event of the run's first transcript; return its id.

    The store is content addressed, so the changed transcript is stored under
    its new id and the cube is pointed at it.
    """
    from multiverse.core.transcript import Event, Transcript, TranscriptStore
    from multiverse.cube.io import open_cube, save_cube

    cube = open_cube(run_dir)
    first = cube["transcript_id"].values.reshape(-1)[0]
    with TranscriptStore(run_dir / TranscriptStore.FILENAME) as store:
        old = store.get(str(first))
        events = list(old.events)
        at = next(i for i, e in enumerate(events) if e.actor == "user")
        events[at] = Event(events[at].turn, "user", SCRIPT_TEXT + " " + events[at].text, meta=events[at].meta)
        new = Transcript(old.role, tuple(events), old.scenario, old.ended)
        store.put([new])
    ids = cube["transcript_id"].values
    flat = ids.reshape(-1)
    flat[0] = new.id
    cube["transcript_id"].values = flat.reshape(ids.shape)
    save_cube(cube, run_dir / "cube.nc")
    _rerecord(run_dir, "cube.nc")
    return new.id


def _rerecord(run_dir: Path, name: str) -> None:
    """Record the planted store's new checksum in the run record, as if the run had written it."""
    import json

    from multiverse.cube.integrity import store_digest

    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    sha256, size, files = store_digest(run_dir / name)
    record["integrity"]["stores"][name] = {"sha256": sha256, "bytes": size, "files": files}
    (run_dir / "run.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")


@pytest.fixture(scope="session")
def review_run(tmp_path_factory) -> Path:
    """A run folder of :func:`tiny_review_experiment` with one transcript holding :data:`SCRIPT_TEXT`."""
    from multiverse._run import run

    root = tmp_path_factory.mktemp("review")
    path = root / "experiment.yaml"
    path.write_text(yaml.safe_dump(tiny_review_experiment(), sort_keys=False), encoding="utf-8")
    run(path, out=root / "run", cache=root / "cache")
    plant_script_text(root / "run")
    return root / "run"


@pytest.fixture(scope="session")
def review_site(review_run, tmp_path_factory) -> Path:
    """The viewer site of :func:`review_run` (figures included)."""
    from multiverse.view import write_site

    return write_site(review_run, tmp_path_factory.mktemp("site") / "site", n_boot=50).parent


def find_chromium() -> str | None:
    """The system Chromium's path, or ``None``."""
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def chromium():
    """A headless system Chromium driven by playwright (skips, saying why, when either is missing).

    Module-scoped: playwright's sync API keeps an event loop running in the main thread while it
    is open, and tests that run after the browser modules on the same worker call asyncio.run.
    """
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium on this machine: `make browser` installs Debian's chromium")
    profile = tempfile.mkdtemp(prefix="multiverse-chromium-")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=executable, headless=True, args=LAUNCH_ARGS,
            viewport={"width": 1280, "height": 900}, accept_downloads=True)
        yield context
        context.close()
    shutil.rmtree(profile, ignore_errors=True)


class Page:
    """A browser tab that records console errors and uncaught page errors."""

    def __init__(self, context):
        self.page = context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, path: Path, fragment: str = "") -> None:
        self.page.goto(path.resolve().as_uri() + fragment)
        self.page.wait_for_load_state("load")


@pytest.fixture
def tab(chromium):
    """A fresh tab; the test fails if the page logged a console error."""
    page = Page(chromium)
    yield page
    errors = list(page.errors)
    page.page.close()
    assert errors == [], f"console errors: {errors}"


@pytest.fixture(scope="session")
def screenshots(request, tmp_path_factory) -> Path:
    """Where screenshots go: ``--screenshots DIR``, else a folder under pytest's tmp path."""
    chosen = request.config.getoption("--screenshots")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
