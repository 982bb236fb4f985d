import * as vscode from "vscode";
import { ServerState } from "./server";

const NOT_RUNNING: Record<Exclude<ServerState, "running">, string> = {
  starting: "firstfault: starting the server",
  stopped: "firstfault: server stopped",
  failed: "firstfault: the server keeps stopping — see the log",
  "no-python": "firstfault: no Python 3.11+ found — see the log",
};

/** The status bar item: the server's state, and the current log's verdict when there is one. */
export class Status implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("firstfault.status", vscode.StatusBarAlignment.Left, 50);

  constructor() {
    this.item.name = "firstfault";
  }

  /** `verdict`: undefined when no log is active, null for a log with no first failure; `context`: lines that
   *  matched known messages without being a failure here. */
  show(state: ServerState, verdict: string | null | undefined, context = 0): void {
    const item = this.item;
    item.backgroundColor = undefined;
    if (state !== "running") {
      item.text = state === "starting" ? "$(sync~spin) firstfault" : "$(warning) firstfault";
      item.tooltip = NOT_RUNNING[state];
      item.command = state === "starting" ? undefined : "firstfault.showLog";
    } else if (verdict === undefined) {
      item.text = "$(pulse) firstfault";
      item.tooltip = "firstfault: open a log, or run Diagnose Selection / Last Terminal Command";
      item.command = "firstfault.showReport";
    } else if (verdict === null) {
      item.text = context ? `$(check) no failure found · ${context} line${context === 1 ? "" : "s"} of context` : "$(check) firstfault";
      item.tooltip = "firstfault: no failure found in this log" + (context
        ? `; ${context} line${context === 1 ? "" : "s"} matched known messages as context, not failures (hover them)` : "");
      item.command = "firstfault.showReport";
    } else {
      item.text = `$(error) ${verdict.length > 60 ? `${verdict.slice(0, 59)}…` : verdict}`;
      item.tooltip = `firstfault: ${verdict} — click for the report`;
      item.command = "firstfault.showReport";
      // A possible cause is tentative: a warning, not an error.
      item.backgroundColor = new vscode.ThemeColor(verdict.startsWith("Possible cause")
        ? "statusBarItem.warningBackground" : "statusBarItem.errorBackground");
    }
    item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
