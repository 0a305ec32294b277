"""The offline world: ``sim/`` models that play every part of an evaluation with no network.

The world (:mod:`multiverse.sim.world`) answers requests to ``sim/target-*``,
``sim/judge-*``, ``sim/user-*``, ``sim/planner`` and ``sim/monitor`` models
deterministically from the request alone.  Its parameters come from an
experiment's ``sim:`` block (:mod:`multiverse.config.sim_block`); the players live in
:mod:`multiverse.sim.players`, the text they write in :mod:`multiverse.sim.text`
(phrase banks read from ``phrases.json`` beside it) and :mod:`multiverse.sim.read`
reads that text back.  :mod:`multiverse.sim.naming` holds the rule that maps a
model string to its ``sim:`` block entry.

Nothing outside the run layer needs this package: model access
(:mod:`multiverse.llm`) receives a world through ``Client(sim=...)``.
"""

from __future__ import annotations

from multiverse.sim.world import SimConfigError, SimReply, SimWorld, read_truth, register_with_litellm

__all__ = ["SimConfigError", "SimReply", "SimWorld", "read_truth", "register_with_litellm"]
