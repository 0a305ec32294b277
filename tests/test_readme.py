"""The README's code blocks run as written, so they cannot rot.

The shell blocks run in order, one command at a time, in a copy of the
repository (its ``.venv`` linked in, the data mirror placed at
``../shared/data`` as beside a checkout); then the Python block runs as a
script in the same copy.  A block that follows an HTML comment starting with
``not run by the tests:`` is left out (the set-up commands, which run the tests
themselves, and the live model, which compiles llama.cpp); a command whose
comment says ``exits N`` must exit N, every other one 0.  A fenced block
without a language is output the README quotes: each of its lines must be a
line some command printed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"(?:<!-- (?P<note>[^\n]*?) -->\n)?^```(?P<lang>[a-z]*)\n(?P<body>.*?)^```$", re.DOTALL | re.MULTILINE)
SKIP = "not run by the tests:"
NOT_COPIED = {".venv", ".git", ".cache", "results", "runs", "data", "build", "__pycache__", ".pytest_cache", ".hypothesis"}
TIMEOUT_S = 900


@dataclass(frozen=True)
class Block:
    lang: str
    body: str
    skipped: bool


def blocks(text: str = README) -> list[Block]:
    """Every fenced block of ``text`` in order, with its language and whether the tests leave it out."""
    return [Block(m["lang"], m["body"], (m["note"] or "").startswith(SKIP)) for m in FENCE.finditer(text)]


def commands(body: str) -> list[tuple[str, int]]:
    """The commands of a shell block with the exit code each must give (``exits N`` in its comment, else 0)."""
    found = []
    for line in body.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        expected = re.search(r"#.*\bexits (\d+)", line)
        found.append((line, int(expected.group(1)) if expected else 0))
    return found


def test_the_readme_has_the_blocks_the_tests_run():
    found = blocks()
    assert [b.lang for b in found if b.lang == "python" and not b.skipped] == ["python"]
    assert sum(b.lang == "bash" and not b.skipped for b in found) >= 2
    first_screen = README[: README.index("## A five-minute tour")]
    setup = [b for b in blocks(first_screen) if b.lang == "bash"]
    assert [c for b in setup for c, _ in commands(b.body)] == [
        "make run    # creates .venv from the hash-locked requirements, runs the main job offline",
        "make test   # the whole test suite (and the import-layer contract)",
    ]


@pytest.mark.parametrize(
    ("line", "code"),
    [
        pytest.param("multiverse inspect a.json   # one case (exits 1: a violation)", 1, id="stated-exit-code"),
        pytest.param("multiverse run x.yaml --out runs/x", 0, id="no-comment-means-zero"),
        pytest.param("multiverse cache audit   # what the cache holds", 0, id="comment-without-exit-code"),
    ],
)
def test_each_command_states_the_exit_code_it_must_give(line, code):
    assert commands(line) == [(line, code)]


def _copy(tmp: Path, mirror: Path) -> Path:
    """The repository without its outputs at ``tmp/repo``, its venv linked in and the mirror at ``tmp/shared/data``."""
    repo = tmp / "repo"
    shutil.copytree(ROOT, repo, ignore=lambda folder, names: [n for n in names if n in NOT_COPIED or n.endswith(".pyc")])
    (repo / ".venv").symlink_to(Path(sys.prefix))
    (tmp / "shared").mkdir()
    (tmp / "shared" / "data").symlink_to(mirror.resolve())
    return repo


@pytest.mark.slow
def test_the_readme_tour_runs_as_written(tmp_path, mirror):
    repo = _copy(tmp_path, mirror)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MULTIVERSE_")}
    env["MPLBACKEND"] = "Agg"
    printed: list[str] = []
    for block in blocks():
        if block.skipped or block.lang != "bash":
            continue
        for command, code in commands(block.body):
            done = subprocess.run(["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True,
                                  timeout=TIMEOUT_S)
            assert done.returncode == code, f"{command}\nexit {done.returncode}\n{done.stderr[-2000:]}"
            assert "Traceback" not in done.stderr, command
            printed += done.stdout.splitlines()
    python = next(b for b in blocks() if b.lang == "python" and not b.skipped)
    done = subprocess.run([str(repo / ".venv" / "bin" / "python"), "-c", python.body], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "RuntimeWarning: All-NaN" not in done.stderr and "exceeds the" not in done.stderr, done.stderr[-3000:]
    for quoted in (b for b in blocks() if b.lang == "" and not b.skipped):
        for line in quoted.body.splitlines():
            assert line in printed, f"the README quotes output no command printed: {line}"
    for folder in ("runs/quickstart-report", "runs/quickstart-site", "runs/quickstart-cases", "runs/labelled.nc"):
        assert (repo / folder).exists(), folder
    assert not list((repo / "runs" / "quickstart-report").glob("*.pdf")), "report writes PDF only when asked"
    inside = {p.name for p in (repo / "runs" / "quickstart").iterdir()}
    assert not inside & {"report", "site", "cases"}, "the tour wrote inside the run folder"
