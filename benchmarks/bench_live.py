"""The live local-model campaign in numbers: ``python -m benchmarks.bench_live [--prefix-study]``.

Reads what ``make test-live`` leaves in ``runs/live`` (the run folder, the rerun
folder and the llama.cpp server's log) and prints wall time, tokens per second,
calls and tokens per purpose, parse rates with and without structured output,
the prefix reuse the server achieved, and an estimate for a paper-size campaign.
``--prefix-study`` also measures what reusing a conversation's prefix saves per
judgment: the judge requests of a few finished conversations are sent to a fresh
server twice, once each after an unrelated prompt (the prefix is lost, as when
other traffic interleaves) and once in turn order (the previous turn's prompt
is a prefix of the next).  Results are recorded in ``benchmarks/live.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
EVAL = re.compile(r"^\S*\s*eval time =\s*([\d.]+) ms /\s*(\d+) runs", re.MULTILINE)
PREFIX = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
PAPER_TURNS = 8 * 30 * 8
"""Assistant turns of a paper-size campaign cell: 8 rounds x 30 conversations x 8 turns."""
PAPER_HORIZON = 8
"""Turns of a paper-size conversation: a judge prompt grows with the conversation, so a turn of
a longer conversation costs more; the extrapolation scales by the ratio of horizons."""


def server_log_stats(text: str) -> dict[str, float]:
    """Token counts and rates from llama.cpp's per-request timing lines."""
    prompt = [(float(ms), int(n)) for ms, n in PROMPT_EVAL.findall(text)]
    generated = [(float(ms), int(n)) for ms, n in EVAL.findall(text)]
    reused = [(int(hit), int(rest)) for hit, rest in PREFIX.findall(text)]
    prompt_ms, prompt_tokens = sum(ms for ms, _ in prompt), sum(n for _, n in prompt)
    gen_ms, gen_tokens = sum(ms for ms, _ in generated), sum(n for _, n in generated)
    return {
        "requests": len(prompt),
        "prompt_tokens_evaluated": prompt_tokens,
        "prompt_tokens_per_s": prompt_tokens / (prompt_ms / 1000) if prompt_ms else float("nan"),
        "generated_tokens": gen_tokens,
        "generated_tokens_per_s": gen_tokens / (gen_ms / 1000) if gen_ms else float("nan"),
        "prefix_tokens_reused": sum(hit for hit, _ in reused),
        "prefix_hits": len(reused),
    }


def parse_rates(run_dir: Path) -> dict[str, dict[str, float]]:
    """Per model judge: replies (assistant turns asked about), parsed replies, share parsed."""
    from multiverse.cube.io import open_cube

    cube = open_cube(run_dir)
    out = {}
    for judge in cube["judge"].values.tolist():
        first = cube["severity"].sel(judge=judge).isel(principle=0)
        asked, parsed = int((first != -2).sum()), int((first >= 0).sum())
        out[str(judge)] = {"replies": asked, "parsed": parsed, "share": parsed / asked if asked else float("nan")}
    return out


def campaign_numbers(folder: Path) -> dict[str, Any]:
    """Everything measured from a ``make test-live`` folder."""
    import yaml

    info = json.loads((folder / "run" / "run.json").read_text())
    rerun = json.loads((folder / "rerun" / "run.json").read_text()) if (folder / "rerun").is_dir() else None
    log = folder / "server.log"
    purposes = info.get("purposes", {})
    per_call = {
        purpose: stats["prompt_tokens"] / stats["calls"] for purpose, stats in purposes.items() if stats.get("calls")
    }
    rates = parse_rates(folder / "run")
    turns = max(rate["replies"] for rate in rates.values()) if rates else 0
    experiment = yaml.safe_load((folder / "live_local.yaml").read_text())
    horizon = max(int(c.get("horizon", 1)) for c in experiment["dims"]["condition"].values())
    return {
        "wall_s": info["wall_s"],
        "rerun": None if rerun is None else {"wall_s": rerun["wall_s"], "calls": rerun["calls"]},
        "calls": info["calls"],
        "ended": info.get("ended"),
        "failures": info["failures"],
        "purposes": purposes,
        "prompt_tokens_per_call": per_call,
        "parse_rates": rates,
        "assistant_turns": turns,
        "server": server_log_stats(log.read_text(errors="replace")) if log.exists() else None,
        "user_replies": info.get("user_replies"),
        "leak_guard": info.get("leak_guard"),
        "response_format_fallbacks": info.get("response_format_fallbacks"),
        "paper_size_hours": info["wall_s"] / turns * PAPER_TURNS * PAPER_HORIZON / horizon / 3600 if turns else None,
    }


def prefix_study(folder: Path, *, conversations: int = 3) -> dict[str, Any]:
    """Seconds and evaluated prompt tokens per judgment without and with prefix reuse."""
    import yaml

    from multiverse.config.specs import load_role
    from multiverse.core.choices import ModelSpec
    from multiverse.core.transcript import TranscriptStore
    from multiverse.cube.io import open_cube
    from multiverse.judge.model import judge_request
    from multiverse.llm import Client, Request
    from multiverse.llm.local_server import LocalServer

    experiment = yaml.safe_load((folder / "live_local.yaml").read_text())
    judge = experiment["dims"]["judge"]["structured"]
    cube = open_cube(folder / "run")
    ended = cube["ended"].values.reshape(-1).astype(str)
    ids = [str(t) for t, e in zip(cube["transcript_id"].values.reshape(-1), ended) if t and e == "completed"]
    with TranscriptStore(folder / "run" / "transcripts.sqlite") as store:
        transcripts = [store.get(tid) for tid in dict.fromkeys(ids)][:conversations]
    role = load_role("tutor")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("cold", "warm"):
            log = Path(tmp) / f"{mode}.log"
            with LocalServer(log=log, verbose=True) as server, Client(cache=Path(tmp) / f"cache-{mode}") as client:
                spec = ModelSpec(
                    server.model,
                    api_base=server.url,
                    params=judge.get("params", {}),
                    response_format=judge.get("response_format"),
                    seed=judge.get("seed"),
                )
                seconds = []
                for t_index, transcript in enumerate(transcripts):
                    for turn in range(1, transcript.n_turns + 1):
                        if mode == "cold":
                            filler = ({"role": "user", "content": f"Say one word. ({t_index}.{turn})"},)
                            client.complete(Request(server.model, filler, api_base=server.url, params={"max_tokens": 1}))
                        started = time.perf_counter()
                        client.complete(judge_request(role, transcript, turn, spec=spec))
                        seconds.append(time.perf_counter() - started)
            stats = server_log_stats(log.read_text(errors="replace"))
            judgments = len(seconds)
            evaluated = stats["prompt_tokens_evaluated"]
            if mode == "cold":
                evaluated -= _filler_tokens(log.read_text(errors="replace"))
            results[mode] = {
                "judgments": judgments,
                "seconds_per_judgment": statistics.fmean(seconds) if seconds else float("nan"),
                "prompt_tokens_evaluated_per_judgment": evaluated / judgments if judgments else float("nan"),
            }
    return results


def _filler_tokens(text: str) -> int:
    """Prompt tokens of the one-word filler requests: every other request of a cold log, starting with the first."""
    counts = [int(n) for _, n in PROMPT_EVAL.findall(text)]
    return sum(counts[0::2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_live", description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default="runs/live", help="what make test-live left (default runs/live)")
    parser.add_argument("--prefix-study", action="store_true", help="also measure prefix reuse per judgment")
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    if not (folder / "run" / "run.json").exists():
        print(f"bench_live: no {folder / 'run' / 'run.json'}: run make test-live first", file=sys.stderr)
        return 2
    numbers = campaign_numbers(folder)
    if args.prefix_study:
        numbers["prefix_study"] = prefix_study(folder)
    print(json.dumps(numbers, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
