"""An LSP client that implements none of the VS Code client's commands (Neovim, Helix, Emacs): every code action
and lens must still work, through what LSP itself offers (window/showDocument, window/showMessage)."""

from __future__ import annotations

import asyncio
import sys
from typing import Union

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import EXAMPLES

EXAMPLE = EXAMPLES / "oom-cascade" / "train.log"
SERVER_COMMANDS = ("firstfault.server.showText", "firstfault.server.showDocument")


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=[sys.executable, "-m", "firstfault", "lsp"]))
async def client(lsp_client: LanguageClient):
    converter = lsp_client.protocol._converter
    converter.register_structure_hook(Union[types.Command, types.CodeAction], lambda obj, _: converter.structure(
        obj, types.Command if isinstance(obj.get("command"), str) else types.CodeAction))
    # pytest-lsp's client answers window/showDocument and records it in shown_documents.
    await lsp_client.initialize_session(types.InitializeParams(capabilities=client_capabilities("neovim"),
                                                               initialization_options={"firstfault": {"debounceMs": 50}}))
    yield
    await lsp_client.shutdown_session()


async def _until(condition, timeout: float = 30) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.05)
    await asyncio.wait_for(poll(), timeout)  # a guard against hanging, not a timing check


@pytest.mark.asyncio(loop_scope="module")
async def test_actions_use_only_commands_the_server_implements(client: LanguageClient):
    uri = EXAMPLE.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "log", 1, EXAMPLE.read_text())))
    await _until(lambda: any(d.code == "collective-timeout" for d in client.diagnostics.get(uri, [])), 120)
    watchdog = next(d for d in client.diagnostics[uri] if d.code == "collective-timeout")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), watchdog.range, types.CodeActionContext([watchdog])))
    assert actions and all(a.command.command in SERVER_COMMANDS for a in actions)
    titles = [a.title for a in actions]
    assert any(t.startswith("firstfault: show the fix for CUDA out of memory") for t in titles)
    assert not any("copy" in t or "in a terminal" in t for t in titles)

    # Go to the first failure: the server asks the editor to show the document at that line.
    reveal = next(a.command for a in actions if "go to the first failure" in a.title)
    await client.workspace_execute_command_async(types.ExecuteCommandParams(reveal.command, reveal.arguments))
    shown = client.shown_documents[-1]
    assert shown.uri == uri and shown.selection.start.line == 31 and not shown.external

    # Open the reference: a web page, shown externally.
    reference = next(a.command for a in actions if "open the reference" in a.title)
    await client.workspace_execute_command_async(types.ExecuteCommandParams(reference.command, reference.arguments))
    assert client.shown_documents[-1].external and client.shown_documents[-1].uri.startswith("https://")

    # The fix and a verification command are shown as text to read and copy.
    for wanted in ("show the fix", "show the command"):
        act = next(a.command for a in actions if wanted in a.title)
        before = len(client.messages)
        await client.workspace_execute_command_async(types.ExecuteCommandParams(act.command, act.arguments))
        await _until(lambda: len(client.messages) > before)
        assert client.messages[-1].type == types.MessageType.Info and "\n\n" in client.messages[-1].message

    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    assert lenses[0].command.command == "firstfault.server.showDocument"
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))


@pytest.mark.asyncio(loop_scope="module")
async def test_show_document_refuses_what_is_not_a_document_or_a_web_page(client: LanguageClient):
    before, messages = len(client.shown_documents), len(client.messages)
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.showDocument", ["javascript:alert(1)", None]))
    await _until(lambda: len(client.messages) > messages)
    assert len(client.shown_documents) == before
    assert client.messages[-1].type == types.MessageType.Error and "web pages and documents only" in client.messages[-1].message
