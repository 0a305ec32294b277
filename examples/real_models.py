# %% [markdown]
# # Your own role on real models
#
# A walkthrough in cells (open it in Jupyter or VS Code as a notebook, or run it as a
# script). It runs one role specification against real models through litellm:
# which environment variables to set, estimating the cost before calling anything,
# spend caps, running, resuming after an interruption, and reading the results.
#
# Where the models come from:
#
# * by default, the offline world (`sim/` models), so it runs anywhere with no key;
# * `MULTIVERSE_EXAMPLE_API_BASE=http://127.0.0.1:8000/v1`: every part (assistant,
#   simulated student, judge) is played by the model an OpenAI-compatible server
#   serves there (vLLM, Ollama, llama.cpp, `multiverse serve-local`, or the test
#   suite's loopback server); `MULTIVERSE_EXAMPLE_MODEL` names it (default `local`);
# * `MULTIVERSE_EXAMPLE_REAL=1` and an `OPENAI_API_KEY`: OpenAI's models.
#
# The test suite runs this file against its loopback server, so it cannot rot.

# %%
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import multiverse
from multiverse import analysis, plots

API_BASE = os.environ.get("MULTIVERSE_EXAMPLE_API_BASE")
REAL = os.environ.get("MULTIVERSE_EXAMPLE_REAL") == "1" or API_BASE is not None
ROOT = Path(__file__).resolve().parents[1]
WORK = Path(os.environ.get("MULTIVERSE_EXAMPLE_DIR") or tempfile.mkdtemp(prefix="multiverse-example-"))
WORK.mkdir(parents=True, exist_ok=True)


def command(*args: str) -> None:
    """Run ``multiverse ARGS`` as a user would in a shell; stop the walkthrough if it fails."""
    subprocess.run([sys.executable, "-m", "multiverse", *args], check=True)


# %% [markdown]
# ## 1. The role under test
#
# A role is a YAML file in `specs/roles/` (the format is documented in
# `specs/README.md`). `multiverse init role NAME --from tutor` copies a shipped role
# under a new id; edit its `system_prompt` and `context` (what your assistant is
# told), its principles (what the judges check) and its seed scenarios. It never
# replaces a file; `multiverse validate` checks the result and points at the line of
# any problem.

# %%
specs = WORK / "specs"
if not (specs / "roles" / "my_tutor.yaml").exists():
    command("init", "role", "my_tutor", "--from", str(ROOT / "specs" / "roles" / "tutor.yaml"), "--specs", str(specs))
command("validate", str(specs / "roles" / "my_tutor.yaml"))
role = multiverse.load_role("my_tutor", specs_dir=specs)
print(role.render_system_prompt()[:400])

# %% [markdown]
# ## 2. The experiment
#
# Models are litellm model strings. Keys come from the environment
# (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`, ...); a local
# OpenAI-compatible server needs `api_base` (and no real key). Keys are never
# written to the cache, the results or any message. With a real model as the
# simulated user, the consistency monitor defaults to `none` (`validate` and `plan`
# say so in one line). `max_cost_usd` and `max_calls` stop a run cleanly; everything
# finished stays cached.

# %%


def model(name: str, **params: float) -> str:
    """One model entry of the experiment file (a YAML flow mapping)."""
    if API_BASE is not None:
        name = f"openai/{os.environ.get('MULTIVERSE_EXAMPLE_MODEL', 'local')}"
    spec = {"model": name}
    if API_BASE is not None:
        spec["api_base"] = f'"{API_BASE}"'
        params = {**params, "api_key": os.environ.get("OPENAI_API_KEY", "unused")}
    if params:
        spec["params"] = "{" + ", ".join(f"{k}: {v}" for k, v in params.items()) + "}"
    return "{" + ", ".join(f"{k}: {v}" for k, v in spec.items()) + "}"


if REAL:
    systems = f"{{cool: {model('openai/gpt-4o-mini', temperature=0.2)}, warm: {model('openai/gpt-4o-mini', temperature=1.0)}}}"
    user = model("openai/gpt-4o-mini", temperature=1.0)
    judge = model("openai/gpt-4o")
    sim = ""
else:
    systems = "{cool: sim/target-cool, warm: sim/target-warm}"
    user = "sim/user-plain"
    judge = "sim/judge-gpt4o"
    sim = """
sim:
  targets:
    cool: {breach: {"*": 0.03}}
    warm: {breach: {"*": 0.08}}
  judges:
    gpt4o: {}
  users:
    plain: {}
"""

experiment = WORK / "my_tutor.yaml"
experiment.write_text(f"""
name: my_tutor
roles: [my_tutor]
specs: {specs}
systems: {systems}
dims:
  user_sim: {{student: {user}}}
  judge: {{gpt4o: {judge}}}
  condition: {{three: {{horizon: 3, search: seed_only}}}}
replicates: 2
items: 3
max_cost_usd: 5
concurrency: 8
cache: {WORK / 'cache'}
{sim}""")
command("validate", str(experiment))

# %% [markdown]
# ## 3. Estimate before spending
#
# `multiverse plan` prints each layer's size, the calls needed, how many are already
# cached and the estimated cost per model (from litellm's bundled price list), and
# calls nothing.

# %%
command("plan", str(experiment))

# %% [markdown]
# ## 4. Run, and resume
#
# If the run stops (a spend cap, Ctrl-C, a lost connection), run the same command
# again: completed calls come from the cache, so only the rest is paid for.

# %%
cube = multiverse.run(experiment, out=WORK / "run")
again = multiverse.run(experiment, out=WORK / "run")  # no call: everything is cached
print((WORK / "run" / "run.json").read_text()[:300])
command("show", str(WORK / "run"), "--system", "cool", "--replicate", "0", "--item", "0", "--text")

# %% [markdown]
# ## 5. Read the results
#
# Scores come from the cube at no model cost: every evidentiary standard and scoring
# rule at once. Missing judgments are counted, never treated as adherence.

# %%
print(multiverse.summary(cube))
scores = multiverse.score(cube)
rates = scores.sel(standard="clear_breach", rule="any_turn").mean(["item", "replicate"])
print(rates.to_series().unstack("system"))  # one row per remaining choice (role, user_sim, condition, judge)
curve = analysis.spec_curve(scores, contrast=("cool", "warm"), n_boot=200)
curve_ax, _dashboard = plots.plot_spec_curve(curve, role="my_tutor", condition="three")
curve_ax.figure.savefig(WORK / "curve.png")
print("figure in", WORK / "curve.png")
