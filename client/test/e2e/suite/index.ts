// Runs inside code-server's real extension host (see ../run.mjs): the full vscode API, the installed
// .vsix, its bundled server. Each check waits for what a user would wait for; the timeouts are guards
// against hanging, not timing assertions. Results go to FIRSTFAULT_E2E_RESULTS for the runner to print.
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import type { FirstfaultApi } from "../../../src/extension";

type Check = { name: string; run: () => Promise<void> };
const checks: Check[] = [];
const check = (name: string, run: () => Promise<void>) => checks.push({ name, run });

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, guardMs = 60_000): Promise<T> {
  const deadline = Date.now() + guardMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const workspace = () => vscode.workspace.workspaceFolders![0].uri;
const file = (...parts: string[]) => vscode.Uri.joinPath(workspace(), ...parts);
let api: FirstfaultApi;

const firstfault = (uri: vscode.Uri) => vscode.languages.getDiagnostics(uri).filter((d) => d.source === "firstfault");

check("the installed extension activates and starts its bundled server with no configuration", async () => {
  const extension = vscode.extensions.getExtension<FirstfaultApi>("firstfault.firstfault");
  assert(extension, "firstfault.firstfault is not installed");
  api = await extension.activate();
  await until("the server to run", async () => (await Promise.race([api.whenRunning().then(() => true), new Promise((r) => setTimeout(() => r(undefined), 500))])) as true | undefined, 90_000);
  assert(api.serverState() === "running", `server state ${api.serverState()}`);
});

const example = () => file("oom-cascade", "train.log");

check("diagnostics on the example log: the initiator is an Error with related collateral", async () => {
  const doc = await vscode.workspace.openTextDocument(example());
  assert(doc.languageId === "log", `language ${doc.languageId}`);
  await vscode.window.showTextDocument(doc);
  const errors = await until("an Error diagnostic", () => {
    const e = firstfault(example()).filter((d) => d.severity === vscode.DiagnosticSeverity.Error);
    return e.length ? e : undefined;
  });
  assert(errors.length === 1 && errors[0].range.start.line === 31, `errors at ${errors.map((e) => e.range.start.line)}`);
  assert(String(typeof errors[0].code === "object" ? errors[0].code.value : errors[0].code) === "cuda-oom", "code cuda-oom");
  const collateral = firstfault(example()).filter((d) => d.severity === vscode.DiagnosticSeverity.Information);
  assert(collateral.length > 0, "collateral diagnostics");
  assert(collateral.every((d) => d.relatedInformation?.some((r) => r.location.range.start.line === 31)), "collateral points at line 32");
});

check("hover on the first failure explains it: mechanism, fix, verification", async () => {
  const hovers = await vscode.commands.executeCommand<vscode.Hover[]>("vscode.executeHoverProvider", example(), new vscode.Position(31, 40));
  const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === "string" ? c : (c as vscode.MarkdownString).value))).join("\n");
  assert(/this line started the failure/i.test(text) && /out of memory/i.test(text), `hover: ${text.slice(0, 300)}`);
  assert(/expandable_segments/.test(text), "hover has the fix");
});

check("code actions on a collateral line: copy the fix, run a verification, go to the first failure", async () => {
  const line = (await vscode.workspace.openTextDocument(example())).getText().split("\n").findIndex((l) => l.includes("Watchdog caught"));
  const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>("vscode.executeCodeActionProvider", example(), new vscode.Range(line, 0, line, 5));
  const titles = actions.map((a) => a.title);
  for (const want of ["copy the fix", "in a terminal (asks first)", "go to the first failure (line 32)", "open the reference"]) {
    assert(titles.some((t) => t.includes(want)), `no action with "${want}" in ${JSON.stringify(titles)}`);
  }
  const goTo = actions.find((a) => a.title.includes("go to the first failure"))!;
  await vscode.commands.executeCommand(goTo.command!.command, ...(goTo.command!.arguments ?? []));
  await until("the cursor on line 32", () => vscode.window.activeTextEditor?.selection.active.line === 31 || undefined, 10_000);
});

check("Diagnose Selection on a pasted traceback opens the report with the verdict", async () => {
  const doc = await vscode.workspace.openTextDocument(file("realrun", "rank-raises.log"));
  const editor = await vscode.window.showTextDocument(doc);
  editor.selection = new vscode.Selection(0, 0, doc.lineCount - 1, 0);
  await vscode.commands.executeCommand("firstfault.diagnoseSelection");
  const shown = await until("a report", () => api.currentReport());
  const top = shown.report.diagnoses[0];
  assert(top.id === "python-exception-one-rank" && top.initiator?.rank === 1, `verdict ${top.id} rank ${top.initiator?.rank}`);
  const webview = await until("the report tab", () => vscode.window.tabGroups.all.flatMap((g) => g.tabs)
    .find((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.includes("firstfault.report")));
  assert(webview.label.startsWith("firstfault"), `tab ${webview.label}`);
});

check("a failing terminal command whose output holds a known failure is offered for diagnosis", async () => {
  const terminal = vscode.window.createTerminal({ name: "e2e", cwd: workspace(), shellPath: "/bin/bash" });
  terminal.show();
  const integration = await until("shell integration", () => terminal.shellIntegration, 60_000);
  integration.executeCommand("cat oom-cascade/train.log; false");
  const offer = await until("the notification", () => api.lastOffer(), 60_000);
  assert(/rank 2 on gpu-node-a: CUDA out of memory/.test(offer), `offer: ${offer}`);
  await vscode.commands.executeCommand("firstfault.diagnoseLastTerminalCommand", terminal);
  const shown = await until("the terminal's report", () => (api.currentReport()?.origin.subject.startsWith('terminal "e2e"') ? api.currentReport() : undefined));
  assert(shown.report.diagnoses[0].id === "cuda-oom", `terminal verdict ${shown.report.diagnoses[0].id}`);

  // Diagnose Terminal Selection goes through the clipboard and puts the user's text back.
  await vscode.env.clipboard.writeText("the user's clipboard");
  terminal.show();
  await vscode.commands.executeCommand("workbench.action.terminal.selectAll");
  await vscode.commands.executeCommand("firstfault.diagnoseTerminalSelection", terminal);
  const selected = await until("the selection's report", () => (api.currentReport()?.origin.subject.startsWith("terminal selection") ? api.currentReport() : undefined));
  assert(selected.report.diagnoses[0].id === "cuda-oom", `selection verdict ${selected.report.diagnoses[0]?.id}`);
  assert((await vscode.env.clipboard.readText()) === "the user's clipboard", "clipboard restored");
  terminal.dispose();
});

check("a server that dies is restarted and the open log is diagnosed again", async () => {
  const { execFileSync } = await import("child_process");
  const children = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" })
    .split("\n").filter((l) => /bundled\/libs lsp\s*$/.test(l));
  assert(children.length === 1, `expected one server child, found: ${children.join(" | ")}`);
  const doc = await vscode.workspace.openTextDocument(example());
  await vscode.window.showTextDocument(doc);
  process.kill(Number(children[0].trim().split(/\s+/)[0]), "SIGKILL");
  await until("the server to be restarted", () => api.serverState() !== "running" || undefined, 30_000);
  await until("the server to run again", () => api.serverState() === "running" || undefined, 60_000);
  await until("diagnostics from the new server", () => firstfault(example()).some((d) => d.severity === vscode.DiagnosticSeverity.Error) || undefined);
  await vscode.commands.executeCommand("firstfault.restartServer");
  await until("the server to run after Restart Server", () => api.serverState() === "running" || undefined, 60_000);
});

check("the walkthrough's Open Example Log opens the bundled example, which gets its verdict", async () => {
  await vscode.commands.executeCommand("firstfault.openExample");
  const uri = await until("the example's editor", () => vscode.window.activeTextEditor?.document.uri.path.endsWith("examples/oom-cascade/train.log") ? vscode.window.activeTextEditor.document.uri : undefined, 30_000);
  await until("its first failure", () => firstfault(uri).some((d) => d.severity === vscode.DiagnosticSeverity.Error && d.range.start.line === 31) || undefined);
  const walkthroughs = vscode.extensions.getExtension("firstfault.firstfault")!.packageJSON.contributes.walkthroughs;
  assert(walkthroughs[0].steps.length === 3, "three ways in");
});

check("Diagnose Folder on a torchrun job: the Flight Recorder dump names the rank, the error file links to it", async () => {
  const job = file("torchrun-stall");
  await vscode.commands.executeCommand("firstfault.diagnoseFolder", job);
  const current = await until("the folder's report", () => api.currentReport()?.origin.subject === job.fsPath ? api.currentReport() : undefined, 60_000);
  const top = current.report.diagnoses[0];
  assert(top.id === "collective-lagging-rank-named" && top.initiator?.rank === 1, `verdict ${top.id} rank ${top.initiator?.rank}`);
  const dump = file("torchrun-stall", "fr", "nccl_trace_rank_1");
  const errorFile = vscode.Uri.file(current.report.inputs.find((i) => i.kind === "error-file")!.path);
  await until("diagnostics on the error file", () => firstfault(errorFile).length ? true : undefined);
  assert(firstfault(errorFile).some((d) => d.relatedInformation?.some((r) => r.location.uri.fsPath === dump.fsPath)), "error.json links to rank 1's dump");
});

check("Compare with a Good Run: the report says how far each run got and what only the failed run printed", async () => {
  const failed = file("jobs", "torchrun-raise");
  await vscode.commands.executeCommand("firstfault.compareWithGoodRun", failed, [file("jobs", "torchrun-ok")]);
  const current = await until("the comparison's report", () => api.currentReport()?.report.baseline ? api.currentReport() : undefined, 60_000);
  const c = current.report.baseline!;
  assert(c.phase === "the failed run reached step 2; the good run reached step 4", `phase: ${c.phase}`);
  assert(c.new_lines[0]?.startsWith("ValueError: corrupt shard"), `new: ${c.new_lines[0]}`);
});

check("a 60 MB log is diagnosed from its tab (VS Code does not sync it to extensions)", async () => {
  const big = file("big", "train-60mb.log");
  await vscode.commands.executeCommand("vscode.open", big);
  await until("the tab", () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === big.toString()), 30_000);
  assert(!vscode.workspace.textDocuments.some((d) => d.uri.toString() === big.toString()), "a 60 MB document should not be synced");
  const errors = await until("diagnostics for the big log", () => {
    const e = firstfault(big).filter((d) => d.severity === vscode.DiagnosticSeverity.Error);
    return e.length ? e : undefined;
  }, 240_000);
  assert(String(typeof errors[0].code === "object" ? errors[0].code.value : errors[0].code) === "cuda-oom", "big log verdict");
});

export async function run(): Promise<void> {
  const results: { name: string; ok: boolean; error?: string; ms: number }[] = [];
  for (const c of checks) {
    const start = Date.now();
    try {
      await c.run();
      results.push({ name: c.name, ok: true, ms: Date.now() - start });
    } catch (error) {
      results.push({ name: c.name, ok: false, error: String(error instanceof Error ? error.stack ?? error.message : error), ms: Date.now() - start });
    }
  }
  const out = process.env.FIRSTFAULT_E2E_RESULTS ?? path.join(require("os").tmpdir(), "firstfault-e2e-results.json");
  fs.writeFileSync(out, JSON.stringify(results, null, 2));
  if (results.some((r) => !r.ok)) throw new Error(`${results.filter((r) => !r.ok).length} end-to-end check(s) failed`);
}
