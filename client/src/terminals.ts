import * as vscode from "vscode";
import { copyThroughClipboard } from "./clipboard";
import { LinkMatcher } from "./links";
import { Once } from "./notices";
import { headline, Report } from "./report";
import { TerminalBuffers } from "./terminalBuffers";

export interface TerminalHost {
  /** Asks the server for a verdict on text; undefined when the server can't answer. */
  diagnose(text: string, name: string): Promise<Report | undefined>;
  show(report: Report, subject: string, name: string): void;
  literals(): LinkMatcher;
  log: vscode.LogOutputChannel;
}

interface FailureLink extends vscode.TerminalLink {
  terminal: vscode.Terminal;
  line: string;
}

export const ENABLE_SHELL_INTEGRATION =
  "Shell integration is not active in this terminal (sub-shells such as `srun --pty bash`, tmux and plain ssh don't have it). " +
  "Enable it by running `source \"$(code --locate-shell-integration-path bash)\"` in that shell (or add it to its rc file), " +
  "or select the output and run \"firstfault: Diagnose Terminal Selection\".";

/** Terminal output: per-terminal buffers fed by shell integration, failure notifications, links, selection. */
export class Terminals implements vscode.Disposable {
  readonly buffers = new TerminalBuffers<vscode.Terminal>();
  private readonly offered = new Once();
  /** The last verdict offered in a notification. */
  lastOffer: string | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly reading = new Map<vscode.Terminal, Promise<void>>();

  constructor(private readonly host: TerminalHost) {
    this.disposables.push(
      vscode.window.onDidStartTerminalShellExecution((e) => this.started(e)),
      vscode.window.onDidEndTerminalShellExecution((e) => void this.ended(e)),
      vscode.window.onDidCloseTerminal((t) => {
        this.buffers.forget(t);
        this.reading.delete(t);
      }),
      vscode.window.registerTerminalLinkProvider({
        provideTerminalLinks: (context) => this.links(context),
        handleTerminalLink: (link) => this.openLink(link as FailureLink),
      } satisfies vscode.TerminalLinkProvider),
    );
  }

  private started(event: vscode.TerminalShellExecutionStartEvent): void {
    this.buffers.start(event.terminal, event.execution.commandLine.value);
    // read() only yields what is written after its first call, so it is called here, at the start.
    const stream = event.execution.read();
    this.reading.set(event.terminal, (async () => {
      try {
        for await (const chunk of stream) this.buffers.append(event.terminal, chunk);
      } catch (error) {
        this.host.log.warn(`reading terminal output: ${error}`);
      }
    })());
  }

  private async ended(event: vscode.TerminalShellExecutionEndEvent): Promise<void> {
    // The end event can arrive before the stream's last chunk is read: let the reader finish (bounded,
    // in case a stream never closes).
    const reading = this.reading.get(event.terminal);
    if (reading) await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, 2000))]);
    this.reading.delete(event.terminal);
    const output = this.buffers.end(event.terminal, event.exitCode);
    if (!output || !output.exitCode || !this.host.literals().anyIn(output.text)) return;
    const report = await this.host.diagnose(output.text, `terminal: ${output.commandLine}`).catch(() => undefined);
    const top = report?.diagnoses[0];
    if (!report || !top) return;
    const key = `${top.id}|${top.initiator?.rank}|${top.initiator?.text}`;
    if (!this.offered.first(key)) return;
    const subject = `terminal "${event.terminal.name}": ${output.commandLine}`;
    this.lastOffer = headline(report);
    const choice = await vscode.window.showWarningMessage(`firstfault: ${this.lastOffer}`, "Show");
    if (choice === "Show") this.host.show(report, subject, `terminal: ${output.commandLine}`);
  }

  /** Diagnose Last Terminal Command. */
  async diagnoseLast(terminal = vscode.window.activeTerminal): Promise<void> {
    if (!terminal) {
      void vscode.window.showInformationMessage("firstfault: no terminal is active.");
      return;
    }
    const output = this.buffers.latest(terminal);
    if (!output) {
      const message = terminal.shellIntegration
        ? "firstfault: no command has run in this terminal since firstfault started (output from before can't be read; select it and use Diagnose Terminal Selection)."
        : `firstfault: ${ENABLE_SHELL_INTEGRATION}`;
      void vscode.window.showInformationMessage(message);
      return;
    }
    await this.diagnoseAndShow(output.text, `terminal: ${output.commandLine}`,
      `terminal "${terminal.name}": ${output.commandLine}${output.finished ? "" : " (still running)"}`);
  }

  /** Diagnose Terminal Selection: the terminal's copy command, through the clipboard, restored after. */
  async diagnoseSelection(terminal = vscode.window.activeTerminal): Promise<void> {
    if (!terminal) {
      void vscode.window.showInformationMessage("firstfault: no terminal is active.");
      return;
    }
    terminal.show(false);
    const text = await copyThroughClipboard(vscode.env.clipboard, () => vscode.commands.executeCommand("workbench.action.terminal.copySelection"));
    if (!text) {
      void vscode.window.showInformationMessage("firstfault: nothing is selected in the terminal. Select the failing output (a traceback, the lines around an NCCL error) and run this again.");
      return;
    }
    await this.diagnoseAndShow(text, `terminal selection (${terminal.name})`);
  }

  private links(context: vscode.TerminalLinkContext): FailureLink[] {
    return this.host.literals().find(context.line).map((m) => ({
      startIndex: m.start,
      length: m.length,
      tooltip: `firstfault: ${m.title} — open the verdict`,
      terminal: context.terminal,
      line: context.line,
    }));
  }

  private async openLink(link: FailureLink): Promise<void> {
    // The whole command output gives the verdict its context; without a buffer, the line alone.
    const output = this.buffers.latest(link.terminal);
    const text = output && output.text.includes(link.line.trim()) ? output.text : link.line;
    const name = output && text === output.text ? `terminal: ${output.commandLine}` : `terminal line (${link.terminal.name})`;
    await this.diagnoseAndShow(text, name);
  }

  private async diagnoseAndShow(text: string, name: string, subject = name): Promise<void> {
    const report = await this.host.diagnose(text, name);
    if (report) this.host.show(report, subject, name);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
