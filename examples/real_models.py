# %% [markdown]
# # Your own role on real models
#
# A walkthrough in cells (open it in Jupyter or VS Code as a notebook, or run it as a
# script). It runs one role specification against real models through litellm:
# which environment variables to set, estimating the cost before calling anything,
# spend caps, running, resuming after an interruption, and reading the figures.
#
# By default it runs on the offline world (`sim/` models) so it works anywhere;
# set `MULTIVERSE_EXAMPLE_REAL=1` and an API key to call real models.

# %%
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import multiverse
from multiverse import analysis, plots

REAL = os.environ.get("MULTIVERSE_EXAMPLE_REAL") == "1"
ROOT = Path(__file__).resolve().parents[1]
WORK = Path(tempfile.mkdtemp(prefix="multiverse-example-"))

# %% [markdown]
# ## 1. The role under test
#
# A role is a YAML file in `specs/roles/` (the format is documented in
# `specs/README.md`). Copy one of the shipped roles and edit its prompt, principles
# and seed scenarios; `multiverse validate` checks it and points at the line of any
# problem.

# %%
subprocess.run([sys.executable, "-m", "multiverse", "validate", str(ROOT / "specs" / "roles" / "tutor.yaml")], check=True)
role = multiverse.load_role("tutor", specs_dir=ROOT / "specs")
print(role.render_system_prompt()[:400])

# %% [markdown]
# ## 2. The experiment
#
# Models are litellm model strings. Keys come from the environment
# (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`, ...); a local
# OpenAI-compatible server (vLLM, Ollama) needs `api_base` and no key. Keys are never
# written to the cache, the results or any message. `max_cost_usd` and `max_calls`
# stop a run cleanly; everything finished stays cached.

# %%
if REAL:
    systems = "{mini: openai/gpt-4o-mini, haiku: anthropic/claude-haiku-4-5}"
    user = "{model: openai/gpt-4o-mini, params: {temperature: 1.0}}"
    judge = "{model: openai/gpt-4o, template: judge_v1}"
    sim = ""
else:
    systems = "{mini: sim/target-mini, haiku: sim/target-haiku}"
    user = "sim/user-plain"
    judge = "sim/judge-gpt4o"
    sim = """
sim:
  targets:
    mini: {breach: {"*": 0.06}}
    haiku: {breach: {"*": 0.03}}
  judges:
    gpt4o: {}
  users:
    plain: {}
"""

experiment = WORK / "my_tutor.yaml"
experiment.write_text(f"""
name: my_tutor
roles: [tutor]
specs: {ROOT / 'specs'}
systems: {systems}
dims:
  user_sim: {{plain: {user}}}
  judge: {{gpt4o: {judge}}}
  condition: {{eight: {{horizon: 8, search: seed_only}}}}
replicates: 2
items: 8
max_cost_usd: 5
concurrency: 8
cache: {WORK / 'cache'}
{sim}""")

# %% [markdown]
# ## 3. Estimate before spending
#
# `multiverse plan` prints each layer's size, the calls needed, how many are already
# cached and the estimated cost per model (from litellm's bundled price list), and
# calls nothing.

# %%
subprocess.run([sys.executable, "-m", "multiverse", "plan", str(experiment)], check=True)

# %% [markdown]
# ## 4. Run, and resume
#
# If the run stops (a spend cap, Ctrl-C, a lost connection), run the same command
# again: completed calls come from the cache, so only the rest is paid for.

# %%
cube = multiverse.run(experiment, out=WORK / "run")
again = multiverse.run(experiment, out=WORK / "run")   # zero calls: everything is cached
print((WORK / "run" / "run.json").read_text()[:300])

# %% [markdown]
# ## 5. Read the results
#
# Scores come from the cube at no model cost: every evidentiary standard and scoring
# rule at once. Missing judgments are counted, never treated as adherence.

# %%
scores = multiverse.score(cube)
print(scores.sel(standard="clear_breach", rule="any_turn").mean(["item", "replicate"]).to_pandas())
curve = analysis.spec_curve(scores, contrast=("mini", "haiku"), n_boot=200)
ax = plots.plot_spec_curve(curve, role="tutor", condition="eight")
ax.figure.savefig(WORK / "curve.png")
subprocess.run([sys.executable, "-m", "multiverse", "report", str(WORK / "run" / "cube.nc"), "--out", str(WORK / "report")], check=True)
print("figures in", WORK / "report")
