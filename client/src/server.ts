import * as fs from "fs";
import * as path from "path";
import { execFile } from "child_process";
import * as vscode from "vscode";
import { CloseAction, ErrorAction, ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, State } from "vscode-languageclient/node";
import { serverArgs } from "./launch";
import { Candidate, findInterpreter, Found, noInterpreterMessage, Probe, VERSION_PROBE } from "./python";
import { RestartPolicy } from "./restartPolicy";
import { effective, interpreterSetting, serverSettings } from "./settings";

export type ServerState = "starting" | "running" | "stopped" | "failed" | "no-python";

/** Client commands the server's code actions and lenses call; hover links may call them too. */
export const CLIENT_COMMANDS = ["firstfault.copyToClipboard", "firstfault.runInTerminal", "firstfault.openReference", "firstfault.revealLine"];

/**
 * Owns the language server process: finds Python, starts `firstfault lsp` on it from the bundled
 * libraries (see launch.ts), restarts it when it dies (bounded, with backoff) and when a launch
 * setting changes. Everything else talks to it through `request`.
 */
export class Server implements vscode.Disposable {
  client: LanguageClient | undefined;
  interpreter: Found | undefined;
  private readonly policy = new RestartPolicy();
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  readonly onState = this.stateEmitter.event;
  state: ServerState = "stopped";
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private toldNoPython = false;

  constructor(private readonly context: vscode.ExtensionContext, readonly log: vscode.LogOutputChannel) {}

  async start(): Promise<void> {
    this.setState("starting");
    const interpreter = await this.findPython();
    if (!interpreter) return;
    this.interpreter = interpreter;
    const libs = this.libraryPath();
    const [command, ...prefix] = interpreter.command;
    const serverOptions: ServerOptions = { command, args: [...prefix, ...serverArgs(libs)] };
    const clientOptions: LanguageClientOptions = {
      // Logs of any name: files, untitled buffers (Diagnose Clipboard) and remote files alike.
      documentSelector: [{ language: "log" }],
      outputChannel: this.log,
      // The commands this client implements: the server offers them in code actions and lenses.
      initializationOptions: { firstfault: { ...this.settings().firstfault, clientCommands: CLIENT_COMMANDS } },
      markdown: { isTrusted: { enabledCommands: CLIENT_COMMANDS }, supportHtml: false },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          this.scheduleRestart();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    this.log.info(`starting the server: ${interpreter.command.join(" ")} (Python ${interpreter.version}, ${interpreter.origin}) with ${libs}`);
    const client = new LanguageClient("firstfault", "firstfault", serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.setState("running");
    });
    try {
      await client.start();
    } catch (error) {
      this.log.error(`the server did not start: ${error}`);
      this.scheduleRestart();
    }
  }

  async restart(reason: string): Promise<void> {
    this.log.info(`restarting the server: ${reason}`);
    this.policy.reset();
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = undefined;
    if (client) {
      this.stopping = true;
      try {
        await client.stop(5000);
      } catch (error) {
        this.log.warn(`stopping the server: ${error}`);
      } finally {
        this.stopping = false;
      }
    }
    this.setState("stopped");
  }

  /** Sends settings that don't change how the server starts to the running server. */
  pushSettings(): void {
    void this.client?.sendNotification("workspace/didChangeConfiguration", { settings: this.settings() });
  }

  async command<T>(command: string, ...args: unknown[]): Promise<T | undefined> {
    return this.commandCancellable<T>(command, undefined, ...args);
  }

  async commandCancellable<T>(command: string, token: vscode.CancellationToken | undefined, ...args: unknown[]): Promise<T | undefined> {
    const client = await this.running();
    const params = { command, arguments: args };
    return (await (token ? client.sendRequest(ExecuteCommandRequest.type, params, token) : client.sendRequest(ExecuteCommandRequest.type, params))) as T | undefined;
  }

  /** The client once the server runs; a command given while it starts waits for it. */
  private async running(): Promise<LanguageClient> {
    if (this.state === "starting") {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => { sub.dispose(); resolve(); }, 60_000);
        const sub = this.onState((state) => {
          if (state !== "starting") { clearTimeout(timer); sub.dispose(); resolve(); }
        });
      });
    }
    if (!this.client || this.state !== "running") {
      throw new Error(this.state === "no-python" ? "firstfault's server is not running: no suitable Python was found (see the log)." : `firstfault's server is ${this.state} (see the log, or run Restart Server).`);
    }
    return this.client;
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.stateEmitter.fire(state);
  }

  private scheduleRestart(): void {
    if (this.stopping) return;
    const delay = this.policy.crashed(Date.now());
    if (delay === undefined) {
      this.setState("failed");
      void vscode.window.showErrorMessage("firstfault's server stopped 6 times in 3 minutes and was not restarted. The log has its last words.", "Show Log", "Restart Server")
        .then((choice) => {
          if (choice === "Show Log") this.log.show();
          if (choice === "Restart Server") void this.restart("asked by the user");
        });
      return;
    }
    this.setState("starting");
    this.log.warn(`the server stopped; restarting in ${delay} ms`);
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      const old = this.client;
      this.client = undefined;
      void (old ? old.dispose(2000).catch(() => undefined) : Promise.resolve()).then(() => this.start());
    }, delay);
  }

  private libraryPath(): string {
    const bundled = this.context.asAbsolutePath(path.join("bundled", "libs"));
    // Running from a checkout (extension development): the package source, dependencies from the interpreter.
    return fs.existsSync(bundled) ? bundled : this.context.asAbsolutePath("server");
  }

  settings(): { firstfault: Record<string, unknown> } {
    const config = vscode.workspace.getConfiguration("firstfault");
    return serverSettings((key) => config.inspect(key), vscode.workspace.isTrusted);
  }

  /** Restarts on the Python extension's interpreter change when that is the interpreter in use. */
  async watchPythonExtension(): Promise<vscode.Disposable | undefined> {
    const environments = await pythonEnvironments();
    return environments?.onDidChangeActiveEnvironmentPath?.(() => {
      if (this.interpreter?.origin === "Python extension" || this.state === "no-python") void this.restart("the Python extension's interpreter changed");
    });
  }

  private async findPython(): Promise<Found | undefined> {
    const candidates: Candidate[] = [];
    const configured = interpreterSetting(effective(vscode.workspace.getConfiguration("firstfault").inspect("interpreter"), vscode.workspace.isTrusted));
    if (configured) candidates.push({ command: configured, origin: "setting firstfault.interpreter" });
    const fromExtension = await pythonExtensionInterpreter();
    if (fromExtension) candidates.push({ command: [fromExtension], origin: "Python extension" });
    candidates.push({ command: ["python3"], origin: "PATH" }, { command: ["python"], origin: "PATH" });
    const { found, rejected } = await findInterpreter(candidates, probe);
    for (const r of rejected) this.log.warn(`interpreter ${r.candidate.command.join(" ")} (${r.candidate.origin}) not used: ${r.reason}`);
    if (found) return found;
    this.setState("no-python");
    const message = noInterpreterMessage(rejected);
    this.log.error(message);
    if (!this.toldNoPython) {
      this.toldNoPython = true;
      void vscode.window.showErrorMessage(message, "Open Settings", "Show Log").then((choice) => {
        if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "firstfault.interpreter");
        if (choice === "Show Log") this.log.show();
      });
    }
    return undefined;
  }
}

const probe: Probe = (command) => new Promise((resolve) => {
  const [file, ...args] = command;
  execFile(file, [...args, "-c", VERSION_PROBE], { timeout: 15_000 }, (error, stdout, stderr) => {
    if (error) resolve({ error: (error as NodeJS.ErrnoException).code === "ENOENT" ? "was not found" : `failed: ${String(stderr || error.message).trim().split("\n").pop()}` });
    else resolve({ version: stdout.trim() });
  });
});

/** The Python extension's environments API, when it is installed. */
async function pythonEnvironments(): Promise<any | undefined> {
  const extension = vscode.extensions.getExtension("ms-python.python");
  if (!extension) return undefined;
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api?.environments;
  } catch {
    return undefined;
  }
}

/** The Python extension's selected interpreter for the first workspace folder. */
async function pythonExtensionInterpreter(): Promise<string | undefined> {
  try {
    const environments = await pythonEnvironments();
    if (!environments) return undefined;
    const active = environments.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
    const resolved = await environments.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath;
  } catch {
    return undefined;
  }
}
