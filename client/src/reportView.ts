import * as crypto from "crypto";
import * as vscode from "vscode";
import { Report, VerifyCommand } from "./report";
import { renderReport } from "./reportHtml";

/** Where a report's lines live: a document (plus the selection's first line) or files on disk. */
export interface Origin {
  /** What was diagnosed, as the page's heading says it. */
  subject: string;
  /** The input name the server was given (the report's `path` for its lines). */
  name: string;
  /** The document a selection or clipboard text came from; report line N is its line offset + N. */
  document?: vscode.Uri;
  lineOffset?: number;
}

export interface ReportActions {
  copy(text: string, what: string): Promise<void>;
  run(command: VerifyCommand): Promise<void>;
}

/** The report webview: one panel, reused; strict CSP, no remote resources, messages carry indices only. */
export class ReportView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private shown: { report: Report; origin: Origin } | undefined;

  constructor(private readonly actions: ReportActions) {}

  get current(): { report: Report; origin: Origin } | undefined {
    return this.shown;
  }

  show(report: Report, origin: Origin): void {
    this.shown = { report, origin };
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel("firstfault.report", "firstfault report", { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: true, localResourceRoots: [], retainContextWhenHidden: false });
      this.panel.onDidDispose(() => (this.panel = undefined));
      this.panel.webview.onDidReceiveMessage((message) => this.receive(message));
    }
    this.panel.title = `firstfault: ${shortSubject(origin.subject)}`;
    this.panel.webview.html = renderReport(report, {
      nonce: crypto.randomBytes(16).toString("base64"),
      cspSource: this.panel.webview.cspSource,
      canRun: vscode.workspace.isTrusted,
      subject: origin.subject,
    });
    this.panel.reveal(undefined, true);
  }

  private async receive(message: { type?: string; path?: string; line?: number; index?: number }): Promise<void> {
    const shown = this.shown;
    if (!shown) return;
    const top = shown.report.diagnoses[0];
    if (message.type === "reveal" && typeof message.line === "number" && message.line > 0) {
      await revealLocation(shown.origin, String(message.path ?? ""), message.line);
    } else if ((message.type === "copy" || message.type === "run") && top && typeof message.index === "number") {
      const command = top.verify[message.index];
      if (!command) return;
      if (message.type === "copy") await this.actions.copy(command.command, "verification command");
      else await this.actions.run(command);
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

/** Opens a report line: in the document it came from, else the file on disk it names. */
export async function revealLocation(origin: Origin, path: string, line: number): Promise<void> {
  let uri: vscode.Uri;
  let target = line - 1;
  if (origin.document && path === origin.name) {
    uri = origin.document;
    target += origin.lineOffset ?? 0;
  } else if (path && !path.startsWith("<")) {
    uri = vscode.Uri.file(path);
  } else {
    return;
  }
  // vscode.open rather than showTextDocument: it also opens logs too big to be synced to extensions.
  const position = new vscode.Position(target, 0);
  await vscode.commands.executeCommand("vscode.open", uri, { selection: new vscode.Range(position, position), preview: false, viewColumn: vscode.ViewColumn.One });
}

/** A tab title: a file's name for paths, else the start of the subject ("terminal: torchrun ..."). */
function shortSubject(subject: string): string {
  const isPath = /^(?:\/|[A-Za-z]:[\\/])/.test(subject);
  const short = isPath ? subject.split(/[\\/]/).pop() ?? subject : subject;
  return short.length > 40 ? `${short.slice(0, 39)}…` : short;
}
