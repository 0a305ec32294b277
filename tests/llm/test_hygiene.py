"""Import hygiene and network hygiene, each checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from multiverse.testing.loopback import LoopbackServer


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip().splitlines()[-1]


def test_importing_the_model_layer_does_not_import_litellm():
    assert run_python("import sys, multiverse.llm, multiverse.testing.loopback; print('litellm' in sys.modules)") == "False"


@pytest.mark.slow
def test_a_real_call_connects_only_to_the_model_endpoint_and_uses_the_bundled_cost_map():
    with LoopbackServer() as server:
        out = run_python(
            f"""
            import json, os, sys
            connections = []
            sys.addaudithook(lambda event, args: event == "socket.connect" and connections.append(str(args[1])))
            from multiverse.llm import Client, Request
            client = Client(max_retries=0)
            request = Request("openai/gpt-4o-mini", ({{"role": "user", "content": "hi"}},),
                              api_base="{server.url}", params={{"api_key": "dummy-key"}})
            response = client.complete(request)
            print(json.dumps({{"ok": response.ok, "cost": response.cost_usd, "connections": connections,
                              "cost_map": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP")}}))
            """
        )
        port = server.port
    result = json.loads(out)
    assert result["ok"] and result["cost"] > 0 and result["cost_map"] == "True"
    assert set(result["connections"]) == {str(("127.0.0.1", port))}
