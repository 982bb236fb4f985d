import { test } from "node:test";
import assert from "node:assert/strict";
import { effective, interpreterSetting, Inspected, serverSettings } from "../../src/settings";

const config: Record<string, Inspected<unknown>> = {
  signatureDirectories: { defaultValue: [], globalValue: ["/home/me/sigs"], workspaceValue: ["./evil-sigs"] },
  maxDiagnosticsPerFile: { defaultValue: 500, workspaceValue: 50 },
  minimumSeverity: { defaultValue: "hint" },
  debounceMs: { defaultValue: 300 },
  disabledReferences: { defaultValue: [], workspaceFolderValue: ["gloo-connect-timeout"] },
};
const inspect = (key: string) => config[key];

test("trusted: the most specific level wins for every setting", () => {
  assert.deepEqual(serverSettings(inspect, true), { firstfault: {
    trusted: true, signatureDirectories: ["./evil-sigs"], disabledReferences: ["gloo-connect-timeout"],
    maxDiagnosticsPerFile: 50, minimumSeverity: "hint", debounceMs: 300 } });
});

test("untrusted: workspace-level signature directories are ignored, harmless settings still apply", () => {
  const { firstfault } = serverSettings(inspect, false);
  assert.deepEqual(firstfault.signatureDirectories, ["/home/me/sigs"]);
  assert.equal(firstfault.maxDiagnosticsPerFile, 50);
  assert.equal(firstfault.trusted, false);
});

test("untrusted: a workspace interpreter is not used", () => {
  const interpreter = { defaultValue: [], workspaceValue: ["./venv/bin/python"] };
  assert.deepEqual(effective(interpreter, false), []);
  assert.deepEqual(effective(interpreter, true), ["./venv/bin/python"]);
});

test("the interpreter setting is a list of strings or one path; anything else means unset", () => {
  assert.deepEqual(interpreterSetting(["uv", "run", "python"]), ["uv", "run", "python"]);
  assert.deepEqual(interpreterSetting(" /usr/bin/python3.12 "), ["/usr/bin/python3.12"]);
  assert.equal(interpreterSetting([]), undefined);
  assert.equal(interpreterSetting(["python", 3]), undefined);
  assert.equal(interpreterSetting(""), undefined);
});
