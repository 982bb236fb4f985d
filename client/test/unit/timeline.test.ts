import { test } from "node:test";
import assert from "node:assert/strict";
import { formatSpan, layoutTimeline } from "../../src/timeline";
import { exampleReport } from "./fixtures";

test("the example: one row per rank, the initiator first in time, watchdog collateral ten minutes later", () => {
  const top = exampleReport().diagnoses[0];
  const t = layoutTimeline(top)!;
  assert.equal(t.axis, "time");
  assert.ok(t.rows.includes("rank 2 on gpu-node-a"));
  assert.equal(t.rows.length, new Set(t.rows).size);
  const initiator = t.marks.find((m) => m.kind === "initiator")!;
  assert.equal(t.rows[initiator.row], "rank 2 on gpu-node-a");
  assert.equal(initiator.x, 0);
  const watchdog = t.marks.filter((m) => m.location.text.includes("Watchdog caught"));
  assert.ok(watchdog.length >= 7 && watchdog.every((m) => m.x > 0.5), "watchdog lines sit well after the OOM");
  assert.ok(t.span > 590 && t.span < 3600);
  assert.equal(t.marks.length, 1 + top.collateral.length);
});

test("rows are ordered by rank", () => {
  const t = layoutTimeline(exampleReport().diagnoses[0])!;
  const ranks = t.rows.map((r) => Number(/rank (\d+)/.exec(r)?.[1] ?? Infinity));
  assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b));
});

test("without timestamps the axis is log order", () => {
  const top = structuredClone(exampleReport().diagnoses[0]);
  top.initiator!.time = null;
  const t = layoutTimeline(top)!;
  assert.equal(t.axis, "line");
  const byLine = [...t.marks].sort((a, b) => a.location.line! - b.location.line!);
  assert.deepEqual(byLine.map((m) => m.x), [...byLine.map((m) => m.x)].sort((a, b) => a - b));
});

test("too many ranks: rows are capped and the initiator's row is always kept", () => {
  const top = structuredClone(exampleReport().diagnoses[0]);
  const t = layoutTimeline(top, 3)!;
  assert.equal(t.rows.length, 3);
  assert.ok(t.rows.includes("rank 2 on gpu-node-a"));
  assert.ok(t.marks.every((m) => m.row < 3));
});

test("no initiator and no collateral: no picture", () => {
  const top = structuredClone(exampleReport().diagnoses[0]);
  top.initiator = null;
  top.collateral = [];
  assert.equal(layoutTimeline(top), undefined);
  assert.equal(formatSpan(600.2), "10.0 min");
  assert.equal(formatSpan(0.25), "250 ms");
});
