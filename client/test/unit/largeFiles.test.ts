import { test } from "node:test";
import assert from "node:assert/strict";
import { looksLikeLog, needsDiskDiagnosis, SYNC_LIMIT } from "../../src/largeFiles";
import { Once } from "../../src/notices";

test("log names: the ones package.json adds to the log language", () => {
  for (const name of ["/x/train.log", "slurm-4242.out", "job.err", "/q/run.o123456", "C:\\logs\\rank3.LOG"]) assert.ok(looksLikeLog(name), name);
  for (const name of ["train.py", "notes.md", "out", "logo.png"]) assert.ok(!looksLikeLog(name), name);
});

test("only unsynced logs over VS Code's 50 MB limit are read from disk", () => {
  assert.ok(needsDiskDiagnosis("big.log", SYNC_LIMIT + 1, false));
  assert.ok(!needsDiskDiagnosis("big.log", SYNC_LIMIT + 1, true));
  assert.ok(!needsDiskDiagnosis("small.log", 1024, false));
  assert.ok(!needsDiskDiagnosis("big.bin", SYNC_LIMIT + 1, false));
});

test("a verdict is offered once", () => {
  const once = new Once(2);
  assert.deepEqual([once.first("a"), once.first("a"), once.first("b")], [true, false, true]);
  once.first("c"); // "a" falls out of the memory
  assert.ok(once.first("a"));
});
