"""Fuzzed experiment, role, contract and case files through every command, in-process.

Each example mutates a valid file (a value replaced by an odd one, a key
dropped or added, the text cut or garbled), writes it, and runs one command on
it through :func:`multiverse.cli.main`.  Whatever the input, the command must
end with a documented exit code and print no traceback and no internal error.
The suite runs a bounded number of examples; ``MULTIVERSE_FUZZ_EXAMPLES`` raises
it (``benchmarks/bench_fuzz_cli.py`` runs thousands).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import tempfile
from pathlib import Path

import yaml
from cli_helpers import DOCUMENTED_EXIT_CODES, SPECS, tiny
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiverse.cli import main

EXAMPLES = int(os.environ.get("MULTIVERSE_FUZZ_EXAMPLES", "60"))
CASE = {
    "case_id": "c1",
    "contract": {
        "version": "1",
        "initial_role": "triage",
        "action_vocabulary": ["lookup", "refund"],
        "roles": {"triage": {"allowed_actions": ["lookup"]}},
    },
    "transcript": [
        {"turn": 1, "actor": "user", "text": "hi"},
        {"turn": 2, "actor": "assistant", "observed_actions": ["refund"]},
    ],
}
SEEDS = {
    "experiment": tiny(),
    "role": yaml.safe_load((SPECS / "roles" / "support.yaml").read_text(encoding="utf-8")),
    "contract": yaml.safe_load((SPECS / "contracts" / "support.yaml").read_text(encoding="utf-8")),
    "case": CASE,
}
COMMANDS = {
    "experiment": [("validate", "{f}"), ("plan", "{f}", "--cache", "{d}/cache"),
                   ("run", "{f}", "--out", "{d}/out", "--cache", "{d}/cache", "--offline")],
    "role": [("validate", "{f}")],
    "contract": [("validate", "{f}")],
    "case": [("inspect", "{f}"), ("show", "{f}"), ("report", "{f}", "--out", "{d}/report"),
             ("cache", "audit", "--cache", "{d}")],
}

odd_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["../x", "/etc/passwd", "a/b", "r" * 5000, ".hidden", "sim/target-zz", "", " ", "*"]),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def _paths(value, prefix=()):
    """Every key path of nested mappings and lists."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, prefix + (i,))


@st.composite
def mutated(draw, kind):
    data = copy.deepcopy(SEEDS[kind])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "drop", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(odd_values)
        elif action == "drop":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(odd_values)
    text = json.dumps(data, allow_nan=True) if kind == "case" else yaml.safe_dump(data, sort_keys=False)
    mangle = draw(st.sampled_from(["none", "none", "cut", "garble"]))
    if mangle == "cut":
        text = text[: draw(st.integers(min_value=0, max_value=len(text)))]
    elif mangle == "garble":
        at = draw(st.integers(min_value=0, max_value=len(text)))
        text = text[:at] + draw(st.text(max_size=10)) + text[at:]
    return text


@st.composite
def command_inputs(draw):
    kind = draw(st.sampled_from(sorted(SEEDS)))
    return kind, draw(mutated(kind)), draw(st.sampled_from(COMMANDS[kind]))


def _run(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(command_inputs())
def test_fuzzed_files_through_every_command_end_with_a_documented_code_and_no_traceback(given_input):
    kind, text, command = given_input
    with tempfile.TemporaryDirectory(prefix="mv-fuzz-") as folder:
        path = Path(folder) / ("case.json" if kind == "case" else f"{kind}.yaml")
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        tempfile_dir = tempfile.tempdir
        tempfile.tempdir = folder  # tracebacks of internal errors land here, not in the system temp folder
        try:
            code, out, err = _run([a.format(f=path, d=folder) for a in command])
        finally:
            tempfile.tempdir = tempfile_dir
    assert code in DOCUMENTED_EXIT_CODES, (command, code, err[-2000:])
    assert "Traceback" not in out + err, err[-2000:]
    assert "internal error" not in err, err[-2000:]
    assert "could not be checked" not in out, out[-2000:]  # validate's report of an unexpected error in one file
