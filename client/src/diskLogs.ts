import { promises as fs } from "fs";
import * as vscode from "vscode";
import { looksLikeLog, SYNC_LIMIT } from "./largeFiles";
import { Report } from "./report";

export type DiagnoseFile = (uri: vscode.Uri, token: vscode.CancellationToken, baseline?: vscode.Uri[]) => Promise<Report | undefined>;

/**
 * Logs too big for VS Code to hand to extensions (over 50 MB): their tabs are noticed and the server
 * reads the file from disk, once per version of the file, with a cancellable progress notification.
 */
export class DiskLogs {
  // A report-less entry is being read, or was cancelled, for that version of the file.
  private readonly reports = new Map<string, { report?: Report; mtime: number }>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly diagnoseFile: DiagnoseFile) {}

  report(uri: vscode.Uri): Report | undefined {
    return this.reports.get(uri.toString())?.report;
  }

  /** Diagnose File... and Diagnose Folder...: any file or folder, now; with a baseline, compared with a good run. */
  async diagnose(uri: vscode.Uri, baseline?: vscode.Uri[]): Promise<Report | undefined> {
    const mtime = (await fs.stat(uri.fsPath)).mtimeMs;
    const report = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `firstfault: reading ${uri.fsPath.split(/[\\/]/).pop()}`, cancellable: true },
      (_progress, token) => this.diagnoseFile(uri, token, baseline));
    if (report) {
      this.reports.set(uri.toString(), { report, mtime });
      this.changed.fire();
    }
    return report;
  }

  /** Looks at every open tab; big unsynced logs not read in their current version are read now. */
  async checkTabs(): Promise<void> {
    const synced = new Set(vscode.workspace.textDocuments.map((d) => d.uri.toString()));
    const uris = vscode.window.tabGroups.all.flatMap((g) => g.tabs)
      .map((t) => (t.input instanceof vscode.TabInputText ? t.input.uri : undefined))
      .filter((u): u is vscode.Uri => !!u && u.scheme === "file" && looksLikeLog(u.fsPath) && !synced.has(u.toString()));
    for (const uri of uris) {
      const stat = await fs.stat(uri.fsPath).catch(() => undefined);
      if (!stat || this.reports.get(uri.toString())?.mtime === stat.mtimeMs) continue;
      if (stat.size <= SYNC_LIMIT) continue;
      this.reports.set(uri.toString(), { mtime: stat.mtimeMs });
      await this.diagnose(uri);
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}
