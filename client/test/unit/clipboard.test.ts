import { test } from "node:test";
import assert from "node:assert/strict";
import { copyThroughClipboard } from "../../src/clipboard";
import { exampleLine } from "./fixtures";

function fakeClipboard(initial: string) {
  const state = { text: initial, writes: [] as string[] };
  return { state, clipboard: { readText: async () => state.text, writeText: async (t: string) => { state.text = t; state.writes.push(t); } } };
}

test("returns the selection and puts the user's clipboard back", async () => {
  const selection = exampleLine("torch.OutOfMemoryError");
  const { state, clipboard } = fakeClipboard("what the user had copied");
  const text = await copyThroughClipboard(clipboard, async () => { state.text = selection; });
  assert.equal(text, selection);
  assert.equal(state.text, "what the user had copied");
});

test("nothing selected: the copy leaves the marker, the answer is undefined, the clipboard is restored", async () => {
  const { state, clipboard } = fakeClipboard("previous");
  const text = await copyThroughClipboard(clipboard, async () => undefined);
  assert.equal(text, undefined);
  assert.equal(state.text, "previous");
  assert.match(state.writes[0], /^firstfault-empty-selection-/);
});

test("the clipboard is restored even when the copy command fails", async () => {
  const { state, clipboard } = fakeClipboard("keep me");
  await assert.rejects(copyThroughClipboard(clipboard, async () => { throw new Error("no terminal"); }));
  assert.equal(state.text, "keep me");
});
