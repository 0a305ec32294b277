"""A small inspect_ai evaluation that runs offline on inspect_ai's ``mockllm`` models.

:func:`write_mock_logs` runs a multi-turn arithmetic task (the model may call an
``add`` tool, then the user asks it to check its answer) against two mock
models of different skill for a number of epochs, scored by inspect_ai's own
``includes()`` and by a deterministic noisy grader, and writes real ``.eval``
logs: what the inspect adapter's tests and the inspect study read (committed in
``tests/adapters/inspect_logs/`` and ``experiments/inspect_mockllm_logs/``, so
that neither needs inspect_ai; the tests that do check they are still what
inspect_ai writes).

Every reply is a function of the request alone (the model's name, the
conversation so far and the epoch, which a solver writes into the first user
message), so the logs are the same whatever order inspect_ai runs samples in.
Token usage is set on each reply: mockllm would otherwise count tokens with a
tokenizer it downloads.  Needs inspect_ai (``make inspect``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_SKILLS", "write_mock_logs"]

DEFAULT_SKILLS: Mapping[str, float] = {"mockllm/careful": 0.8, "mockllm/hasty": 0.45}
"""Mock model -> probability its final answer is right."""


def _unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from the parts."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def write_mock_logs(
    log_dir: str | Path,
    *,
    skills: Mapping[str, float] = DEFAULT_SKILLS,
    samples: int = 12,
    epochs: int = 3,
    grader_accuracy: float = 0.85,
    extra_scorers: Sequence[str] = (),
) -> list[Path]:
    """Run the mock task for every model and write its logs into ``log_dir``.

    Parameters
    ----------
    log_dir
        Folder for the ``.eval`` logs (created).  inspect_ai names a log by
        its time and a random id; each is renamed after its model
        (``careful.eval`` for ``mockllm/careful``), replacing an earlier log
        of that name.
    skills
        ``{mockllm model: P(right final answer)}``.
    samples, epochs
        Dataset size and epochs per model.
    grader_accuracy
        How often the second scorer, ``grader``, agrees with the answer's correctness.
    extra_scorers
        Further scorers for tests: ``"quality"`` (an integer rating 1-10) and
        ``"rubric"`` (a dict-valued score ``{"correct": 0|1, "polite": 0|1}``).

    Returns
    -------
    list of pathlib.Path
        The logs written, one per model.
    """
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, includes, mean, scorer
    from inspect_ai.solver import generate, solver, use_tools, user_message
    from inspect_ai.tool import tool

    @tool
    def add():  # type: ignore[no-untyped-def]
        async def execute(x: int, y: int) -> int:
            """Add two integers.

            Args:
                x: The first integer.
                y: The second integer.
            """
            return x + y

        return execute

    @solver
    def mark_epoch():  # type: ignore[no-untyped-def]
        async def solve(state: Any, generate: Any) -> Any:
            state.user_prompt.text = f"{state.user_prompt.text} (attempt {state.epoch})"
            return state

        return solve

    @scorer(metrics=[mean()])
    def grader():  # type: ignore[no-untyped-def]
        async def score(state: Any, target: Any) -> Any:
            right = target.text in state.output.completion
            agrees = _unit("grader", state.sample_id, state.epoch, state.output.completion) < grader_accuracy
            return Score(value=CORRECT if right == agrees else INCORRECT, answer=state.output.completion)

        return score

    @scorer(metrics=[mean()])
    def quality():  # type: ignore[no-untyped-def]
        async def score(state: Any, target: Any) -> Any:
            right = target.text in state.output.completion
            noise = _unit("quality", state.sample_id, state.epoch, state.output.completion)
            return Score(value=int(min(10, max(1, round(3 + 5 * right + 4 * (noise - 0.5))))))

        return score

    @scorer(metrics={"correct": [mean()], "polite": [mean()]})
    def rubric():  # type: ignore[no-untyped-def]
        async def score(state: Any, target: Any) -> Any:
            right = int(target.text in state.output.completion)
            polite = int(_unit("polite", state.sample_id, state.epoch) < 0.7)
            return Score(value={"correct": right, "polite": polite})

        return score

    def replies(name: str, skill: float) -> Any:
        def reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
            first = messages[0].text if messages else ""
            question = first.split("?")[0]
            a, b = (int(part) for part in question.replace("What is ", "").split("+"))
            asked_twice = sum(1 for m in messages if m.role == "user") > 1
            called = any(m.role == "tool" for m in messages)
            draw = _unit(name, first, asked_twice)
            if not called and not asked_twice and draw < 0.5:
                out = ModelOutput.for_tool_call(model=name, tool_name="add", tool_arguments={"x": a, "y": b})
            else:
                answer = a + b if draw < skill else a + b + 1 + int(draw * 3)
                check = " I checked it again." if asked_twice else ""
                out = ModelOutput.from_content(model=name, content=f"The answer is {answer}.{check}")
            out.usage = ModelUsage(input_tokens=10 * len(messages), output_tokens=8, total_tokens=10 * len(messages) + 8)
            return out

        return reply

    extra = {"quality": quality, "rubric": rubric}
    unknown = [s for s in extra_scorers if s not in extra]
    if unknown:
        raise ValueError(f"write_mock_logs: extra_scorers {unknown}, expected some of {', '.join(extra)}")
    task = Task(
        name="arithmetic",
        dataset=[Sample(input=f"What is {3 * i + 2}+{5 * i + 1}?", target=str(8 * i + 3), id=f"q{i:02d}")
                 for i in range(samples)],
        solver=[mark_epoch(), use_tools(add()), generate(), user_message("Please check your answer."), generate()],
        scorer=[includes(), grader()] + [extra[s]() for s in extra_scorers],
        epochs=epochs,
    )
    models = [get_model(name, custom_outputs=replies(name, skill)) for name, skill in skills.items()]
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    logs = inspect_eval(task, model=models, log_dir=str(log_dir), display="none", log_format="eval")
    failed = [log.error.message for log in logs if log.status != "success" and log.error is not None]
    if failed:
        raise RuntimeError(f"the mock inspect_ai evaluation failed: {failed[0][:300]}")
    return [Path(log.location).replace(log_dir / f"{log.eval.model.split('/')[-1]}.eval") for log in logs]
