"""A user's bad signature pack in the language server (issue 15): the built-ins and the user's good packs keep
working, and the user is told once, naming the file."""

from __future__ import annotations

import asyncio
import atexit
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import EXAMPLES
from firstfault.loader import builtin_dir

EXAMPLE = EXAMPLES / "oom-cascade" / "train.log"
PACKS = Path(tempfile.mkdtemp(prefix="firstfault-packs-"))
atexit.register(shutil.rmtree, PACKS, ignore_errors=True)


def _packs() -> tuple[Path, Path]:
    source = (builtin_dir() / "process" / "segfault-one-rank.toml").read_text()
    good, bad = PACKS / "good", PACKS / "bad"
    good.mkdir(exist_ok=True)
    bad.mkdir(exist_ok=True)
    (good / "my-segfault.toml").write_text(source.replace('id = "segfault-one-rank"', 'id = "my-segfault"', 1))
    (bad / "broken.toml").write_text(source.replace('id = "segfault-one-rank"', 'id = "broken"', 1)
                                     .replace("\ntitle =", "\npatterns = [1, 2]\ntitle =", 1)
                                     .split("[[patterns]]")[0])
    (bad / "deep.toml").write_text('id = "deep"\nx = ' + "[" * 50_000 + "]" * 50_000 + "\n")
    return good, bad


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=[sys.executable, "-m", "firstfault", "lsp"]))
async def client(lsp_client: LanguageClient):
    good, bad = _packs()

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(*_):
        pass

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"firstfault": {"debounceMs": 50, "signatureDirectories": [str(bad), str(good)]}}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
async def test_a_bad_pack_is_reported_once_and_the_rest_keeps_working(client: LanguageClient):
    uri = EXAMPLE.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "log", 1,
                                                                                         EXAMPLE.read_text())))

    async def verdict() -> None:
        while not any(d.severity == types.DiagnosticSeverity.Error for d in client.diagnostics.get(uri, [])):
            await asyncio.sleep(0.05)
    await asyncio.wait_for(verdict(), 120)  # a guard against hanging, not a timing check
    assert any(d.code == "cuda-oom" for d in client.diagnostics[uri])
    shown = [m.message for m in client.messages if "signature file problem" in m.message]
    assert len(shown) == 1 and ("broken.toml" in shown[0] or "deep.toml" in shown[0])
    logged = "\n".join(m.message for m in client.log_messages)
    assert "broken.toml" in logged and "deep.toml" in logged
    # The good pack beside the bad one is in use: its copy of a reference matches the line too.
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.diagnose", [{"text": "Fatal Python error: Segmentation fault", "name": "x.log"}]))
    assert {"segfault-one-rank", "my-segfault"} <= {d["id"] for d in result["report"]["diagnoses"]}
