"""Campaigns in the offline world through the real client and a temporary cache."""

import asyncio

import pytest

from multiverse.config.specs import load_role
from multiverse.core.choices import Budget, Condition, ModelSpec
from multiverse.judge.model import ModelJudge
from multiverse.llm import Client
from multiverse.rollout import rollout
from multiverse.sim import SimWorld

DEFAULT_SIM = {"targets": {"a": {}}, "judges": {"j": {}}, "users": {"plain": {}}}


def run_campaign(cache, role_id, search, *, rounds=8, conversations=30, horizon=8, items=None, sim=None,
                 replicate=0, client_options=None, pressure=1.0, planner="sim/planner"):
    """Run one campaign with a fresh cache in ``cache``; returns ``(role, conversations, client)``."""
    client = Client(cache=cache, sim=SimWorld.from_config(sim or DEFAULT_SIM), **(client_options or {}))
    role = load_role(role_id)
    conversations = asyncio.run(rollout(
        client, role=role, system=ModelSpec("sim/target-a"), user_sim=ModelSpec("sim/user-plain"),
        user_label="plain", condition=Condition(horizon=horizon, search=search, pressure=pressure),
        replicate=replicate, items=items, budget=None if items else Budget(rounds, conversations),
        planner=ModelSpec(planner), monitor=ModelSpec("sim/monitor"), judge=ModelJudge(ModelSpec("sim/judge-j")),
    ))
    return role, conversations, client


@pytest.fixture(scope="session")
def campaign_runner():
    """:func:`run_campaign` itself, for fixtures that pick their own cache folders."""
    return run_campaign


@pytest.fixture
def campaign(tmp_path):
    """``campaign(role_id, search, **options)``: :func:`run_campaign` with a fresh cache per call."""
    counter = iter(range(1_000_000))

    def run(role_id, search, **options):
        return run_campaign(tmp_path / f"cache{next(counter)}", role_id, search, **options)

    return run
