import { test } from "node:test";
import assert from "node:assert/strict";
import { LinkMatcher } from "../../src/links";
import { exampleLine } from "./fixtures";

const matcher = new LinkMatcher([
  { literal: "cuda out of memory", reference: "cuda-oom", title: "CUDA out of memory on one rank" },
  { literal: "watchdog caught collective operation timeout", reference: "collective-timeout", title: "Collective operation timed out" },
  { literal: "collective operation timeout", reference: "shorter", title: "a shorter overlapping literal" },
  { literal: "err", reference: "too-short", title: "ignored" },
]);

test("finds a literal case-insensitively at its offset in the original line", () => {
  const line = exampleLine("torch.OutOfMemoryError");
  const [m] = matcher.find(line);
  assert.equal(line.slice(m.start, m.start + m.length), "CUDA out of memory");
  assert.equal(m.reference, "cuda-oom");
});

test("the longest literal wins where two overlap", () => {
  const line = exampleLine("Watchdog caught collective operation timeout");
  const found = matcher.find(line);
  assert.equal(found.length, 1);
  assert.equal(found[0].reference, "collective-timeout");
  assert.equal(line.slice(found[0].start, found[0].start + found[0].length), "Watchdog caught collective operation timeout");
});

test("offsets stay right after non-ASCII text; literals shorter than 4 characters are ignored", () => {
  const line = "İİ " + exampleLine("torch.OutOfMemoryError");
  const [m] = matcher.find(line);
  assert.equal(line.slice(m.start, m.start + m.length), "CUDA out of memory");
  assert.equal(matcher.find(exampleLine("Traceback")).length, 0);
});

test("anyIn tells whether a whole output holds a failure", () => {
  assert.ok(matcher.anyIn(["ok", exampleLine("[Rank 5] Watchdog caught"), "ok"].join("\n")));
  assert.ok(!matcher.anyIn(exampleLine("Traceback")));
  assert.ok(new LinkMatcher([]).empty);
});
