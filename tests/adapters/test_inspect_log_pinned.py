"""The project's reader of inspect_ai logs pinned against inspect_ai's own (``read_eval_log``, ``value_to_float``,
its epoch reducers) on logs inspect_ai writes in both its formats, with failed samples, partial credit and
dict-valued scorers; and the committed logs checked to be what inspect_ai still writes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="inspect_ai is an optional extra: 'make inspect' installs it")

from adapter_fixtures import INSPECT_LOGS, INSPECT_MOCK, inspect_json_log  # noqa: E402
from inspect_ai.log import EvalError, read_eval_log, write_eval_log  # noqa: E402
from inspect_ai.scorer import (  # noqa: E402
    at_least,
    max_score,
    mean_score,
    median_score,
    mode_score,
    pass_at,
    value_to_float,
)
from tiny_experiments import load_study  # noqa: E402

from multiverse.adapters import inspect_log  # noqa: E402
from multiverse.adapters.inspect_log import _read, log_metrics, reduce_epochs  # noqa: E402
from multiverse.core import schema as S  # noqa: E402
from multiverse.core.transcript import Action, Event  # noqa: E402
from multiverse.testing.inspect_mock import write_mock_logs  # noqa: E402

REDUCERS = {"mean": mean_score(), "median": median_score(), "mode": mode_score(), "max": max_score(),
            "pass_at_2": pass_at(2), "at_least_2": at_least(2)}
STUDY_LOGS = Path(__file__).parents[2] / "experiments" / "inspect_mockllm_logs"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """Logs inspect_ai writes now, as the committed test logs were written."""
    return write_mock_logs(tmp_path_factory.mktemp("fresh"), **INSPECT_MOCK)


@pytest.fixture(scope="module")
def logs(fresh, tmp_path_factory):
    """Every log to pin, by name: the fresh ones, inspect_ai's .json and edited rewrites of the careful one, and the
    careful one as a version-1 log (one ``score`` per sample, the ``grader`` one: inspect_ai names it after the
    first result score, ``includes``), with and without its results."""
    folder = tmp_path_factory.mktemp("variants")
    found = {path.name: path for path in fresh}
    log = read_eval_log(str(fresh[0]))
    write_eval_log(log, str(folder / "careful.json"), format="json")
    found["careful.json"] = folder / "careful.json"
    log.status = "error"
    log.samples[0].error = EvalError(message="RuntimeError('the tool crashed')", traceback="", traceback_ansi="")
    log.samples[0].scores = None
    del log.samples[1].scores["grader"]
    for sample in log.samples[2:6]:
        sample.scores["grader"].value = "P"
    log.samples[6].scores["includes"].value = "N"
    for suffix in ("eval", "json"):
        write_eval_log(log, str(folder / f"edited.{suffix}"), format=suffix)
        found[f"edited.{suffix}"] = folder / f"edited.{suffix}"
    found.update({f"study/{path.name}": path for path in sorted(STUDY_LOGS.glob("*.eval"))})
    for name, keep_results in (("version1.json", True), ("version1_no_results.json", False)):
        found[name] = inspect_json_log(fresh[0], folder / name, edit=lambda data, keep=keep_results: _to_version_1(data, keep))
    return found


def _to_version_1(log: dict, keep_results: bool) -> None:
    log["version"] = 1
    for sample in log["samples"]:
        sample["score"] = sample.pop("scores")["grader"]
    if not keep_results:
        del log["results"]


def _inspects_events(messages) -> tuple[Event, ...]:
    """inspect_ai's chat messages as events, read through inspect_ai's own message objects."""
    events = []
    for number, message in enumerate(messages, start=1):
        meta, actions = {}, ()
        if message.role == "assistant":
            actions = tuple(Action(call.function, dict(call.arguments or {})) for call in message.tool_calls or ())
            if message.model:
                meta["model"] = message.model
        elif message.role == "tool":
            meta = {"function": message.function or "", "tool_call_id": message.tool_call_id or ""}
            if message.error is not None:
                meta["error"] = message.error.message
        actor = message.role if message.role in S.ACTORS else "system"
        events.append(Event(turn=number, actor=actor, text=message.text or "", actions=actions, meta=meta))
    return tuple(events)


def _as_inspect_reads(path: Path) -> tuple[str, list[tuple]]:
    log = read_eval_log(str(path))
    return log.status, [
        (log.eval.model, log.eval.task, int(s.epoch), str(s.id), _inspects_events(s.messages),
         s.target if isinstance(s.target, str) else list(s.target),
         {name: score.value for name, score in (s.scores or {}).items()}, s.error is not None)
        for s in log.samples]


def _as_we_read(path: Path) -> tuple[str, list[tuple]]:
    warnings: list[str] = []
    samples = _read([path], tasks="role", warnings=warnings)
    status = warnings[0].split("log status ")[1].split("'")[1] if warnings else "success"
    return status, [(s.system, s.task, s.epoch, s.sample_id, s.transcript.events, s.transcript.scenario["target"],
                     s.scores, s.failed) for s in samples]


@pytest.mark.parametrize("name", ["careful.eval", "hasty.eval", "careful.json", "edited.eval", "edited.json",
                                  "study/careful.eval", "study/hasty.eval", "version1.json", "version1_no_results.json"])
def test_every_field_the_adapter_maps_equals_inspects_reading(logs, name):
    ours, theirs = _as_we_read(logs[name]), _as_inspect_reads(logs[name])
    assert ours[0] == theirs[0], "status"
    assert len(ours[1]) == len(theirs[1]) > 0
    for mine, inspects in zip(ours[1], theirs[1], strict=True):
        assert mine == inspects, mine[:4]


@pytest.mark.parametrize("name", ["careful.eval", "edited.eval", "edited.json"])
def test_value_is_inspects_value_to_float(logs, name):
    cube = inspect_log(logs[name])
    to_float = value_to_float()
    log = read_eval_log(str(logs[name]))
    ids = cube["sample_id"].values.tolist()
    checked = 0
    for sample in log.samples:
        for scorer, score in (sample.scores or {}).items():
            values = score.value if isinstance(score.value, dict) else {scorer: score.value}
            for key, value in values.items():
                judge = scorer if key == scorer else f"{scorer}/{key}"
                cell = cube["value"].sel(system=log.eval.model, replicate=sample.epoch - 1, judge=judge)
                assert cell.squeeze(drop=True).isel(item=ids.index(str(sample.id))).item() == to_float(value)
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("name", ["careful.eval", "careful.json", "edited.eval", "study/hasty.eval"])
def test_log_metrics_are_the_results_inspect_reads(logs, name):
    log = read_eval_log(str(logs[name]))
    theirs = [(log.eval.model, log.eval.task, score.name if score.name == score.scorer else f"{score.scorer}/{score.name}",
               score.reducer, metric.name, metric.value) for score in log.results.scores for metric in score.metrics.values()]
    ours = log_metrics(logs[name])
    assert list(ours[["system", "task", "judge", "reducer", "metric", "value"]].itertuples(index=False, name=None)) == theirs


def test_epoch_mean_equals_the_logs_reductions(logs):
    cube = inspect_log([logs["careful.eval"], logs["hasty.eval"]])
    reduced = reduce_epochs(cube, "mean")
    checked = 0
    for name in ("careful.eval", "hasty.eval"):
        log = read_eval_log(str(logs[name]))
        for reduction in log.reductions:
            for sample in reduction.samples:
                item = cube["sample_id"].values.tolist().index(sample.sample_id)
                values = sample.value if isinstance(sample.value, dict) else {reduction.scorer: sample.value}
                for key, value in values.items():
                    judge = key if key == reduction.scorer else f"{reduction.scorer}/{key}"
                    ours = reduced.sel(system=log.eval.model, judge=judge).squeeze(drop=True).isel(item=item).item()
                    assert ours == value, (judge, sample.sample_id)
                    checked += 1
    assert checked == 2 * 6 * 5


@pytest.mark.parametrize("reducer", list(REDUCERS))
def test_every_epoch_reducer_equals_inspects(logs, reducer):
    cube = inspect_log(logs["careful.eval"])
    reduced = reduce_epochs(cube, reducer)
    log = read_eval_log(str(logs["careful.eval"]))
    for judge in ("includes", "grader", "quality"):
        by_sample: dict[str, list] = {}
        for sample in log.samples:
            by_sample.setdefault(str(sample.id), []).append(sample.scores[judge])
        for sample_id, scores in by_sample.items():
            want = REDUCERS[reducer](scores).value
            want = {"C": 1.0, "I": 0.0}.get(want, want)
            item = cube["sample_id"].values.tolist().index(sample_id)
            got = reduced.sel(system=log.eval.model, judge=judge).squeeze(drop=True).isel(item=item).item()
            assert got == pytest.approx(float(want), abs=0), (reducer, judge, sample_id)


def _samples_and_scores(path: Path) -> list[tuple]:
    """What a regenerated log must repeat: every sample, message and score (tool call ids are random uuids)."""
    _, samples = _as_we_read(path)
    blank = [tuple(dataclasses.replace(e, meta={k: v for k, v in e.meta.items() if k != "tool_call_id"}) for e in s[4])
             for s in samples]
    return [s[:4] + (events,) + s[5:] for s, events in zip(samples, blank, strict=True)]


def test_the_committed_test_logs_are_what_inspect_writes(fresh):
    assert sorted(p.name for p in fresh) == sorted(p.name for p in INSPECT_LOGS.glob("*.eval"))
    for path in fresh:
        assert _samples_and_scores(path) == _samples_and_scores(INSPECT_LOGS / path.name), path.name


def test_the_committed_study_logs_are_what_inspect_writes(tmp_path):
    study = load_study("inspect_mockllm")
    written = study.write_logs(tmp_path)
    assert [p.name for p in written] == ["careful.eval", "hasty.eval"]
    for path in written:
        assert _samples_and_scores(path) == _samples_and_scores(STUDY_LOGS / path.name), path.name
        header = read_eval_log(str(path), header_only=True)
        assert (header.eval.dataset.samples, header.eval.config.epochs) == (study.SAMPLES, study.EPOCHS)
