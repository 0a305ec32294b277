"""The shipped probe kinds: what each changes in what a model judge reads.

``verbosity: N``
    Every assistant reply the judge reads ends with ``N`` content-free
    sentences (:data:`multiverse.core.padding.PADDING`): longer, saying nothing new.
``paraphrase: <template>``
    The judge prompt reworded: one of the shipped paraphrases of ``judge_v1``
    (:data:`PARAPHRASES`), or a template file of one's own (a path ending in
    ``.txt``).  The paraphrases keep every instruction and the answer format;
    only the wording changes.  A judge with a template of its own is probed
    with the named template in its place.
``reveal: model | family``
    The judge is told which model wrote the replies (a system note before the
    conversation: "The assistant in this conversation is <model>."), or only
    its family (``gpt``, ``claude``, ``qwen``, ...): the self-preference probe.
``truncate: N``
    The judge sees only the last ``N`` events through each judged turn (the
    judged reply included) instead of the whole conversation so far.
``order: swap``
    On pairwise judges only (:mod:`multiverse.judge.pairwise`): the two
    replies shown in the other order (the judged system's first), each verdict
    read back in the comparison's own labels.

Each is registered in :data:`multiverse.core.probes.PROBE_KINDS` as a user's
kind would be; the first four probe ``model`` judges, the order probe
``pairwise`` judges.  A probed judge is the judge with the change applied,
through the same client and cache, so its requests are cached like every
judgment (and differ from the unprobed judge's, which is the point).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from multiverse.config.fields import FieldReader
from multiverse.core.judgment import JudgeContext, Judgment
from multiverse.core.padding import pad
from multiverse.core.probes import PROBE_KINDS, ProbeKind
from multiverse.core.transcript import Event, Transcript
from multiverse.judge.model import DEFAULT_TEMPLATE, TEMPLATE_DIR, ModelJudge

__all__ = [
    "ORDER",
    "PARAPHRASE",
    "PARAPHRASES",
    "REVEAL",
    "TRUNCATE",
    "VERBOSITY",
    "TransformingJudge",
    "model_family",
    "padded",
    "revealed",
]

PARAPHRASES: tuple[str, ...] = ("judge_v1_p1", "judge_v1_p2", "judge_v1_p3")
"""The shipped paraphrases of the packaged judge prompt ``judge_v1`` (in ``judge/templates``)."""
REVEALS: tuple[str, ...] = ("model", "family")
"""What the ``reveal`` probe tells the judge: the model string, or its family."""
MAX_PADDING = 32
"""Most padding sentences the verbosity probe adds to one reply."""


class TransformingJudge:
    """A model judge reading transcripts changed by ``transform(transcript, context)`` first.

    The judgments line up with the given transcripts: a transform changes what
    the judge reads (text, added notes), never which assistant turns there are.
    """

    def __init__(self, inner: ModelJudge, transform: Callable[[Transcript, JudgeContext], Transcript]):
        self.inner = inner
        self.transform = transform

    def __repr__(self) -> str:
        return f"TransformingJudge({self.inner!r}, {getattr(self.transform, '__name__', self.transform)!r})"

    async def judge(self, transcripts: Sequence[Transcript], *, roles: Sequence[Any], context: JudgeContext) -> list[Judgment]:
        """The inner judge's judgments of the transformed transcripts."""
        changed = [self.transform(t, context) for t in transcripts]
        return await self.inner.judge(changed, roles=roles, context=context)


class _Padded:
    """Pads every assistant reply with ``sentences`` padding sentences (picklable, unlike a closure)."""

    __name__ = "padded"

    def __init__(self, sentences: int):
        self.sentences = sentences

    def __call__(self, transcript: Transcript, context: JudgeContext) -> Transcript:
        return padded(transcript, self.sentences)


class _Revealed:
    """Tells the judge who wrote the replies (the model, or its family)."""

    __name__ = "revealed"

    def __init__(self, what: str):
        self.what = what

    def __call__(self, transcript: Transcript, context: JudgeContext) -> Transcript:
        model = getattr(context.system, "model", None)
        if not model:
            return transcript
        return revealed(transcript, model if self.what == "model" else model_family(model))


def padded(transcript: Transcript, sentences: int) -> Transcript:
    """``transcript`` with every assistant reply followed by ``sentences`` padding sentences."""
    events = tuple(replace(e, text=pad(e.text, sentences)) if e.actor == "assistant" else e for e in transcript.events)
    return replace(transcript, events=events, id="")


def revealed(transcript: Transcript, name: str) -> Transcript:
    """``transcript`` opened by a system note naming the assistant: ``The assistant in this conversation is <name>.``"""
    first = transcript.events[0].turn if transcript.events else 1
    note = Event(turn=first - 1, actor="system", text=f"The assistant in this conversation is {name}.")
    return replace(transcript, events=(note, *transcript.events), id="")


def model_family(model: str) -> str:
    """The family of a model string: the leading letters of its name after the provider.

    Examples
    --------
    >>> model_family("openai/gpt-4o-mini"), model_family("anthropic/claude-3-5-sonnet"), model_family("hosted_vllm/qwen2.5-7b")
    ('gpt', 'claude', 'qwen')
    """
    name = model.rsplit("/", 1)[-1]
    found = re.match(r"[A-Za-z]+", name)
    return found.group(0).lower() if found else name


# --- the kinds -----------------------------------------------------------------------


def _parse_sentences(value: Any, reader: FieldReader, field: str) -> int | None:
    return reader.integer(value, field, low=1, high=MAX_PADDING)


def _build_verbosity(sentences: int, model: Any) -> Any:
    return TransformingJudge(ModelJudge(model), _Padded(sentences))


def _parse_template(value: Any, reader: FieldReader, field: str) -> str | None:
    name = reader.string(value, field)
    if name is None or name.endswith(".txt"):
        return name
    known = sorted(p.stem for p in TEMPLATE_DIR.glob("judge_*.txt"))
    if name not in known:
        reader.problem(field, f"unknown judge template '{name}': expected one of {', '.join(known)} or a path ending in .txt")
        return None
    if name == DEFAULT_TEMPLATE:
        reader.problem(field, f"'{DEFAULT_TEMPLATE}' is the unprobed prompt: expected a paraphrase ({', '.join(PARAPHRASES)})")
        return None
    return name


def _build_paraphrase(template: str, model: Any) -> Any:
    return ModelJudge(replace(model, template=template))


def _parse_reveal(value: Any, reader: FieldReader, field: str) -> str | None:
    return reader.one_of(value, field, REVEALS, what="reveal")


def _build_reveal(what: str, model: Any) -> Any:
    return TransformingJudge(ModelJudge(model), _Revealed(what))


def _parse_events(value: Any, reader: FieldReader, field: str) -> int | None:
    return reader.integer(value, field, low=1, high=400)


def _build_truncate(events: int, model: Any) -> Any:
    return ModelJudge(model, context_events=events)


def _parse_order(value: Any, reader: FieldReader, field: str) -> str | None:
    return reader.one_of(value, field, ("swap",), what="order")


def _build_order(value: str, spec: Any) -> Any:
    from multiverse.judge.pairwise import PairwiseJudge

    return PairwiseJudge(spec, swapped=True)


VERBOSITY = PROBE_KINDS.register("verbosity", ProbeKind("verbosity", parse=_parse_sentences, build=_build_verbosity))
PARAPHRASE = PROBE_KINDS.register("paraphrase", ProbeKind("paraphrase", parse=_parse_template, build=_build_paraphrase))
REVEAL = PROBE_KINDS.register("reveal", ProbeKind("reveal", parse=_parse_reveal, build=_build_reveal))
TRUNCATE = PROBE_KINDS.register("truncate", ProbeKind("truncate", parse=_parse_events, build=_build_truncate))
ORDER = PROBE_KINDS.register("order", ProbeKind("order", parse=_parse_order, build=_build_order, scale="pairwise"))
