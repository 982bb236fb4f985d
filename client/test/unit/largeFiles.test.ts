import { test } from "node:test";
import assert from "node:assert/strict";
import { looksLikeLog } from "../../src/largeFiles";
import { Once } from "../../src/notices";

test("log names: the ones package.json adds to the log language", () => {
  for (const name of ["/x/train.log", "slurm-4242.out", "job.err", "/q/run.o123456", "C:\\logs\\rank3.LOG"]) assert.ok(looksLikeLog(name), name);
  for (const name of ["train.py", "notes.md", "out", "logo.png"]) assert.ok(!looksLikeLog(name), name);
});

test("a verdict is offered once", () => {
  const once = new Once(2);
  assert.deepEqual([once.first("a"), once.first("a"), once.first("b")], [true, false, true]);
  once.first("c"); // "a" falls out of the memory
  assert.ok(once.first("a"));
});
