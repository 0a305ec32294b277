"""Signals held over a step: deferred, then acted on as they would have been."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from multiverse.core.process import signals_held


def test_ctrl_c_inside_the_block_is_raised_when_it_ends_not_before(ctrl_c_raises):
    steps = []
    with pytest.raises(KeyboardInterrupt), signals_held():
        os.kill(os.getpid(), signal.SIGINT)
        steps.append("after the signal")
    assert steps == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_python_handler_in_force_gets_the_held_signal_once():
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda number, frame: seen.append(number))
    try:
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            assert seen == []
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_outside_the_main_thread_the_block_just_runs(ctrl_c_raises):
    ran = []

    def body():
        with signals_held():
            ran.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert ran == [signal.default_int_handler]


def test_a_handler_set_outside_python_is_put_back_as_the_default(monkeypatch):
    installed = []

    def record(signum, handler):  # nothing is installed: the process keeps its handlers
        installed.append((signum, handler))
        return None

    monkeypatch.setattr(signal, "signal", record)
    with signals_held():
        pass
    assert installed[2:] == [(signal.SIGINT, signal.SIG_DFL), (signal.SIGTERM, signal.SIG_DFL)]
