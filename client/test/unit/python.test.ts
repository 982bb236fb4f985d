import { test } from "node:test";
import assert from "node:assert/strict";
import { Candidate, findInterpreter, noInterpreterMessage, parseVersion, Probe } from "../../src/python";

const answers: Record<string, { version?: string; error?: string }> = {
  '["/opt/py39/bin/python"]': { version: "3.9.18" },
  '["uv","run","python"]': { version: "3.12.4" },
  '["python3"]': { version: "3.11.7" },
  '["python"]': { error: "was not found" },
  '["broken"]': { version: "" },
};
const probed: string[] = [];
const probe: Probe = async (command) => {
  probed.push(JSON.stringify(command));
  return answers[JSON.stringify(command)] ?? { error: "was not found" };
};
const path: Candidate[] = [{ command: ["python3"], origin: "PATH" }, { command: ["python"], origin: "PATH" }];

test("the setting comes first and a list of strings is a command", async () => {
  const { found } = await findInterpreter([{ command: ["uv", "run", "python"], origin: "setting firstfault.interpreter" }, ...path], probe);
  assert.deepEqual(found, { command: ["uv", "run", "python"], version: "3.12.4", origin: "setting firstfault.interpreter" });
});

test("a Python older than 3.11 is passed over, with the reason kept", async () => {
  const { found, rejected } = await findInterpreter([{ command: ["/opt/py39/bin/python"], origin: "Python extension" }, ...path], probe);
  assert.equal(found?.command[0], "python3");
  assert.equal(rejected[0].reason, "is Python 3.9.18");
});

test("each candidate is asked once even when listed twice", async () => {
  probed.length = 0;
  await findInterpreter([{ command: ["python"], origin: "setting firstfault.interpreter" }, { command: ["python"], origin: "PATH" }], probe);
  assert.deepEqual(probed, ['["python"]']);
});

test("nothing fits: one message naming what was tried and what to do", async () => {
  const { found, rejected } = await findInterpreter([{ command: ["/opt/py39/bin/python"], origin: "Python extension" }, { command: ["broken"], origin: "PATH" }, { command: ["python"], origin: "PATH" }], probe);
  assert.equal(found, undefined);
  const message = noInterpreterMessage(rejected);
  assert.match(message, /needs Python 3\.11 or newer/);
  assert.match(message, /\/opt\/py39\/bin\/python \(Python extension\) is Python 3\.9\.18/);
  assert.match(message, /python \(PATH\) was not found/);
  assert.match(message, /firstfault\.interpreter/);
});

test("versions are read from the probe's output", () => {
  assert.deepEqual(parseVersion("3.13.0\n"), [3, 13, 0]);
  assert.equal(parseVersion("Python"), undefined);
});
