"""The language server end to end over stdio, speaking as VS Code (pytest-lsp)."""

from __future__ import annotations

import asyncio
import gzip
import re
import sys
from pathlib import Path
from typing import Union

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import CLEAN, EXAMPLES, REALRUN

EXAMPLE = EXAMPLES / "oom-cascade" / "train.log"
# What the VS Code client declares it implements (client/src/server.ts CLIENT_COMMANDS).
CLIENT_COMMANDS = ("firstfault.copyToClipboard", "firstfault.runInTerminal", "firstfault.openReference",
                   "firstfault.revealLine")
RANK_PREFIX = re.compile(r"^\[rank(\d+)\]:")


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=[sys.executable, "-m", "firstfault", "lsp"]))
async def client(lsp_client: LanguageClient):
    params = types.InitializeParams(capabilities=client_capabilities("visual-studio-code"),
                                    initialization_options={"firstfault": {
                                        "debounceMs": 50, "clientCommands": list(CLIENT_COMMANDS)}})
    _structure_code_actions_correctly(lsp_client)
    lsp_client.lens_refreshes = 0

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(*_):
        lsp_client.lens_refreshes += 1

    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def _structure_code_actions_correctly(client: LanguageClient) -> None:
    """lsprotocol 2025.0.0 reads any code action that has a `command` as a bare Command, losing the
    CodeAction around it; a Command's `command` is a string, a CodeAction's an object."""
    converter = client.protocol._converter

    def hook(obj, _):
        kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, kind)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], hook)


async def open_and_wait(client: LanguageClient, path: Path, text: str | None = None) -> list[types.Diagnostic]:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri, "log", 1, path.read_text() if text is None else text)))
    return await asyncio.wait_for(diagnostics_for(client, uri), 120)  # a guard against hanging, not a timing check


async def diagnostics_for(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    client.diagnostics.pop(uri, None)
    while uri not in client.diagnostics:
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


async def close(client: LanguageClient, path: Path) -> None:
    """Close a document and wait for its diagnostics to be cleared."""
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(path.as_uri())))

    async def cleared() -> None:
        # An analysis that finished before the close reached the server may publish first; the clear follows.
        while len(await diagnostics_for(client, path.as_uri())) != 0:
            pass

    await asyncio.wait_for(cleared(), 60)  # a guard against hanging, not a timing check


async def _until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.01)


def line_of(path: Path, needle: str) -> int:
    """0-based line of the first line holding needle."""
    return next(i for i, line in enumerate(path.read_text().splitlines()) if needle in line)


@pytest.mark.asyncio(loop_scope="module")
async def test_cascade_initiator_is_error_and_collateral_is_related(client: LanguageClient):
    diagnostics = await open_and_wait(client, EXAMPLE)
    errors = [d for d in diagnostics if d.severity == types.DiagnosticSeverity.Error]
    assert len(errors) == 1
    oom = errors[0]
    assert oom.range.start.line == line_of(EXAMPLE, "torch.OutOfMemoryError") and oom.code == "cuda-oom"
    assert oom.source == "firstfault" and oom.code_description.href.startswith("https://")
    assert "rank 2" in oom.message
    collateral = [d for d in diagnostics if d.severity == types.DiagnosticSeverity.Information]
    assert collateral and all(d.message.startswith("Collateral of CUDA out of memory") for d in collateral)
    watchdog = next(d for d in collateral if d.code == "collective-timeout")
    # Seven ranks print the same watchdog line: one diagnostic names them all and links the others.
    assert "ranks 0-1, 3-7" in watchdog.message or "ranks 0, 1, 3-7" in watchdog.message
    links = {(r.location.uri, r.location.range.start.line) for r in watchdog.related_information}
    assert (EXAMPLE.as_uri(), oom.range.start.line) in links
    assert len(watchdog.related_information) >= 7
    await close(client, EXAMPLE)


@pytest.mark.asyncio(loop_scope="module")
async def test_paths_with_spaces_and_non_ascii_are_diagnosed(client: LanguageClient, tmp_path: Path):
    # VS Code percent-encodes such URIs and pygls keys its documents decoded: both spellings must meet.
    folder = tmp_path / "fïrst fault logs"
    folder.mkdir()
    log = folder / "train job.log"
    log.write_text(EXAMPLE.read_text())
    assert "%20" in log.as_uri()
    diagnostics = await open_and_wait(client, log)
    assert [d.range.start.line for d in diagnostics if d.severity == types.DiagnosticSeverity.Error] == [31]
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(log.as_uri()), types.Position(31, 12)))
    assert hover is not None and "out of memory" in hover.contents.value.lower()
    await close(client, log)


@pytest.mark.asyncio(loop_scope="module")
async def test_per_rank_files_in_one_folder_link_across_files(client: LanguageClient, tmp_path: Path):
    per_rank: dict[int, list[str]] = {}
    for line in EXAMPLE.read_text().splitlines():
        if m := RANK_PREFIX.match(line):
            per_rank.setdefault(int(m.group(1)), []).append(line)
    for rank, lines in per_rank.items():
        (tmp_path / f"rank{rank}.log").write_text("\n".join(lines) + "\n")
    rank0 = tmp_path / "rank0.log"
    rank2_uri = (tmp_path / "rank2.log").as_uri()
    client.diagnostics.pop(rank2_uri, None)
    diagnostics = await open_and_wait(client, rank0)  # only rank 0 is open; its siblings are read from disk
    watchdog = next(d for d in diagnostics if d.code == "collective-timeout")
    assert watchdog.severity == types.DiagnosticSeverity.Information
    first = next(r for r in watchdog.related_information if r.message.startswith("first failure"))
    assert first.location.uri == (tmp_path / "rank2.log").as_uri()
    while rank2_uri not in client.diagnostics:
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    rank2 = client.diagnostics[rank2_uri]
    assert any(d.severity == types.DiagnosticSeverity.Error and d.code == "cuda-oom" for d in rank2)
    await close(client, rank0)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_corrupt_sibling_log_does_not_take_the_open_documents_diagnostics(client: LanguageClient,
                                                                                  tmp_path: Path):
    rank0 = tmp_path / "rank0.log"
    rank0.write_text(EXAMPLE.read_text())
    packed = bytearray(gzip.compress(b"[rank1]: step 1 loss 2.0\n" * 2000))
    packed[len(packed) // 2] ^= 0xFF  # one flipped byte in the deflate data
    (tmp_path / "rank1.log").write_bytes(bytes(packed))
    diagnostics = await open_and_wait(client, rank0)
    assert any(d.severity == types.DiagnosticSeverity.Error and d.code == "cuda-oom" for d in diagnostics)
    await close(client, rank0)


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_on_collateral_and_on_knowledge_terms(client: LanguageClient):
    diagnostics = await open_and_wait(client, EXAMPLE)
    uri = EXAMPLE.as_uri()
    line = line_of(EXAMPLE, "[Rank 5] Watchdog caught")
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(line, 30)))
    text = hover.contents.value
    assert "collateral** of CUDA out of memory on one rank (rank 2 on gpu-node-a, line 32)" in text
    assert "Hypotheses" in text and "cuda-oom" in text
    # The collateral line's own reference shows its commands filled and quoted, as the JSON report would.
    verify = text.split("**Verify**", 1)[1].split("```")[1]
    assert "{" not in verify and str(EXAMPLE) in verify
    oom = next(d for d in diagnostics if d.severity == types.DiagnosticSeverity.Error)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), oom.range.start))
    assert "this line started the failure" in hover.contents.value and "**Fix**" in hover.contents.value
    column = EXAMPLE.read_text().splitlines()[oom.range.start.line].index("PYTORCH_CUDA_ALLOC_CONF") + 3
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(oom.range.start.line, column)))
    assert "**PYTORCH_CUDA_ALLOC_CONF** — Environment variables" in hover.contents.value
    await close(client, EXAMPLE)


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_explains_terms_in_a_launch_script(client: LanguageClient, tmp_path: Path):
    script = tmp_path / "launch.sh"
    script.write_text("export NCCL_DEBUG=INFO\nexport TORCH_NCCL_ASYNC_ERROR_HANDLING=1\n")
    await open_and_wait(client, script)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(script.as_uri()), types.Position(1, 12)))
    assert "**TORCH_NCCL_ASYNC_ERROR_HANDLING**" in hover.contents.value
    nothing = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(script.as_uri()), types.Position(0, 2)))
    assert nothing is None
    await close(client, script)


@pytest.mark.asyncio(loop_scope="module")
async def test_code_actions_on_collateral(client: LanguageClient):
    diagnostics = await open_and_wait(client, EXAMPLE)
    watchdog = next(d for d in diagnostics if d.code == "collective-timeout")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(EXAMPLE.as_uri()), watchdog.range, types.CodeActionContext([watchdog])))
    by_command = {a.command.command: a.command for a in actions}
    titles = [a.title for a in actions]
    assert any("copy the fix for CUDA out of memory" in t for t in titles)
    oom_line = line_of(EXAMPLE, "torch.OutOfMemoryError")
    assert list(by_command["firstfault.revealLine"].arguments) == [EXAMPLE.as_uri(), oom_line]
    assert by_command["firstfault.openReference"].arguments[0] == "cuda-oom"
    run = by_command["firstfault.runInTerminal"].arguments[0]
    assert run["argv"] and run["command"]
    copies = [a.command.arguments for a in actions if a.command.command == "firstfault.copyToClipboard"]
    env = next(text for text, what in copies if what == "environment")
    assert "export NCCL_DEBUG=INFO" in env and "export TORCH_SHOW_CPP_STACKTRACES=1" in env
    evidence = next(text for text, what in copies if what == "evidence")
    assert "gpu-node-a" not in evidence and "<host>" in evidence and "CUDA out of memory" in evidence
    await close(client, EXAMPLE)


@pytest.mark.asyncio(loop_scope="module")
async def test_code_lens_and_symbols(client: LanguageClient):
    refreshes = client.lens_refreshes
    await open_and_wait(client, EXAMPLE)
    # VS Code asked for lenses at open, before the analysis: the server tells it to ask again.
    await asyncio.wait_for(_until(lambda: client.lens_refreshes > refreshes), 30)
    doc = types.TextDocumentIdentifier(EXAMPLE.as_uri())
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(doc))
    assert len(lenses) == 1 and lenses[0].range.start.line == 0
    oom_line = line_of(EXAMPLE, "torch.OutOfMemoryError")
    assert lenses[0].command.title.startswith(f"first failure: CUDA out of memory on one rank · rank 2, line {oom_line + 1} · ")
    assert list(lenses[0].command.arguments) == [EXAMPLE.as_uri(), oom_line]
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(doc))
    assert [s.name for s in symbols] == ["attempt 1"]
    ranks = {c.name for c in symbols[0].children}
    assert any(name.startswith("rank 2") for name in ranks) and len(ranks) >= 8
    await close(client, EXAMPLE)


@pytest.mark.asyncio(loop_scope="module")
async def test_diagnose_command_on_pasted_traceback(client: LanguageClient):
    text = (REALRUN / "rank-raises.log").read_text()
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.diagnose", [{"text": text, "name": "selection"}]))
    top = result["report"]["diagnoses"][0]
    assert top["id"] == "python-exception-one-rank" and top["initiator"]["rank"] == 1
    assert result["markdown"].startswith("## First failure")


@pytest.mark.asyncio(loop_scope="module")
async def test_literals_command_lists_failure_literals_for_terminal_links(client: LanguageClient):
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams("firstfault.server.literals", []))
    by_literal = {entry["literal"]: entry for entry in result}
    assert by_literal["cuda out of memory"]["reference"] == "cuda-oom"
    assert len(by_literal) == len(result) > 20 and "error:" not in by_literal
    assert "cannot be retrieved (gai error" not in by_literal  # a warning until the connection fails


@pytest.mark.asyncio(loop_scope="module")
async def test_change_reanalyses_latest_version_and_close_clears(client: LanguageClient, tmp_path: Path):
    log = tmp_path / "job.log"
    healthy = "step 1 loss 2.31\n"
    assert len(await open_and_wait(client, log, healthy)) == 0
    uri = log.as_uri()
    oom = next(l for l in EXAMPLE.read_text().splitlines() if "torch.OutOfMemoryError" in l)
    for version, extra in ((2, "step 2 loss 2.29\n"), (3, oom + "\n")):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(healthy + extra)]))
    while not client.diagnostics[uri]:
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [d.code for d in client.diagnostics[uri]] == ["cuda-oom"]
    await close(client, log)


@pytest.mark.asyncio(loop_scope="module")
async def test_document_closed_mid_analysis_publishes_nothing_after_clear(client: LanguageClient, tmp_path: Path):
    log = tmp_path / "big.log"
    line = next(l for l in EXAMPLE.read_text().splitlines() if "torch.OutOfMemoryError" in l)
    text = "step 1 loss 2.31\n" * 400_000 + line + "\n"
    uri = log.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "log", 1, text)))
    await close(client, log)
    # A later request proves the server is alive and answered; no stale diagnostics arrived for the closed log.
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.diagnose", [{"text": "ok", "name": "probe"}]))
    assert len(client.diagnostics[uri]) == 0


def _peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))


@pytest.mark.asyncio(loop_scope="module")
async def test_diagnose_file_streams_60_mb_with_progress(client: LanguageClient, tmp_path: Path):
    log = tmp_path / "huge.log"
    healthy = [l for l in (REALRUN / "rank-raises.log").read_text().splitlines()[:5]]
    block = ("\n".join(healthy) + "\n").encode()
    with log.open("wb") as out:
        while out.tell() < 60 * 2**20:
            out.write(block * 1000)
        out.write(EXAMPLE.read_bytes())
    size_kib = log.stat().st_size // 1024
    # A first read of a few chunks sets the working set (buffers of one chunk, the library's compiled regexes):
    # measured from there, whichever test ran first, the growth is what a bigger file adds.
    warm = tmp_path / "warm.log"
    warm.write_bytes(block * 20_000)
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.diagnoseFile", [warm.as_uri()]))
    before = _peak_rss_kib(client._server.pid)
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.diagnoseFile", [log.as_uri()]))
    assert result["cancelled"] is False and result["report"]["diagnoses"][0]["id"] == "cuda-oom"
    errors = [d for d in client.diagnostics[log.as_uri()] if d.severity == types.DiagnosticSeverity.Error]
    assert len(errors) == 1
    growth = _peak_rss_kib(client._server.pid) - before
    assert growth < size_kib // 2, f"peak memory grew {growth} KiB for a {size_kib} KiB file"
    reports = next(r for token, r in client.progress_reports.items() if str(token).startswith("firstfault-"))
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert any(isinstance(r, types.WorkDoneProgressReport) and r.percentage == 100 for r in reports)


@pytest.mark.asyncio(loop_scope="module")
async def test_diagnose_folder_publishes_on_each_file_and_links_to_the_dump(client: LanguageClient):
    """A job folder (examples/torchrun-stall): the verdict's place is rank 1's Flight Recorder dump, and rank 0's
    timeout in its error.json links to it."""
    job = EXAMPLES / "torchrun-stall"
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.diagnoseFile", [job.as_uri()]))
    assert result["report"]["diagnoses"][0]["id"] == "collective-lagging-rank-named"
    dump = (job / "fr" / "nccl_trace_rank_1").as_uri()
    error_file = next(job.rglob("0/error.json")).as_uri()
    await _until(lambda: error_file in client.diagnostics and dump in client.diagnostics)
    assert any(d.severity == types.DiagnosticSeverity.Error for d in client.diagnostics[dump])
    related = [r.location.uri for d in client.diagnostics[error_file] for r in d.related_information or []]
    assert dump in related
    # Files with nothing to show get no publication at all (a folder can hold thousands).
    quiet = [p.as_uri() for p in job.rglob("stdout.log")]
    assert quiet and not any(uri in client.diagnostics for uri in quiet)


@pytest.mark.asyncio(loop_scope="module")
async def test_diagnose_file_compares_with_a_good_run(client: LanguageClient):
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.diagnoseFile", [{"uri": (EXAMPLES / "torchrun-raise").as_uri(),
                                            "baseline": [(EXAMPLES / "torchrun-ok").as_uri()]}]))
    assert result["report"]["baseline"]["phase"] == "the failed run reached step 2; the good run reached step 4"
    bad = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.diagnoseFile", [{"uri": (EXAMPLES / "torchrun-raise").as_uri(), "baseline": "not a list"}]))
    assert bad is None


@pytest.mark.asyncio(loop_scope="module")
async def test_a_thousand_rapid_edits_end_in_the_last_versions_diagnostics(client: LanguageClient, tmp_path: Path):
    """Issue 15, item 13: edits coalesce (the newest version wins) and hovers are answered from the last analysis
    while edits pour in. bench/lsp.py times it on 10 MiB; this checks what is answered, not how fast."""
    log = tmp_path / "live.log"
    text = EXAMPLE.read_text() + "[rank0]: step 1 loss 2.31\n" * 20_000
    await open_and_wait(client, log, text)
    uri, line, versions = log.as_uri(), text.count("\n"), []

    async def collect() -> None:
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            versions.append((params.uri, params.version))

    collector = asyncio.create_task(collect())

    hovers = []
    for version in range(2, 1002):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [types.TextDocumentContentChangePartial(range=types.Range(types.Position(line, 0), types.Position(line, 0)),
                                                    text=f"[rank0]: step {version} loss 2.31\n")]))
        line += 1
        if version % 50 == 0:
            hovers.append(await client.text_document_hover_async(types.HoverParams(
                types.TextDocumentIdentifier(uri), types.Position(31, 40))))
    # The last edit turns the log's end into a second failure: the final diagnostics must show it.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=1002, uri=uri),
        [types.TextDocumentContentChangePartial(range=types.Range(types.Position(line, 0), types.Position(line, 0)),
                                                text="[rank5]: RuntimeError: CUDA error: an illegal memory access was "
                                                     "encountered\n")]))
    await asyncio.wait_for(_until(lambda: (uri, 1002) in versions), 60)  # a guard against hanging
    collector.cancel()
    assert all(h is not None and "out of memory" in h.contents.value.lower() for h in hovers)
    final = client.diagnostics[uri]
    assert any(d.range.start.line == line and d.code == "illegal-memory-access" for d in final)
    published_versions = [v for u, v in versions if u == uri]
    assert len(published_versions) < 100 and published_versions[-1] == 1002  # coalesced, newest last


@pytest.mark.asyncio(loop_scope="module")
async def test_settings_change_bad_values_and_broken_signature_file(client: LanguageClient, tmp_path: Path):
    broken = tmp_path / "sigs"
    broken.mkdir()
    (broken / "bad.toml").write_text("id = 'x'\ntitle = \n")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        {"firstfault": {"signatureDirectories": [str(broken)], "maxDiagnosticsPerFile": "many",
                        "minimumSeverity": "error", "disabledReferences": []}}))
    await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    shown = " ".join(m.message for m in client.messages)
    assert "maxDiagnosticsPerFile must be an integer" in shown
    assert "signature file problem" in shown and "bad.toml" in shown
    diagnostics = await open_and_wait(client, EXAMPLE)  # the builtin library still works; only errors shown
    assert diagnostics and all(d.severity == types.DiagnosticSeverity.Error for d in diagnostics)
    await close(client, EXAMPLE)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        {"firstfault": {"disabledReferences": ["cuda-oom"]}}))
    diagnostics = await open_and_wait(client, EXAMPLE)
    assert diagnostics and not any(d.code == "cuda-oom" for d in diagnostics)
    await close(client, EXAMPLE)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams({"firstfault": {"debounceMs": 50}}))


@pytest.mark.asyncio(loop_scope="module")
async def test_bad_command_arguments_get_a_message_not_a_crash(client: LanguageClient):
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.diagnoseFile", [{"uri": "file:///nonexistent/firstfault.log"}]))
    assert result is None
    # The message is sent before the response, so it has arrived by now.
    assert "nonexistent" in client.messages[-1].message
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "firstfault.server.diagnose", [{"text": "[rank0]: RuntimeError: boom"}]))
    assert result["report"]["version"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_healthy_log_says_its_lines_are_context_not_failures(client: LanguageClient):
    healthy = CLEAN / "nccl-info-2node-socket-all-reduce-perf.log"
    diagnostics = await open_and_wait(client, healthy)
    assert diagnostics and all(d.severity == types.DiagnosticSeverity.Hint for d in diagnostics)
    assert all(d.message.startswith("Context, not a failure in this log: ") for d in diagnostics)
    doc = types.TextDocumentIdentifier(healthy.as_uri())
    hover = await client.text_document_hover_async(types.HoverParams(doc, diagnostics[0].range.start))
    text = hover.contents.value
    assert text.startswith("**firstfault: context, not a failure in this log**") and "· context here" in text
    assert "· error" not in text and "· warning" not in text
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(doc))
    assert lenses[0].command.title.startswith("no failure found · ") and "of context" in lenses[0].command.title
    await close(client, healthy)
