"""Benchmark the model-call layer: cache lookups, HTTP throughput, import time.

Run ``python -m benchmarks.bench_llm [--entries N] [--requests N] [--write]``.

1. Cache lookup: median and 95th percentile of :meth:`Cache.get` on a cache of
   ``--entries`` (default 1,000,000) entries, for keys that are present.
2. Throughput against the loopback OpenAI-compatible server with 200 ms latency
   and 64 requests in flight: the :class:`Client` (cold cache, every call
   written) against bare ``litellm.acompletion`` under a semaphore of 64, in the
   same process, alternating rounds, the best round of each.
3. Import time: ``import multiverse`` against ``import xarray`` in fresh
   interpreters (medians of 11 interleaved pairs, CPU and wall time).

``--write`` stores the results as ``benchmarks/llm.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from multiverse.llm import Cache, CacheEntry, Client, Request


def bench_cache(entries: int, *, lookups: int = 20_000, seed: int = 0) -> dict[str, float]:
    """Fill a cache with ``entries`` entries and time lookups of random present keys."""
    with tempfile.TemporaryDirectory() as directory:
        cache = Cache(directory)
        text = "An assistant reply of a realistic length. " * 8
        versions = {"multiverse": "0.1.0", "litellm": "1.110.2", "python": platform.python_version()}
        keys = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(entries)]
        started = time.perf_counter()
        batch = 50_000
        for start in range(0, entries, batch):
            cache.put_many(
                [
                    (key, CacheEntry(model="openai/gpt-4o-mini", text=text, usage={"prompt_tokens": 50}, versions=versions))
                    for key in keys[start : start + batch]
                ]
            )
        fill_s = time.perf_counter() - started
        rng = random.Random(seed)
        sample = [keys[rng.randrange(entries)] for _ in range(lookups)]
        timings = []
        for key in sample:
            t0 = time.perf_counter_ns()
            entry = cache.get(key)
            timings.append(time.perf_counter_ns() - t0)
            assert entry is not None
        size = cache.audit()["size_bytes"]
        cache.close()
    timings.sort()
    return {
        "entries": entries,
        "fill_s": fill_s,
        "size_mb": size / 2**20,
        "median_ms": statistics.median(timings) / 1e6,
        "p95_ms": timings[int(0.95 * len(timings))] / 1e6,
    }


async def _bare(url: str, n: int, tag: str) -> float:
    from multiverse.llm.litellm_call import load_litellm

    litellm = load_litellm()
    semaphore = asyncio.Semaphore(64)

    async def one(i: int) -> None:
        async with semaphore:
            response = await litellm.acompletion(
                model="openai/loop",
                messages=[{"role": "user", "content": f"{tag} {i}"}],
                api_base=url,
                api_key="dummy",
                max_retries=0,
                timeout=30,
            )
            assert response.choices[0].message.content

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return n / (time.perf_counter() - started)


async def _layer(url: str, n: int, tag: str, cache_dir: str) -> float:
    client = Client(cache=cache_dir, concurrency=64, timeout_s=30)
    requests = [
        Request("openai/loop", ({"role": "user", "content": f"{tag} {i}"},), api_base=url, params={"api_key": "dummy"})
        for i in range(n)
    ]
    started = time.perf_counter()
    responses = await client.agather(requests)
    rate = n / (time.perf_counter() - started)
    assert all(r.ok and not r.cached for r in responses)
    client.cache.close()
    return rate


def bench_throughput(requests: int, *, rounds: int = 3) -> dict[str, float]:
    """Requests per second of bare litellm and of the client against a 200 ms server, 64 in flight.

    The server runs in its own process, so it does not compete with the client for the interpreter.
    """
    bare, layer = [], []
    server = subprocess.Popen(
        [sys.executable, "-m", "multiverse.testing.loopback", "--latency-s", "0.2"], stdout=subprocess.PIPE, text=True
    )
    try:
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as directory:

            async def run_all() -> None:
                await _bare(url, 64, "warm-up")
                for r in range(rounds):
                    bare.append(await _bare(url, requests, f"bare round {r}"))
                    layer.append(await _layer(url, requests, f"layer round {r}", directory))

            asyncio.run(run_all())
    finally:
        server.terminate()
        server.wait()
    return {
        "requests": requests,
        "ceiling_rps": 64 / 0.2,
        "bare_rps": max(bare),
        "layer_rps": max(layer),
        "ratio": max(layer) / max(bare),
    }


def _import_s(module: str) -> tuple[float, float]:
    code = (
        "import time; w, c = time.perf_counter(), time.process_time(); "
        f"import {module}; print(time.perf_counter() - w, time.process_time() - c)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def bench_import(*, repeats: int = 11) -> dict[str, float]:
    """Median import times (wall and CPU) of multiverse and of xarray in fresh interpreters, interleaved.

    Interleaving pairs each multiverse import with an xarray import made at
    nearly the same moment, so a change of machine load affects both alike;
    CPU time is reported beside wall time because it barely moves with load.
    """
    _import_s("multiverse"), _import_s("xarray")  # warm the file cache
    pairs = [(_import_s("multiverse"), _import_s("xarray")) for _ in range(repeats)]
    result = {"load_average": os.getloadavg()[0]}
    for i, clock in enumerate(("wall", "cpu")):
        result[f"multiverse_{clock}_s"] = statistics.median(p[0][i] for p in pairs)
        result[f"xarray_{clock}_s"] = statistics.median(p[1][i] for p in pairs)
        result[f"difference_{clock}_s"] = statistics.median(p[0][i] - p[1][i] for p in pairs)
    return result


def report(cache: dict, throughput: dict, imports: dict) -> str:
    """The results as Markdown."""
    return f"""# Model-call layer benchmarks

`python -m benchmarks.bench_llm --write` on {platform.platform()}, Python {platform.python_version()},
{os.cpu_count()} CPUs, {time.strftime("%Y-%m-%d")}, load average {imports['load_average']:.1f} when it started
(other jobs shared the machine: absolute rates are low, the ratios are what the targets compare).

| measure | result | target |
| --- | --- | --- |
| cache lookup, median, {cache['entries']:,} entries | {cache['median_ms']:.4f} ms (p95 {cache['p95_ms']:.4f} ms) | <= 0.5 ms |
| client throughput / bare `litellm.acompletion`, 200 ms server, 64 in flight, same run | {throughput['ratio']:.1%} ({throughput['layer_rps']:.0f} vs {throughput['bare_rps']:.0f} req/s; ceiling {throughput['ceiling_rps']:.0f}) | >= 80% |
| `import multiverse` - `import xarray`, CPU time, median of paired differences | {imports['difference_cpu_s'] * 1000:+.0f} ms ({imports['multiverse_cpu_s']:.3f} s vs {imports['xarray_cpu_s']:.3f} s) | <= 150 ms |
| the same, wall time | {imports['difference_wall_s'] * 1000:+.0f} ms ({imports['multiverse_wall_s']:.3f} s vs {imports['xarray_wall_s']:.3f} s) | <= 150 ms |

Details: the cache of {cache['entries']:,} entries took {cache['fill_s']:.1f} s to fill and holds
{cache['size_mb']:.0f} MB; lookups are of random present keys through `Cache.get` (SQLite primary-key
index, one thread-local connection).  Throughput rounds send {throughput['requests']} distinct requests each to
the loopback server; the client's rounds start from a cold cache, so every call is written (group
commit) before it is reported.  Import times are medians of 11 interleaved pairs of fresh interpreters.

Raw: `{json.dumps({"cache": cache, "throughput": throughput, "import": imports}, sort_keys=True)}`
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000, help="cache entries (default 1,000,000)")
    parser.add_argument("--requests", type=int, default=640, help="requests per throughput round (default 640)")
    parser.add_argument("--write", action="store_true", help="write benchmarks/llm.md")
    args = parser.parse_args(argv)
    imports = bench_import()
    print(f"import: {imports}", flush=True)
    cache = bench_cache(args.entries)
    print(f"cache: {cache}", flush=True)
    throughput = bench_throughput(args.requests)
    print(f"throughput: {throughput}", flush=True)
    text = report(cache, throughput, imports)
    if args.write:
        Path(__file__).with_name("llm.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
