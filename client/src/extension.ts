import * as vscode from "vscode";
import { DiskLogs } from "./diskLogs";
import { LinkMatcher, Literal } from "./links";
import { headline, Report, VerifyCommand } from "./report";
import { Origin, ReportView, revealLocation } from "./reportView";
import { Server, ServerState } from "./server";
import { Status } from "./status";
import { Terminals } from "./terminals";
import { openVerificationTerminal } from "./verifyTerminal";
import { statusVerdict } from "./verdict";

const DIAGNOSE = "firstfault.server.diagnose";
const DIAGNOSE_FILE = "firstfault.server.diagnoseFile";
const LITERALS = "firstfault.server.literals";

/** What other extensions (and the end-to-end tests) can ask of firstfault. */
export interface FirstfaultApi {
  serverState(): ServerState;
  whenRunning(): Promise<void>;
  currentReport(): { report: Report; origin: Origin } | undefined;
  /** The verdict last offered for a failed terminal command. */
  lastOffer(): string | undefined;
}

export async function activate(context: vscode.ExtensionContext): Promise<FirstfaultApi> {
  const log = vscode.window.createOutputChannel("firstfault", { log: true });
  const server = new Server(context, log);
  const status = new Status();
  let matcher = new LinkMatcher([]);
  const diskLogs = new DiskLogs(async (uri, token, baseline) => {
    const argument = baseline?.length ? { uri: uri.toString(), baseline: baseline.map((b) => b.toString()) } : { uri: uri.toString() };
    const result = await server.commandCancellable<{ cancelled: boolean; report?: Report }>(DIAGNOSE_FILE, token, argument);
    return result && !result.cancelled ? result.report : undefined;
  });

  const copy = async (text: string, what = "text") => {
    await vscode.env.clipboard.writeText(String(text));
    void vscode.window.setStatusBarMessage(`firstfault: copied the ${what}`, 3000);
  };
  const run = (command: VerifyCommand) => runVerification(command, copy);
  const reportView = new ReportView({ copy, run });

  const show = (report: Report, origin: Origin) => {
    reportView.show(report, origin);
  };
  const diagnoseDocument = async (uri: vscode.Uri) => {
    const name = uri.scheme === "file" ? uri.fsPath : uri.toString();
    const result = await server.command<{ report: Report }>(DIAGNOSE, { uri: uri.toString() });
    if (result) show(result.report, { subject: name, name, document: uri, lineOffset: 0 });
  };
  const diagnoseText = async (text: string, name: string): Promise<Report | undefined> => {
    const result = await server.command<{ report: Report }>(DIAGNOSE, { text, name });
    return result?.report;
  };
  const withErrors = <A extends unknown[]>(fn: (...args: A) => Promise<unknown>) => async (...args: A) => {
    try {
      await fn(...args);
    } catch (error) {
      log.error(String(error instanceof Error ? error.stack : error));
      void vscode.window.showErrorMessage(`firstfault: ${error instanceof Error ? error.message : error}`);
    }
  };

  const terminals = new Terminals({
    diagnose: diagnoseText,
    show: (report, subject, name) => show(report, { subject, name }),
    literals: () => matcher,
    log,
  });

  const updateStatus = () => {
    const uri = activeLogUri();
    if (!uri) return status.show(server.state, undefined);
    const disk = diskLogs.report(uri);
    const published = statusVerdict(vscode.languages.getDiagnostics(uri));
    status.show(server.state, (disk ? headline(disk) : published.verdict) ?? null, disk ? 0 : published.context);
  };
  const checkLargeTabs = () => {
    if (server.state === "running") void withErrors(() => diskLogs.checkTabs())();
  };

  const loadLiterals = async () => {
    const literals = await server.command<Literal[]>(LITERALS).catch(() => undefined);
    matcher = new LinkMatcher(literals ?? []);
  };

  let resolveRunning: () => void;
  let running = new Promise<void>((resolve) => (resolveRunning = resolve));
  context.subscriptions.push(
    log, server, status, reportView, terminals, diskLogs,
    diskLogs.onDidChange(updateStatus),
    server.onState((state) => {
      updateStatus();
      if (state === "running") {
        void loadLiterals().then(() => resolveRunning());
        checkLargeTabs();
      } else if (state === "starting") {
        running = new Promise<void>((resolve) => (resolveRunning = resolve));
      }
    }),
    vscode.window.onDidChangeActiveTextEditor(updateStatus),
    vscode.window.tabGroups.onDidChangeTabs(() => {
      updateStatus();
      checkLargeTabs();
    }),
    vscode.languages.onDidChangeDiagnostics(updateStatus),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("firstfault.interpreter")) void server.restart("firstfault.interpreter changed");
      else if (e.affectsConfiguration("firstfault")) server.pushSettings();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void server.restart("the workspace is now trusted")),

    vscode.commands.registerCommand("firstfault.diagnoseSelection", withErrors(async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) {
        void vscode.window.showInformationMessage("firstfault: open a log or select a traceback first (or use Diagnose File...).");
        return;
      }
      const doc = editor.document;
      const name = doc.uri.scheme === "file" ? doc.uri.fsPath : doc.uri.toString();
      const selection = editor.selection;
      if (selection.isEmpty) return diagnoseDocument(doc.uri);
      // Whole lines, so the reader sees each line's rank prefix.
      const range = new vscode.Range(selection.start.line, 0, selection.end.line, doc.lineAt(selection.end.line).range.end.character);
      const report = await diagnoseText(doc.getText(range), name);
      const subject = `${name}, lines ${selection.start.line + 1}–${selection.end.line + 1}`;
      if (report) show(report, { subject, name, document: doc.uri, lineOffset: selection.start.line });
    })),
    vscode.commands.registerCommand("firstfault.diagnoseLastTerminalCommand", withErrors((terminal?: vscode.Terminal) => terminals.diagnoseLast(terminal))),
    vscode.commands.registerCommand("firstfault.diagnoseTerminalSelection", withErrors((terminal?: vscode.Terminal) => terminals.diagnoseSelection(terminal instanceof Object && "sendText" in terminal ? terminal : undefined))),
    vscode.commands.registerCommand("firstfault.diagnoseClipboard", withErrors(async () => {
      const text = await vscode.env.clipboard.readText();
      if (!text.trim()) {
        void vscode.window.showInformationMessage("firstfault: the clipboard is empty. Copy a traceback or the failing part of a log first.");
        return;
      }
      const report = await diagnoseText(text, "<clipboard>");
      if (report) show(report, { subject: "the clipboard", name: "<clipboard>" });
    })),
    vscode.commands.registerCommand("firstfault.diagnoseFile", withErrors(async (uri?: vscode.Uri) => {
      const picked = uri instanceof vscode.Uri ? [uri] : await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: "Diagnose", title: "firstfault: diagnose a log file" });
      if (!picked?.length) return;
      const report = await diskLogs.diagnose(picked[0]);
      if (report) show(report, { subject: picked[0].fsPath, name: picked[0].fsPath });
    })),
    vscode.commands.registerCommand("firstfault.diagnoseFolder", withErrors(async (uri?: vscode.Uri) => {
      // A job's folder: torchrun --log-dir trees, per-rank logs, error.json files, Flight Recorder dumps.
      const picked = uri instanceof vscode.Uri ? [uri] : await vscode.window.showOpenDialog({ canSelectFiles: false, canSelectFolders: true, canSelectMany: false, openLabel: "Diagnose", title: "firstfault: diagnose a job's folder" });
      if (!picked?.length) return;
      const report = await diskLogs.diagnose(picked[0]);
      if (report) show(report, { subject: picked[0].fsPath, name: picked[0].fsPath });
    })),
    vscode.commands.registerCommand("firstfault.compareWithGoodRun", withErrors(async (uri?: vscode.Uri, good?: vscode.Uri[]) => {
      // The failed run: the file or folder the command was invoked on, else the active log, else ask.
      const failed = uri instanceof vscode.Uri ? uri : activeLogUri() ?? (await vscode.window.showOpenDialog({ canSelectFiles: true, canSelectFolders: true, canSelectMany: false, openLabel: "Failed run", title: "firstfault: the failed run's log or folder" }))?.[0];
      if (!failed) return;
      const baseline = good?.length ? good : await vscode.window.showOpenDialog({ canSelectFiles: true, canSelectFolders: true, canSelectMany: true, openLabel: "Compare", title: `firstfault: a run that worked, to compare ${failed.fsPath.split(/[\\/]/).pop()} with` });
      if (!baseline?.length) return;
      const report = await diskLogs.diagnose(failed, baseline);
      if (report) show(report, { subject: `${failed.fsPath} (compared with ${baseline.map((b) => b.fsPath).join(", ")})`, name: failed.fsPath });
    })),
    vscode.commands.registerCommand("firstfault.showReport", withErrors(async () => {
      const uri = activeLogUri();
      const disk = uri && diskLogs.report(uri);
      if (uri && disk) {
        show(disk, { subject: uri.fsPath, name: uri.fsPath });
      } else if (uri && vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString())) {
        await diagnoseDocument(uri);
      } else if (reportView.current) {
        show(reportView.current.report, reportView.current.origin);
      } else {
        void vscode.window.showInformationMessage("firstfault: no report yet. Open a log, or run Diagnose Selection, Diagnose File... or Diagnose Last Terminal Command.");
      }
    })),
    vscode.commands.registerCommand("firstfault.restartServer", withErrors(() => server.restart("asked by the user"))),
    vscode.commands.registerCommand("firstfault.showLog", () => log.show()),
    vscode.commands.registerCommand("firstfault.openExample", withErrors(async (name = "oom-cascade/train.log") => {
      const uri = vscode.Uri.joinPath(context.extensionUri, "examples", String(name));
      await vscode.window.showTextDocument(uri, { preview: false });
    })),
    // The commands the server's code actions, lenses and hovers call.
    vscode.commands.registerCommand("firstfault.copyToClipboard", withErrors((text: string, what?: string) => copy(text, what))),
    vscode.commands.registerCommand("firstfault.runInTerminal", withErrors((command: VerifyCommand) => run(command))),
    vscode.commands.registerCommand("firstfault.openReference", withErrors(async (_id: string, url: string) => {
      if (typeof url === "string" && /^https?:\/\//.test(url)) await vscode.env.openExternal(vscode.Uri.parse(url));
    })),
    vscode.commands.registerCommand("firstfault.revealLine", withErrors(async (uri: string, line: number) => {
      await revealLocation({ subject: "", name: "" }, vscode.Uri.parse(uri).fsPath, Number(line) + 1);
    })),
  );
  updateStatus();
  void server.start();
  void server.watchPythonExtension().then((watch) => watch && context.subscriptions.push(watch));
  return {
    serverState: () => server.state,
    whenRunning: () => running,
    currentReport: () => reportView.current,
    lastOffer: () => terminals.lastOffer,
  };
}

export function deactivate(): void {
  // Subscriptions stop the server.
}

function activeLogUri(): vscode.Uri | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor?.document.languageId === "log") return editor.document.uri;
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputText && !editor ? input.uri : undefined;
}

/**
 * Runs a verification command only after the user has read it and said yes. The argv runs directly,
 * with no shell in between, so values captured from the log are never parsed by one.
 */
async function runVerification(command: VerifyCommand, copy: (text: string, what: string) => Promise<void>): Promise<void> {
  if (!command || !Array.isArray(command.argv) || command.argv.length === 0 || !command.argv.every((a) => typeof a === "string")) {
    throw new Error("this verification command is malformed; nothing was run.");
  }
  // Copy only: nothing runs in an untrusted workspace, nor a command with parts the log did not tell.
  const copyOnly = !vscode.workspace.isTrusted ? "firstfault runs nothing in an untrusted workspace."
    : !command.complete ? "This command has parts the log did not tell (<…>); fill them in before running it."
    : undefined;
  const choice = await vscode.window.showWarningMessage(copyOnly ?? `Run "${command.title}" in a new terminal?`,
    { modal: true, detail: command.command }, ...(copyOnly ? ["Copy"] : ["Run", "Copy"]));
  if (choice === "Copy") await copy(command.command, "verification command");
  if (choice === "Run") openVerificationTerminal(command, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
}
