// Unpacks the built linux-x64 .vsix and starts the language server from it, as the extension would,
// with every Python 3.11-3.13 this machine has and no other libraries on its path. The
// unpack folder has spaces and non-ASCII in its name on purpose.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { pathToFileURL } from "url";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { serverArgs } from "../../src/launch";

const ROOT = process.cwd();
const VSIX = join(ROOT, "build", "firstfault-linux-x64.vsix");

function unpack(): string {
  assert.ok(existsSync(VSIX), `${VSIX} is missing: run npm run package first`);
  const dir = mkdtempSync(join(tmpdir(), "fïrst fault vsix "));
  execFileSync("python3", ["-c", "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])", VSIX, dir]);
  return join(dir, "extension");
}

const extension = unpack();
const poisoned = mkdtempSync(join(tmpdir(), "poisoned-pythonpath-"));
mkdirSync(join(poisoned, "pygls"));
writeFileSync(join(poisoned, "pygls", "__init__.py"), "raise ImportError('the user environment leaked into the server')\n");

/** Interpreters to try: python3 on PATH and any pyenv-style python3.X this machine has. */
function pythons(): Map<string, string> {
  const found = new Map<string, string>();
  const candidates = ["python3", "python3.11", "python3.12", "python3.13"];
  const pyenv = join(process.env.HOME ?? "/root", ".pyenv", "versions");
  if (existsSync(pyenv)) for (const v of readdirSync(pyenv)) candidates.push(join(pyenv, v, "bin", "python3"));
  for (const c of candidates) {
    try {
      const version = execFileSync(c, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
      if (!found.has(version)) found.set(version, c);
    } catch { /* not here */ }
  }
  return found;
}

test("the package holds what the extension needs and nothing it must not", () => {
  const manifest = JSON.parse(readFileSync(join(extension, "package.json"), "utf8"));
  assert.equal(manifest.engines.vscode, "^1.93.0");
  assert.equal(manifest.enabledApiProposals, undefined);
  assert.ok(existsSync(join(extension, manifest.main)));
  assert.ok(existsSync(join(extension, "examples", "oom-cascade", "train.log")));
  const libs = readdirSync(join(extension, "bundled", "libs"));
  for (const abi of ["311", "312", "313"]) assert.ok(libs.some((f) => f.startsWith(`ahocorasick.cpython-${abi}-x86_64-linux-gnu`)), abi);
  for (const pkg of ["firstfault", "pygls", "lsprotocol", "attrs", "cattrs"]) assert.ok(libs.includes(pkg), pkg);
  assert.ok(existsSync(join(extension, "bundled", "libs", "firstfault", "signatures")), "signatures ship inside the package");
  assert.ok(!existsSync(join(extension, "node_modules")) && !existsSync(join(extension, "server")) && !existsSync(join(extension, "tests")));
});

/** Starts the bundled server as the extension does, opens the example, returns the diagnostics it publishes. */
async function diagnoseExample(python: string): Promise<{ line: number; severity: number; code: string }[]> {
  // A PYTHONPATH pointing at a broken package must not matter: the server starts isolated (-I).
  const env = { ...process.env, PYTHONPATH: poisoned };
  const child = spawn(python, serverArgs(join(extension, "bundled", "libs")), { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const example = join(extension, "examples", "oom-cascade", "train.log");
  const uri = pathToFileURL(example).href;
  const published = new Promise<{ line: number; severity: number; code: string }[]>((resolve) => {
    connection.onNotification("textDocument/publishDiagnostics", (params: { uri: string; diagnostics: { range: { start: { line: number } }; severity: number; code: string }[] }) => {
      if (params.uri === uri) resolve(params.diagnostics.map((d) => ({ line: d.range.start.line, severity: d.severity, code: d.code })));
    });
  });
  connection.listen();
  try {
    await connection.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {}, initializationOptions: { firstfault: { debounceMs: 0 } } });
    await connection.sendNotification("initialized", {});
    await connection.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "log", version: 1, text: readFileSync(example, "utf8") } });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    const diagnostics = await Promise.race([published, exited.then(() => { throw new Error(`server exited: ${stderr}`); })]);
    await connection.sendRequest("shutdown");
    await connection.sendNotification("exit");
    return diagnostics;
  } finally {
    connection.dispose();
    child.kill();
  }
}

const available = pythons();

test("python3 on PATH is one of the supported versions", () => {
  const supported = ["3.11", "3.12", "3.13"].filter((v) => available.has(v));
  assert.ok(supported.length >= 1, `no Python 3.11-3.13 found (have ${[...available.keys()].join(", ")})`);
});

for (const version of ["3.11", "3.12", "3.13"]) {
  test(`the bundled server runs on Python ${version} and finds the first failure of the example`, { skip: available.has(version) ? false : `no Python ${version} here`, timeout: 120_000 }, async () => {
    const diagnostics = await diagnoseExample(available.get(version)!);
    const errors = diagnostics.filter((d) => d.severity === 1);
    assert.deepEqual(errors.map((d) => [d.line, d.code]), [[31, "cuda-oom"]]);
    assert.ok(diagnostics.some((d) => d.code === "collective-timeout" && d.severity === 3));
  });
}
