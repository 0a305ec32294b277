"""Credentials and model strings are checked without importing litellm, and agree with litellm's own answers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from multiverse.core.choices import ModelSpec
from multiverse.llm import credentials as C
from multiverse.llm.prices import model_table

ALL_NAMES = sorted({name for ways in C.REQUIREMENTS.values() for way in ways for name in way})


@pytest.fixture
def empty_env(monkeypatch):
    for name in ALL_NAMES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture(scope="module")
def litellm():
    from multiverse.llm.litellm_call import load_litellm

    return load_litellm()


@pytest.mark.parametrize("provider", sorted(C.REQUIREMENTS))
def test_each_provider_needs_what_litellm_asks_for(provider, empty_env, litellm):
    model = f"{provider}/some-model"
    assert litellm.get_llm_provider(model=model)[1] == provider
    expected = litellm.validate_environment(model=model)["missing_keys"]
    ours = C.missing_credentials(ModelSpec(model))
    assert ours and set(ours) <= set(expected)  # litellm names every alternative, this module the first way
    for way in C.REQUIREMENTS[provider]:
        for name in way:
            empty_env.setenv(name, "x")
        assert C.missing_credentials(ModelSpec(model)) == ()
        assert litellm.validate_environment(model=model)["keys_in_environment"]
        for name in way:
            empty_env.delenv(name)


@pytest.mark.parametrize("provider", sorted(C.KEYLESS_PROVIDERS))
def test_self_hosted_providers_need_no_variable(provider, empty_env, litellm):
    model = f"{provider}/some-model"
    assert litellm.get_llm_provider(model=model, api_base="http://127.0.0.1:9/v1")[1] == provider
    assert C.missing_credentials(ModelSpec(model, api_base="http://127.0.0.1:9/v1")) == ()
    assert C.model_problem(ModelSpec(model, api_base="http://127.0.0.1:9/v1")) is None


def bare_names():
    """One bare model name of every provider in litellm's table (the first listed), and two names it lacks."""
    first = {}
    for name, entry in model_table().items():
        if "/" not in name and isinstance(entry, dict) and entry.get("litellm_provider") and name != "sample_spec":
            first.setdefault(entry["litellm_provider"], name)
    return sorted(first.values()) + ["gpt4o-mini", "claude-three-haiku"]


@pytest.mark.parametrize("name", bare_names())
def test_a_bare_model_name_is_routed_as_litellm_routes_it(name, empty_env, litellm):
    try:
        routed = litellm.get_llm_provider(model=name)[1]
    except Exception:  # noqa: BLE001  litellm routes it nowhere
        routed = None
    assert (C.model_problem(ModelSpec(name)) is None) == (routed is not None)
    if routed is not None:
        expected = litellm.validate_environment(model=name)["missing_keys"]
        assert set(C.missing_credentials(ModelSpec(name))) <= set(expected)
        assert bool(C.missing_credentials(ModelSpec(name))) == bool(expected)


def test_own_credentials_and_api_base_lift_the_requirement(empty_env):
    assert C.missing_credentials(ModelSpec("openai/gpt-4o-mini", params={"api_key": "k"})) == ()
    assert C.missing_credentials(ModelSpec("openai/gpt-4o-mini", api_base="http://:tok-1@127.0.0.1:9/v1")) == ()
    assert C.missing_credentials(ModelSpec("ollama/llama3", api_base="http://127.0.0.1:9")) == ()
    assert C.missing_credentials(ModelSpec("ollama/llama3")) == ("OLLAMA_API_BASE",)
    assert C.missing_credentials(ModelSpec("azure/gpt-4o", api_base="https://x.example/")) == (
        "AZURE_API_VERSION", "AZURE_API_KEY")


def test_require_callable_names_every_problem_in_one_line(empty_env):
    with pytest.raises(C.MissingCredentials) as missing:
        C.require_callable([ModelSpec("openai/gpt-4o-mini"), ModelSpec("azure/gpt-4o"), ModelSpec("sim/target-a")])
    message = str(missing.value)
    assert "\n" not in message
    assert "openai/gpt-4o-mini needs OPENAI_API_KEY" in message
    assert "azure/gpt-4o needs AZURE_API_BASE and AZURE_API_VERSION and AZURE_API_KEY" in message
    with pytest.raises(C.ModelNotCallable, match="gpt4o-mini: litellm knows no provider"):
        C.require_callable([ModelSpec("gpt4o-mini")])


def test_without_litellm_a_real_model_asks_for_the_live_extra(monkeypatch):
    monkeypatch.setattr(C, "litellm_installed", lambda: False)
    with pytest.raises(C.ModelNotCallable, match=r"openai/gpt-4o-mini is a real model: .*multiverse\[live\]"):
        C.require_callable([ModelSpec("openai/gpt-4o-mini")])
    C.require_callable([ModelSpec("sim/target-a")])


def test_checking_known_providers_does_not_import_litellm():
    code = (
        "import sys\n"
        "from multiverse.core.choices import ModelSpec\n"
        "from multiverse.llm.credentials import check_credentials, model_problem\n"
        "specs = [ModelSpec(m) for m in ('openai/gpt-4o-mini', 'anthropic/claude-3-5-haiku-latest', 'gpt-4o',"
        " 'gpt4o-typo', 'hosted_vllm/q')]\n"
        "print([model_problem(s) is None for s in specs], bool(check_credentials(specs)), 'litellm' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ALL_NAMES}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.strip() == "[True, True, True, False, True] True False"


def test_run_with_a_missing_key_exits_2_in_one_line_without_importing_litellm(tmp_path, tiny_experiment):
    import yaml

    data = tiny_experiment()
    data["systems"] = {"a": "openai/gpt-4o-mini"}
    data["allow_sim_on_real"] = True
    path = tmp_path / "real.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    code = (
        "import sys\n"
        "from multiverse.cli import main\n"
        f"rc = main(['run', {str(path)!r}, '--out', {str(tmp_path / 'out')!r}, '--quiet'])\n"
        "print(rc, 'litellm' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ALL_NAMES}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.stdout.strip() == "2 False"
    assert done.stderr.strip().splitlines() == [
        "multiverse run: missing credentials: openai/gpt-4o-mini needs OPENAI_API_KEY "
        "(set them in the environment, or pass params: api_key)"
    ]
    assert not (tmp_path / "out").exists()
