"""``clients/python`` is a distribution of its own: it declares httpx alone and imports nothing of
the server's, checked in a Python that can see only the standard library, the client and httpx
with its own dependencies. Nothing is built or downloaded."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import callwright_client

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"
HTTPX_AND_ITS_DEPENDENCIES = ("httpx", "httpcore", "h11", "anyio", "idna", "certifi", "sniffio")
SERVER_MODULES = ("domain", "application", "adapters", "projections", "entrypoints", "litestar", "msgspec",
                  "pydantic", "psycopg", "eventsourcing", "structlog", "typer")

ISOLATED = textwrap.dedent("""
    import asyncio, json, socket, sys
    import httpx
    import callwright_client
    from callwright_client import APIConnectionError, AsyncClient, Client, verify_signature

    def answer(request):
        return httpx.Response(200, json={"call_id": "cll_1", "status": "queued"})

    with Client("sk_live_x", "http://127.0.0.1:9", transport=httpx.MockTransport(answer)) as client:
        assert client.calls.get("cll_1").status == "queued"

    async def scenario():
        async with AsyncClient("sk_live_x", "http://127.0.0.1:9", transport=httpx.MockTransport(answer)) as client:
            return await client.calls.get("cll_1")
    assert asyncio.run(scenario()).call_id == "cll_1"

    with socket.socket() as probe:  # a loopback port nobody listens on: httpx's own transport refuses
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with Client("sk_live_x", f"http://127.0.0.1:{port}", max_retries=0) as client:
        try:
            client.calls.get("cll_1")
        except APIConnectionError:
            pass
    print(json.dumps({"modules": sorted(sys.modules), "files": sorted(
        getattr(m, "__file__", None) or "" for m in list(sys.modules.values()))}))
""")


def test_the_distribution_declares_httpx_and_nothing_else() -> None:
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "callwright-client" and project["version"] == callwright_client.__version__ == "0.1.0"
    assert project["dependencies"] == ["httpx>=0.27,<1"] and project["requires-python"] == ">=3.11"
    assert "optional-dependencies" not in project
    server = tomllib.loads((CLIENT.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert "callwright-client" in server["project"]["dependencies"]
    assert not any("callwright_client" in name for name in server["tool"]["setuptools"]["packages"]["find"]["include"])


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return Path(next(iter(spec.submodule_search_locations)))


def test_the_client_imports_and_runs_with_only_the_standard_library_and_httpx(tmp_path: Path) -> None:
    for name in HTTPX_AND_ITS_DEPENDENCIES:
        (tmp_path / name).symlink_to(_package_dir(name), target_is_directory=True)
    env = {"PYTHONPATH": os.pathsep.join([str(CLIENT), str(tmp_path)]), "PATH": os.environ.get("PATH", ""),
           "PYTHONDONTWRITEBYTECODE": "1", "NO_PROXY": "*"}
    # -S: no site-packages at all; -E is left out so PYTHONPATH is the whole of the extra path.
    done = subprocess.run([sys.executable, "-S", "-c", ISOLATED], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert not [name for name in found["modules"] if name.split(".")[0] in SERVER_MODULES]
    outside = [path for path in found["files"] if path and "site-packages" in path
               and not path.startswith(str(tmp_path))]
    assert outside == []
    loaded = {Path(path).resolve() for path in found["files"] if path}
    assert (CLIENT / "callwright_client" / "client.py").resolve() in loaded
