"""Secrets under any spelling of their name, and secrets a provider echoes back, reach no output."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml
from cli_helpers import SPECS, database_cells, tiny

SPELLED = {
    "accessToken": "canaryaccesstoken1111",
    "sessionToken": "canarysessiontoken2222",
    "pwd": "canarypwd33333",
    "passphrase": "canarypassphrase4444",
    "passPhrase": "canarypassphrase5555",
    "client.secret": "canaryclientsecret6666",
    "X-Auth-Key": "canaryxauthkey7777",
    "refresh-token": "canaryrefreshtoken8888",
    "Cookie": "canarycookie9999",
    "apiKey": "canaryapikey1010",
    "PASSWORD": "canarypassword1212",
}
HARMLESS = {"max_tokens": 48, "max_completion_tokens": 40, "temperature": 0.25}


def _text_of_every_file(root: Path, skip: set[str]) -> list[str]:
    """Every file below ``root`` as text, SQLite rows (zlib payloads inflated) and parquet rows (decompressed) added."""
    texts = []
    for file in root.rglob("*"):
        if not file.is_file() or file.name in skip:
            continue
        data = file.read_bytes()
        texts.append(data.decode("utf-8", "replace"))
        if data[:4] == b"PAR1":
            import pyarrow.parquet as pq

            texts.append(json.dumps(pq.read_table(file).to_pylist(), default=str, ensure_ascii=False))
        if data[:16] == b"SQLite format 3\x00":
            texts.extend(database_cells(file))
    return texts


def _leaks(texts: list[str], canaries) -> list[tuple[str, str]]:
    return [(canary, text[max(0, text.find(canary) - 80): text.find(canary) + 20])
            for canary in canaries for text in texts if canary in text]


def test_secret_params_of_every_spelling_are_masked_in_the_cube_and_run_record(tmp_path, experiment_file, cli):
    params = {**SPELLED, **HARMLESS}
    data = tiny(systems={"a": {"model": "sim/target-a", "params": params}})
    path = experiment_file(yaml.safe_dump(data, sort_keys=False))
    code, stdout, stderr = cli("run", path, "--out", tmp_path / "out", "--cache", tmp_path / "cache", "--quiet")
    assert code == 0, stderr
    assert _leaks(_text_of_every_file(tmp_path / "out", skip=set()) + [stdout, stderr], SPELLED.values()) == []
    import xarray as xr

    with xr.open_dataset(tmp_path / "out" / "cube.nc") as plain:
        kept = json.loads(plain.attrs["experiment"])["systems"]["a"]["params"]
    assert {k: kept[k] for k in HARMLESS} == HARMLESS
    assert {k: kept[k] for k in SPELLED} == {k: "[REDACTED]" for k in SPELLED}


def test_canaries_a_provider_echoes_back_reach_no_file_and_no_printed_line(
    tmp_path, experiment_file, cli, monkeypatch, caplog
):
    from multiverse.testing.loopback import LoopbackServer

    env_canary = "canaryenvironmentkey4321"
    header_canary = "canarycustomheader8765"
    monkeypatch.setenv("OPENAI_API_KEY", env_canary)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    caplog.set_level(logging.DEBUG)
    canaries = [*SPELLED.values(), env_canary, header_canary]
    with LoopbackServer(echo=True) as server:
        params = {**SPELLED, **HARMLESS, "extra_headers": {"X-Custom-Auth": header_canary}}
        data = tiny(systems={"echoing": {"model": "openai/echoing", "api_base": server.url, "params": params}},
                    roles=["support"], items=1, allow_sim_on_real=True)
        path = experiment_file(yaml.safe_dump(data, sort_keys=False))
        out, cache = tmp_path / "out", tmp_path / "cache"
        streams = []
        for args in (
            ("validate", path),
            ("plan", path, "--cache", cache),
            ("run", path, "--out", out, "--cache", cache, "--quiet"),
            ("show", out, "--text", "--reasons"),
            ("report", out, "--out", tmp_path / "report", "--n-boot", "5", "--format", "svg"),
            ("view", out, "--out", tmp_path / "site", "--no-figures"),
            ("export-cases", out, "--out", tmp_path / "cases", "--specs", SPECS),
            ("annotate", "export", out, "--n", "1", "--out", tmp_path / "tasks", "--format", "html"),
            ("export", out, "--format", "parquet", "--out", tmp_path / "parquet"),
        ):
            code, stdout, stderr = cli(*args)
            assert code == 0, (args, stderr)
            streams += [stdout, stderr]
        task = json.loads((tmp_path / "tasks" / "tasks.jsonl").read_text().splitlines()[0])
        labels = tmp_path / "labels.jsonl"
        labels.write_text(json.dumps({"task": task["task"], "annotator": "ann", "turn": 1,
                                      "principle": task["principles"][0]["id"], "severity": 1}) + "\n")
        code, stdout, stderr = cli("annotate", "import", labels, "--cube", out, "--out", tmp_path / "labelled.nc")
        assert code == 0, stderr
        streams += [stdout, stderr]
        echoed = [body for body in server.bodies if "accessToken" in body]
        assert echoed, "the secret parameters reached the provider (and were echoed back)"
    assert (tmp_path / "cases").is_dir() and any((tmp_path / "cases").glob("*.case.json"))
    assert (tmp_path / "parquet" / "conversations.parquet").is_file()
    texts = _text_of_every_file(tmp_path, skip={path.name}) + streams + [caplog.text]
    assert _leaks(texts, canaries) == []
    assert any("| echo " in text for text in texts)  # the echoes were kept, with the secrets masked


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        *[pytest.param(name, True, id=name) for name in SPELLED],
        *[pytest.param(name, False, id=name) for name in
          ("max_tokens", "max_completion_tokens", "prompt_tokens", "total_tokens", "token_count", "temperature",
           "monkey", "keyboard_layout", "auth_error")],
    ],
)
def test_a_field_name_is_secret_when_a_whole_segment_of_it_is(name, secret):
    from multiverse.llm.redact import is_secret_field

    assert is_secret_field(name) is secret
