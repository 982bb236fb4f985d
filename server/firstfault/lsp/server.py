"""`firstfault lsp`: diagnostics, hovers, code actions, code lens, symbols and commands on logs.

Handlers only translate; the engine, annotations and text modules decide. Analyses run on one worker
thread so the event loop keeps answering hovers while a big log is read."""

from __future__ import annotations

import asyncio
import functools
import itertools
import re
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote

import attrs
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from firstfault import __version__
from firstfault.advice import env_block, evidence_excerpt
from firstfault.annotations import LineNote, annotate, classify, current_events
from firstfault.context import source_from_path
from firstfault.diagnosis import Diagnosis, Report
from firstfault.matcher import Event
from firstfault.engine import Engine
from firstfault.inputs import TextInput, path_input, text_input
from firstfault.hovertext import line_markdown
from firstfault.knowledge import Knowledge, render_entry
from firstfault.loader import builtin_dir, load_library
from firstfault.parallel import default_jobs
from firstfault.lsp import convert
from firstfault.lsp.document import LogDocument, use_editor_lines
from firstfault.lsp.settings import Settings, parse
from firstfault.reader import InputError
from firstfault.render import markdown_report

DIAGNOSE = "firstfault.server.diagnose"
DIAGNOSE_FILE = "firstfault.server.diagnoseFile"
LITERALS = "firstfault.server.literals"
# Client commands the code actions and lenses call, offered only to a client that declares it implements them
# (initializationOptions.firstfault.clientCommands; the VS Code client does). Other editors get the server's own
# commands, which use what LSP itself can do: window/showDocument and window/showMessage.
COPY, RUN, OPEN_REFERENCE, REVEAL = ("firstfault.copyToClipboard", "firstfault.runInTerminal",
                                     "firstfault.openReference", "firstfault.revealLine")
SHOW_TEXT, SHOW_DOCUMENT = "firstfault.server.showText", "firstfault.server.showDocument"
_RANK_IN_NAME = re.compile(r"((?:^|[^a-z])rank[-_.]?)\d+", re.IGNORECASE)


class Cancelled(Exception):
    pass


@attrs.define
class Analysis:
    report: Report
    uris: list[str]  # input index -> URI
    notes: dict[int, list[LineNote]]
    versions: dict[str, int | None]
    by_line: dict[tuple[int, int], list[Event]] = attrs.field(factory=dict)
    current: set[int] = attrs.field(factory=set)  # ids of the last attempt's events

    def __attrs_post_init__(self) -> None:
        for event in self.report.events:
            self.by_line.setdefault((event.input_index, event.line), []).append(event)
        self.current = current_events(self.report)

    def index_of(self, uri: str) -> int | None:
        return self.uris.index(uri) if uri in self.uris else None

    def events_at(self, uri: str, line: int) -> list[Event]:
        index = self.index_of(uri)
        return self.by_line.get((index, line), []) if index is not None else []

    def classify(self, event: Event) -> tuple[str, Diagnosis | None]:
        return classify(self.report, event, self.current)


class FirstfaultServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("firstfault", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.settings = Settings()
        self._engine: Engine | None = None  # built by apply_settings, which initialize always calls
        self.knowledge = Knowledge.load(builtin_dir() / "knowledge")
        self.analyses: dict[str, Analysis] = {}  # URI -> the analysis covering it
        self.pending: dict[str, asyncio.Task] = {}  # group key -> scheduled analysis
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="firstfault-analysis")
        self.reported_errors: set[str] = set()
        self.progress_stops: dict[str, threading.Event] = {}  # work-done token -> cancel flag
        self.progress_tokens = itertools.count(1)
        self.client_commands: frozenset[str] = frozenset()
        self.with_diagnostics: set[str] = set()  # URIs whose last published diagnostics were not empty

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = Engine(load_library(), default_jobs())
        return self._engine

    # --- messages -------------------------------------------------------------------------------
    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(kind, message))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.window_show_message(types.ShowMessageParams(kind, message))

    # --- open documents -------------------------------------------------------------------------
    # pygls keys documents by the percent-decoded URI while clients send it encoded (VS Code encodes
    # spaces and non-ASCII), so every lookup goes through here and the client's own spelling is kept.
    def document(self, uri: str) -> TextDocument | None:
        return self.workspace.text_documents.get(unquote(uri))

    def open_uris(self) -> set[str]:
        return {doc.uri for doc in self.workspace.text_documents.values()}

    # --- settings and library -------------------------------------------------------------------
    def declare_client_commands(self, raw: Any) -> None:
        inner = raw.get("firstfault", raw) if isinstance(raw, dict) else None
        declared = inner.get("clientCommands") if isinstance(inner, dict) else None
        self.client_commands = frozenset(c for c in declared if isinstance(c, str)) if isinstance(declared, list) \
            else frozenset()

    def offer_command(self, title: str, command: str, *arguments: Any) -> types.Command:
        """A client command if the client implements it; else the server's own that shows the same thing."""
        if command in self.client_commands:
            return types.Command(title, command, arguments=list(arguments))
        if command == COPY:
            text, _ = arguments
            return types.Command(title.replace("copy", "show", 1), SHOW_TEXT, arguments=[title, text])
        if command == RUN:
            cmd = arguments[0]
            note = "" if cmd["complete"] else " (fill in the <...> parts first)"
            return types.Command(f"firstfault: show the command '{cmd['title']}'", SHOW_TEXT,
                                 arguments=[cmd["title"], f"{cmd['command']}\n\nRun it yourself in a shell{note}."])
        if command == OPEN_REFERENCE:
            return types.Command(title, SHOW_DOCUMENT, arguments=[arguments[1], None])
        return types.Command(title, SHOW_DOCUMENT, arguments=list(arguments))  # REVEAL: uri, 0-based line

    def show_text(self, title: Any, text: Any) -> None:
        self.window_show_message(types.ShowMessageParams(types.MessageType.Info, f"{title}\n\n{text}"))

    async def show_document(self, target: Any, line: Any) -> None:
        if not isinstance(target, str) or not (line is None or isinstance(line, int)):
            raise ValueError("showDocument takes a URI and a 0-based line (or null)")
        external = target.startswith(("https://", "http://"))
        if not external and not target.startswith(("file:", "untitled:")):
            raise ValueError(f"showDocument opens web pages and documents only, not {target[:40]!r}")
        selection = convert.line_range(line + 1) if line is not None else None
        await self.window_show_document_async(types.ShowDocumentParams(
            target, external=external or None, take_focus=True, selection=selection))

    def apply_settings(self, raw: Any) -> None:
        settings, problems = parse(raw)
        if problems:
            self.show("firstfault: invalid settings, using defaults for: " + "; ".join(problems))
        self.settings = settings
        roots = [Path(to_fs_path(f.uri)) for f in (self.workspace.folders or {}).values() if to_fs_path(f.uri)]
        library = load_library(settings.effective_signature_dirs(roots), disabled=settings.disabled_references)
        new_errors = [e for e in library.errors if e not in self.reported_errors]
        for error in new_errors:
            self.log(f"signature error: {error}", types.MessageType.Error)
        if new_errors:
            self.reported_errors.update(new_errors)
            self.show(f"firstfault: {len(new_errors)} signature file problem(s) ({new_errors[0]}); "
                      "the other signatures are in use. See the firstfault log for all.")
        self._engine = Engine(library, default_jobs())

    # --- analysis -------------------------------------------------------------------------------
    def group_key(self, uri: str) -> str:
        """Per-rank logs of one job (rank0.log, rank1.log, ... in one folder) share a key; other documents are alone."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if not path or source_from_path(path)[0].rank is None:
            return uri
        return str(Path(path).parent / _RANK_IN_NAME.sub(r"\1#", Path(path).name))

    def group_members(self, uri: str, key: str) -> list[str]:
        """The open documents with this key, and siblings on disk up to the byte budget."""
        if key == uri:
            return [uri]
        members = {u for u in self.open_uris() if self.group_key(u) == key}
        known = {unquote(u) for u in members}
        budget = self.settings.sibling_bytes
        folder = Path(key).parent
        try:
            siblings = sorted(folder.iterdir())
        except OSError:
            siblings = []
        for sibling in siblings:
            sibling_uri = from_fs_path(str(sibling))
            if unquote(sibling_uri) in known or self.group_key(sibling_uri) != key or not sibling.is_file():
                continue
            size = sibling.stat().st_size
            if size <= budget:
                budget -= size
                members.add(sibling_uri)
        members.add(uri)
        return sorted(members, key=_rank_order)

    def schedule(self, uri: str, delay: float) -> None:
        key = self.group_key(uri)
        previous = self.pending.pop(key, None)
        if previous is not None:
            previous.cancel()
        self.pending[key] = asyncio.get_running_loop().create_task(self._run(uri, key, delay))

    async def _run(self, uri: str, key: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            members = self.group_members(uri, key)
            inputs, versions = self._inputs(members)
            loop = asyncio.get_running_loop()
            try:
                report = await loop.run_in_executor(self.worker, self.engine.analyze, inputs)
            except InputError as exc:
                # A rank's log beside the open ones is unreadable (a corrupt .gz): keep the open documents' verdict.
                opened = [u for u in members if self.document(u) is not None]
                if len(opened) == len(members):
                    raise
                self.log(f"a log beside {key} could not be read ({exc}); diagnosing the open documents alone",
                         types.MessageType.Warning)
                members = opened
                inputs, versions = self._inputs(members)
                report = await loop.run_in_executor(self.worker, self.engine.analyze, inputs)
            open_now = self.open_uris()
            if not any(u in open_now for u in members):
                return  # every document was closed while it was analysed
            if any(self._version(u) != v for u, v in versions.items()):
                return  # changed meanwhile: the newer change has its own run scheduled
            self.publish(Analysis(report, members, {}, versions))
        except asyncio.CancelledError:
            pass
        except Exception:
            self.log(f"analysis of {key} failed:\n{traceback.format_exc()}", types.MessageType.Error)
        finally:
            if self.pending.get(key) is asyncio.current_task():
                del self.pending[key]

    def _earlier_scan(self, uri: str, doc: TextDocument) -> tuple[Any, int] | None:
        """The last published scan of this buffer and the first line edited since: the engine scans again from
        the last checkpoint before that line (a live log's append costs its last chunk, not the whole log)."""
        analysis = self.analyses.get(uri)
        if analysis is None or not isinstance(doc, LogDocument) or uri not in analysis.uris:
            return None
        version, index = analysis.versions.get(uri), analysis.uris.index(uri)
        if version is None or index >= len(analysis.report.scans):
            return None
        changed = doc.first_changed_line(version)
        return (analysis.report.scans[index], changed) if changed is not None else None

    def _version(self, uri: str) -> int | None:
        doc = self.document(uri)
        return doc.version if doc is not None else None

    def _inputs(self, members: list[str]) -> tuple[list[TextInput], dict[str, int | None]]:
        inputs, versions = [], {}
        for uri in members:
            doc = self.document(uri)
            name = to_fs_path(uri) or uri
            if doc is not None:
                earlier = self._earlier_scan(uri, doc)  # a rescan of the end reads the appended parts unjoined
                inputs.append(text_input(doc.parts() if earlier else doc.source, name, earlier))
                versions[uri] = doc.version
            else:
                inputs.append(path_input(name))
        return inputs, versions

    def publish(self, analysis: Analysis) -> None:
        for slow in self.engine.slow_patterns():
            if slow not in self.reported_errors:  # a user's pattern switched off for running out of time: once
                self.reported_errors.add(slow)
                self.show(f"firstfault: {slow}")
        analysis.notes = annotate(analysis.report, self.engine.library.references,
                                  self.settings.max_diagnostics_per_file)
        open_now = self.open_uris()
        for index, uri in enumerate(analysis.uris):
            self.analyses[uri] = analysis
            diagnostics = self.diagnostics(analysis, index)
            # A job folder can hold thousands of files: an empty list goes only where the editor may show one.
            if not diagnostics and uri not in open_now and uri not in self.with_diagnostics:
                continue
            (self.with_diagnostics.add if diagnostics else self.with_diagnostics.discard)(uri)
            # The version analysed, so an editor (and a test) can tell a stale publication from the current one.
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri, diagnostics, version=analysis.versions.get(uri)))
        self.refresh_lenses()

    def refresh_lenses(self) -> None:
        """Editors ask for lenses when a document opens, before its analysis exists: ask them again."""
        workspace = self.client_capabilities.workspace
        if workspace is not None and workspace.code_lens is not None and workspace.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    def diagnostics(self, analysis: Analysis, index: int) -> list[types.Diagnostic]:
        by_path = {str(info.path): analysis.uris[i] for i, info in enumerate(analysis.report.inputs)}
        refs = self.engine.library.references
        out = []
        for note in analysis.notes.get(index, []):
            ref = refs.get(note.event.reference_id)
            d = convert.diagnostic(note, lambda i: analysis.uris[i] if i < len(analysis.uris) else None,
                                   by_path.get, ref.references[0] if ref and ref.references else None)
            if convert.keep(d.severity, self.settings.minimum_severity):
                out.append(d)
        return out

    def forget(self, uri: str) -> None:
        analysis = self.analyses.pop(uri, None)
        self.with_diagnostics.discard(uri)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
        if analysis is None:
            return
        open_now = self.open_uris()
        if not any(u in open_now for u in analysis.uris):
            for other in analysis.uris:
                if self.analyses.get(other) is analysis:
                    del self.analyses[other]
                    if other in self.with_diagnostics:
                        self.with_diagnostics.discard(other)
                        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(other, []))
        if not any(u in open_now for u in analysis.uris) and (task := self.pending.pop(self.group_key(uri), None)):
            task.cancel()

    async def diagnose_file(self, uri: str, baseline: list[str] = ()) -> dict[str, Any]:
        """A file or a job's folder on disk, read by the server; `baseline`: URIs of a run that worked."""
        path = _fs_path(uri)
        good = [_fs_path(u) for u in baseline]
        loop = asyncio.get_running_loop()
        stop = threading.Event()
        token: str | None = None
        window = self.client_capabilities.window
        if window is not None and window.work_done_progress:
            # A fresh number each time: an id() is reused once its object is gone, and pygls keeps ended tokens.
            token = f"firstfault-{next(self.progress_tokens)}"
            await self.work_done_progress.create_async(token)
        if token is not None:
            self.progress_stops[str(token)] = stop
            self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                title="firstfault: reading " + ("folder" if Path(path).is_dir() else "log"), message=Path(path).name, percentage=0, cancellable=True))
        last = [-1]

        def progress(done: int, total: int) -> None:
            if stop.is_set():
                raise Cancelled()
            percent = done * 100 // max(total, 1)
            if token is not None and percent != last[0]:
                last[0] = percent
                message = f"{done / 2**20:,.0f} of {total / 2**20:,.0f} MiB"
                loop.call_soon_threadsafe(self.work_done_progress.report, token,
                                          types.WorkDoneProgressReport(message=message, percentage=percent))

        try:
            report = await loop.run_in_executor(self.worker, functools.partial(
                self.engine.analyze_paths, [path], progress, baseline=good))
        except (asyncio.CancelledError, Cancelled):
            stop.set()
            return {"cancelled": True}
        finally:
            if token is not None:
                self.progress_stops.pop(str(token), None)
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
        # A folder (a job's logs, error files and dumps) publishes on every file it read.
        uris = [uri] if len(report.inputs) == 1 else [from_fs_path(i.path) or i.path for i in report.inputs]
        self.publish(Analysis(report, uris, {}, {}))
        return {"cancelled": False, "report": report.to_json()}

    # --- requests -------------------------------------------------------------------------------
    def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        line_text = self._line_text(uri, position.line)
        parts = []
        analysis = self.analyses.get(uri)
        if analysis is not None:
            events = analysis.events_at(uri, position.line + 1)
            if events:
                kind, diagnosis = analysis.classify(events[0])
                parts.append(line_markdown(analysis.report, events[0], kind, diagnosis,
                                           self.engine.library.references))
                line_text = line_text if line_text is not None else events[0].text
        if line_text is not None:
            seen = set()
            for term in self.knowledge.terms_at(line_text, position.character):
                if term.entry.name not in seen:
                    seen.add(term.entry.name)
                    parts.append(render_entry(term.entry, self.knowledge.titles))
        if not parts:
            return None
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts)))

    def _line_text(self, uri: str, line: int) -> str | None:
        """One line of an open document, from the line index the document keeps up to date across edits."""
        doc = self.document(uri)
        if isinstance(doc, LogDocument):
            return doc.line_text(line)
        return None if doc is None or line >= len(doc.lines) else doc.lines[line].rstrip("\r\n")

    def code_actions(self, uri: str, rng: types.Range) -> list[types.CodeAction]:
        analysis = self.analyses.get(uri)
        if analysis is None:
            return []
        report = analysis.report
        refs = self.engine.library.references
        lines = range(rng.start.line + 1, min(rng.end.line, rng.start.line + 1000) + 2)
        events = [e for line in lines for e in analysis.events_at(uri, line)]
        if not events:
            return []
        kind, diagnosis = analysis.classify(events[0])
        ref = refs.get(diagnosis.id if diagnosis else events[0].reference_id)
        actions: list[types.CodeAction] = []

        def action(title: str, command: str, *arguments: Any) -> None:
            shown = self.offer_command(title, command, *arguments)
            actions.append(types.CodeAction(shown.title, kind=types.CodeActionKind.QuickFix, command=shown))

        fix = diagnosis.fix if diagnosis is not None and ref is diagnosis.reference else ref.fix if ref else ()
        if ref is not None and fix:
            action(f"firstfault: copy the fix for {ref.title}", COPY, "\n".join(f"- {f}" for f in fix) + "\n",
                   "fix")
        if diagnosis is not None:
            for cmd in diagnosis.verify:
                action(f"firstfault: run '{cmd.title}' in a terminal (asks first)", RUN,
                       {"title": cmd.title, "argv": list(cmd.argv), "command": cmd.command, "complete": cmd.complete})
        if ref is not None and ref.references:
            action(f"firstfault: open the reference for {ref.title}", OPEN_REFERENCE, ref.id, ref.references[0])
        init = diagnosis.initiator if diagnosis else None
        if init is not None and init.line and kind != "initiator":
            target = self._uri_of_path(analysis, init.path) or uri
            action(f"firstfault: go to the first failure (line {init.line})", REVEAL, target, init.line - 1)
        action("firstfault: copy the environment that makes the next failure diagnosable", COPY,
               env_block(diagnosis), "environment")
        action("firstfault: copy a redacted evidence excerpt", COPY, evidence_excerpt(report), "evidence")
        return actions

    def _uri_of_path(self, analysis: Analysis, path: str | None) -> str | None:
        for i, info in enumerate(analysis.report.inputs):
            if str(info.path) == path and i < len(analysis.uris):
                return analysis.uris[i]
        return None

    def code_lens(self, uri: str) -> list[types.CodeLens]:
        analysis = self.analyses.get(uri)
        if analysis is None or (title := convert.lens_title(analysis.report)) is None:
            return []
        init = analysis.report.diagnoses[0].initiator if analysis.report.diagnoses else None
        if init is None or not init.line:
            return [types.CodeLens(convert.line_range(1), types.Command(title, ""))]
        target = self._uri_of_path(analysis, init.path) or uri
        return [types.CodeLens(convert.line_range(1), self.offer_command(title, REVEAL, target, init.line - 1))]

    def document_symbols(self, uri: str) -> list[types.DocumentSymbol]:
        analysis = self.analyses.get(uri)
        index = analysis.index_of(uri) if analysis else None
        if analysis is None or index is None:
            return []
        return convert.symbols(analysis.report, index, analysis.notes.get(index, []))

    def literals(self) -> list[dict[str, str]]:
        """Lower-cased literals of specific failure patterns, for clients that mark lines outside documents
        (terminal links); generic ones such as 'Error:' would mark every line, and one that needs another
        line is no failure on its own."""
        seen: dict[str, dict[str, str]] = {}
        for ref in self.engine.library.references.values():
            for pattern in ref.patterns:
                if pattern.role in ("cause", "symptom") and not pattern.generic and not pattern.needs:
                    for literal in pattern.literals:
                        seen.setdefault(literal, {"literal": literal, "reference": ref.id, "title": ref.title})
        return sorted(seen.values(), key=lambda entry: entry["literal"])

    def diagnose(self, argument: Any) -> dict[str, Any]:
        """{"text": ..., "name": ...} or {"uri": ...} or a URI string → the report and its markdown."""
        if isinstance(argument, str):
            argument = {"uri": argument}
        if not isinstance(argument, dict) or not ("text" in argument or "uri" in argument):
            raise ValueError('diagnose takes {"text": ...} or {"uri": ...}')
        if isinstance(argument.get("text"), str):
            report = self.engine.analyze_text(argument["text"], str(argument.get("name") or "<selection>"))
        else:
            uri = str(argument["uri"])
            doc = self.document(uri)
            name = (to_fs_path(uri) if uri.startswith("file:") else None) or uri
            report = (self.engine.analyze([text_input(doc.source, name)]) if doc is not None
                      else self.engine.analyze_paths([name]))
        return {"report": report.to_json(), "markdown": markdown_report(report)}


def _rank_order(uri: str) -> tuple:
    rank = source_from_path(to_fs_path(uri) or uri)[0].rank
    return (rank if rank is not None else 1 << 30, uri)


def guarded(server: FirstfaultServer, default: Callable[[], Any] = lambda: None):
    """Every handler logs its own errors and answers something: the server never dies on input."""
    def failed(fn, exc: Exception) -> Any:
        if isinstance(exc, (InputError, ValueError)):
            server.show(f"firstfault: {exc}", types.MessageType.Error)
        else:
            server.log(f"{fn.__name__} failed:\n{traceback.format_exc()}", types.MessageType.Error)
        return default()

    def wrap(fn):
        if asyncio.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args, **kwargs):
                try:
                    return await fn(*args, **kwargs)
                except Exception as exc:
                    return failed(fn, exc)
            return run_async

        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                return failed(fn, exc)
        return run
    return wrap


def build() -> FirstfaultServer:
    server = FirstfaultServer()
    safe = functools.partial(guarded, server)

    @server.feature(types.INITIALIZE)
    @safe()
    def initialize(params: types.InitializeParams) -> None:
        use_editor_lines(server.workspace)
        server.declare_client_commands(params.initialization_options)
        server.apply_settings(params.initialization_options)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @safe()
    def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        server.apply_settings(params.settings)
        for uri in server.open_uris():
            server.schedule(uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @safe()
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        server.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @safe()
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        server.schedule(params.text_document.uri, server.settings.debounce_ms / 1000)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    @safe()
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        server.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @safe()
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        server.forget(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @safe()
    def hover(params: types.HoverParams) -> types.Hover | None:
        return server.hover(params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    @safe(list)
    def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        return server.code_actions(params.text_document.uri, params.range)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    @safe(list)
    def code_lens(params: types.CodeLensParams) -> list[types.CodeLens]:
        return server.code_lens(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @safe(list)
    def document_symbol(params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        return server.document_symbols(params.text_document.uri)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    @safe()
    def progress_cancel(params: types.WorkDoneProgressCancelParams) -> None:
        if (stop := server.progress_stops.get(str(params.token))) is not None:
            stop.set()

    @server.command(DIAGNOSE)
    @safe()
    def diagnose(*args: Any) -> dict[str, Any] | None:
        return server.diagnose(_first(args))

    @server.command(LITERALS)
    @safe(list)
    def literals(*args: Any) -> list[dict[str, str]]:
        return server.literals()

    @server.command(SHOW_TEXT)
    @safe()
    def show_text(*args: Any) -> None:
        title, text = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
        server.show_text(title, text)

    @server.command(SHOW_DOCUMENT)
    @safe()
    async def show_document(*args: Any) -> None:
        target, line = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
        await server.show_document(target, line)

    @server.command(DIAGNOSE_FILE)
    @safe()
    async def diagnose_file(*args: Any) -> dict[str, Any] | None:
        argument = _first(args)
        uri = argument.get("uri") if isinstance(argument, dict) else argument
        baseline = argument.get("baseline", []) if isinstance(argument, dict) else []
        if not isinstance(uri, str) or not isinstance(baseline, list) or not all(isinstance(b, str) for b in baseline):
            raise ValueError("diagnoseFile takes a file or folder URI, and optionally {\"baseline\": [URI, ...]}")
        return await server.diagnose_file(uri, baseline)

    return server


def _fs_path(uri: str) -> str:
    return (to_fs_path(uri) or uri) if uri.startswith("file:") else uri


def _first(args: tuple) -> Any:
    """pygls passes a command's arguments either spread or as one list."""
    if len(args) == 1 and isinstance(args[0], list):
        args = tuple(args[0])
    return args[0] if args else None


def main(tcp: str | None = None) -> int:
    from firstfault.lsp import transport

    server = build()
    if tcp:
        host, port = tcp_address(tcp)
        transport.start_tcp(server, host, port, lambda where: print(f"firstfault lsp: listening on {where}",
                                                                   file=sys.stderr, flush=True))
    else:
        transport.start_io(server)
    return 0


def tcp_address(spec: str) -> tuple[str, int]:
    """'HOST:PORT' or 'PORT' (loopback); anything else is an input error, not a traceback."""
    host, _, port = spec.rpartition(":")
    if not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--tcp {spec!r}: give HOST:PORT or PORT, with a port from 1 to 65535")
    return host or "127.0.0.1", int(port)
