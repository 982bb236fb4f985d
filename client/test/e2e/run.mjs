// End-to-end: installs the built linux-x64 .vsix into a real VS Code (code-server 4.100.3, installed by
// client/scripts/install-code-server.sh), runs client/test/e2e/suite inside its extension host through
// the `payload` URL in headless Chromium, then drives the UI with Playwright as a person would (Problems
// panel, hover, quick fixes, report view) and saves screenshots to build/e2e/. Prints "N passed, N failed".
import { execFileSync, spawn } from "child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "fs";
import { createServer } from "net";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { chromium } from "playwright-core";

const ROOT = resolve(".");
const VSIX = join(ROOT, "build", "firstfault-linux-x64.vsix");
const SHOTS = join(ROOT, "build", "e2e");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const log = (...args) => console.error("e2e:", ...args);

if (!existsSync(VSIX)) {
  console.error(`e2e: ${VSIX} is missing: run npm run package first`);
  process.exit(2);
}
if (!existsSync(join(ROOT, "client", "out", "test", "e2e", "suite", "index.js"))) {
  console.error("e2e: the suite is not built: run node client/build.mjs --tests");
  process.exit(2);
}

const installDir = execFileSync("bash", [join(ROOT, "client", "scripts", "install-code-server.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim().split("\n").pop();
const entry = join(installDir, "node_modules", "code-server", "out", "node", "entry.js");

// A workspace under a path with spaces and non-ASCII, as users have.
const base = mkdtempSync(join(tmpdir(), "firstfault e2e "));
const ws = join(base, "wörk space");
const extensions = join(base, "extensions");
const userData = join(base, "user-data");
mkdirSync(join(ws, "oom-cascade"), { recursive: true });
mkdirSync(join(ws, "realrun"), { recursive: true });
mkdirSync(join(ws, "big"), { recursive: true });
copyFileSync(join(ROOT, "examples", "oom-cascade", "train.log"), join(ws, "oom-cascade", "train.log"));
copyFileSync(join(ROOT, "tests", "fixtures", "realrun", "rank-raises.log"), join(ws, "realrun", "rank-raises.log"));
cpSync(join(ROOT, "examples", "torchrun-stall"), join(ws, "torchrun-stall"), { recursive: true });
for (const job of ["torchrun-raise", "torchrun-ok"]) cpSync(join(ROOT, "examples", job), join(ws, "jobs", job), { recursive: true });
execFileSync("python3", [join(ROOT, "bench", "generate.py"), join(ws, "big", "train-60mb.log"), "--size-mb", "60", "--ranks", "64"], { stdio: "inherit" });
mkdirSync(join(userData, "User"), { recursive: true });
writeFileSync(join(userData, "User", "settings.json"), JSON.stringify({
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "terminal.integrated.shellIntegration.enabled": true,
  "terminal.integrated.defaultProfile.linux": "bash",
  "terminal.integrated.gpuAcceleration": "off", // DOM rows, so the UI checks can read the terminal
  "workbench.colorTheme": "Default Dark Modern",
}, null, 2));

log("installing", VSIX);
execFileSync("node", [entry, "--extensions-dir", extensions, "--user-data-dir", userData, "--install-extension", VSIX], { stdio: "inherit" });
const installed = readdirSync(extensions).find((d) => d.startsWith("firstfault.firstfault-"));
if (!installed) throw new Error(`the .vsix did not install into ${extensions}`);
const extensionPath = join(extensions, installed);

const port = await new Promise((res) => {
  const s = createServer();
  s.listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => res(p));
  });
});
const resultsFile = join(base, "results.json");
const server = spawn("node", [entry, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry", "--disable-update-check",
  "--disable-workspace-trust", "--extensions-dir", extensions, "--user-data-dir", userData, ws], {
  env: { ...process.env, FIRSTFAULT_E2E_RESULTS: resultsFile, SHELL: "/bin/bash" }, stdio: ["ignore", "pipe", "pipe"],
});
let serverOutput = "";
server.stdout.on("data", (d) => (serverOutput += d));
server.stderr.on("data", (d) => (serverOutput += d));
const origin = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${origin}/healthz`)).ok) break;
  } catch { /* not yet */ }
  if (i > 300) throw new Error(`code-server did not start:\n${serverOutput}`);
  await new Promise((r) => setTimeout(r, 100));
}
log(`code-server on ${origin}, workspace ${ws}`);

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
let passed = 0, failed = 0;
const report = (ok, name, detail = "") => {
  ok ? passed++ : failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? `\n     ${detail.split("\n").join("\n     ")}` : ""}`);
};
const remote = (p) => `vscode-remote://127.0.0.1:${port}${encodeURI(p)}`;

try {
  // 1. The suite inside the extension host.
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  const page = await context.newPage();
  const exitCode = new Promise((res) => page.exposeFunction("codeAutomationExit", (code) => res(code)));
  const payload = JSON.stringify([["extensionDevelopmentPath", remote(extensionPath)], ["extensionTestsPath", remote(join(ROOT, "client", "out", "test", "e2e", "suite"))]]);
  await page.goto(`${origin}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(payload)}`);
  const code = await Promise.race([exitCode, new Promise((res) => setTimeout(() => res("timeout"), 15 * 60_000))]);
  if (existsSync(resultsFile)) {
    for (const r of JSON.parse(readFileSync(resultsFile, "utf8"))) report(r.ok, `${r.name} (${(r.ms / 1000).toFixed(1)} s)`, r.error);
  } else {
    report(false, "extension host suite", `no results (exit ${code})\n${serverOutput.slice(-3000)}`);
  }
  await context.close();

  // 2. What a person sees.
  await uiChecks(browser, origin, ws, report);
} finally {
  await browser.close();
  server.kill();
  if (!process.env.FIRSTFAULT_E2E_KEEP) rmSync(base, { recursive: true, force: true });
}
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

async function uiChecks(browser, origin, ws, report) {
  mkdirSync(SHOTS, { recursive: true });
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  const page = await context.newPage();
  const step = async (name, fn) => {
    try {
      await fn();
      report(true, `UI: ${name}`);
    } catch (error) {
      await page.screenshot({ path: join(SHOTS, `failed-${name.replace(/\W+/g, "-")}.png`) }).catch(() => {});
      report(false, `UI: ${name}`, String(error?.message ?? error).slice(0, 1500));
    }
  };
  let reportFrame;
  await page.goto(`${origin}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 120_000 });
  // The quick input: ">command", ":line" or a file name, typed over whatever prefix it opened with.
  const quickInput = async (text) => {
    await page.keyboard.press("F1");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor();
    await input.fill(text);
    // Files and commands are looked up as you type: wait for the row before choosing it.
    if (!text.startsWith(":")) await page.locator(".quick-input-list .monaco-list-row").first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(400);
    await page.keyboard.press("Enter");
    await page.waitForTimeout(300);
  };

  await step("the Problems panel lists the first failure as an error; the lens on line 1 and the status bar say it", async () => {
    await quickInput("oom-cascade/train.log");
    await page.waitForSelector(".monaco-editor .squiggly-error", { timeout: 120_000 });
    const lens = page.locator(".monaco-editor .codelens-decoration", { hasText: "first failure: CUDA out of memory" }).first();
    await lens.waitFor({ timeout: 30_000 });
    // The status bar names the current log's first failure.
    await page.locator(".statusbar-item", { hasText: "First failure: CUDA out of memory" }).first().waitFor({ timeout: 30_000 });
    await quickInput(">View: Focus Problems");
    const row = page.locator(".markers-panel .monaco-list-row", { hasText: "CUDA out of memory" }).first();
    await row.waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, "problems.png") });
  });

  await step("hover on line 32 shows the verdict", async () => {
    await quickInput(":32:40");
    await quickInput(">Show or Focus Hover");
    const hover = page.locator(".monaco-hover", { hasText: "out of memory" }).first();
    await hover.waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, "hover.png") });
    await page.keyboard.press("Escape");
  });

  await step("the quick fix list offers the fix and the verification commands", async () => {
    await quickInput(":38");
    await page.keyboard.press("Control+.");
    const widget = page.locator(".action-widget", { hasText: "go to the first failure" }).first();
    await widget.waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, "quick-fixes.png") });
    await page.keyboard.press("Escape");
  });

  await step("the report view shows the verdict and the timeline", async () => {
    await quickInput(":1");
    await quickInput(">firstfault: Show Report");
    const frame = await until(async () => {
      for (const f of page.frames()) {
        if (await f.locator("svg.timeline").count().catch(() => 0)) return f;
      }
      return undefined;
    }, 60_000);
    const verdict = await frame.locator(".verdict").innerText();
    if (!/rank 2 on gpu-node-a/.test(verdict)) throw new Error(`verdict: ${verdict}`);
    await quickInput(">View: Close Panel");
    // At 1280x720 beside the log, the fix is on the first screen, above the evidence and the collateral.
    const fix = await frame.locator("h2", { hasText: /^Fix/ }).boundingBox();
    const collateral = await frame.locator("h2", { hasText: /^Collateral/ }).boundingBox();
    if (!fix || fix.y > 720 || !collateral || collateral.y < fix.y) throw new Error(`fix at ${fix?.y}, collateral at ${collateral?.y}`);
    await page.screenshot({ path: join(SHOTS, "report-top.png") });
    await frame.locator("svg.timeline").scrollIntoViewIfNeeded();
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(SHOTS, "report.png") });
    reportFrame = frame;
  });

  await step("Run on a verification command shows it and asks first; Cancel runs nothing, Run opens its terminal", async () => {
    const title = "Find every out-of-memory line in the log";
    const run = reportFrame.locator(".verify", { hasText: title }).locator("button.run");
    await run.click();
    const dialog = page.locator(".monaco-dialog-box", { hasText: title });
    await dialog.waitFor({ timeout: 30_000 });
    if (!(await dialog.innerText()).includes("rg -n -F 'CUDA out of memory'")) throw new Error(`the dialog does not show the command: ${await dialog.innerText()}`);
    await page.screenshot({ path: join(SHOTS, "run-asks-first.png") });
    await dialog.locator(".monaco-button", { hasText: "Cancel" }).click();
    await page.waitForTimeout(1000);
    if (await page.getByText(`firstfault: ${title}`).count()) throw new Error("a terminal was opened after Cancel");
    await run.click();
    await dialog.waitFor({ timeout: 30_000 });
    await dialog.locator(".monaco-button", { hasText: /^Run$/ }).click();
    // The terminal stays open with the command's output and exit code (xterm's DOM renderer, see settings).
    const rows = page.locator(".xterm-rows", { hasText: "[firstfault: exit code 0]" }).first();
    await rows.waitFor({ timeout: 30_000 });
    const output = await rows.innerText();
    if (!/32:\[rank2\]: torch\.OutOfMemoryError: CUDA out of memory/.test(output)) throw new Error(`terminal output: ${output.slice(0, 500)}`);
    await page.screenshot({ path: join(SHOTS, "run-terminal.png") });
  });
  await step("a failure line in a terminal is a link that opens its verdict", async () => {
    await quickInput(">Terminal: Create New Terminal");
    await page.locator(".xterm-rows").last().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(1500);
    await page.keyboard.type("grep -m1 OutOfMemoryError oom-cascade/train.log\n");
    await page.locator(".xterm-rows", { hasText: "CUDA out of memory" }).last().waitFor({ timeout: 30_000 });
    // The link covers the literal; find where "CUDA out of memory" is drawn and Ctrl+click it.
    const point = await page.evaluate(() => {
      for (const rows of document.querySelectorAll(".xterm-rows")) {
        const walker = document.createTreeWalker(rows, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.textContent.indexOf("CUDA out of memory");
          if (at < 0) continue;
          const range = document.createRange();
          range.setStart(node, at + 2);
          range.setEnd(node, at + 3);
          const r = range.getBoundingClientRect();
          if (r.width > 0) return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
        }
      }
      return null;
    });
    if (!point) throw new Error("the failure line is not on screen");
    await page.mouse.move(point.x, point.y);
    await page.waitForTimeout(800);
    await page.keyboard.down("Control");
    await page.mouse.move(point.x + 1, point.y);
    await page.waitForTimeout(500);
    await page.mouse.click(point.x + 1, point.y);
    await page.keyboard.up("Control");
    const frame = await until(async () => {
      for (const f of page.frames()) {
        const subject = await f.locator(".subject").first().textContent({ timeout: 300 }).catch(() => "");
        if (subject?.startsWith("terminal")) return f;
      }
      return undefined;
    }, 60_000);
    const verdict = await frame.locator(".verdict").innerText();
    if (!/CUDA out of memory/.test(verdict)) throw new Error(`verdict: ${verdict}`);
    await page.screenshot({ path: join(SHOTS, "terminal-link.png") });
  });

  await context.close();
}

async function until(probe, guardMs) {
  const deadline = Date.now() + guardMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("gave up waiting");
    await new Promise((r) => setTimeout(r, 300));
  }
}
