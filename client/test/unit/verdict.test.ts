import { test } from "node:test";
import assert from "node:assert/strict";
import { ERROR, HINT, WARNING, statusVerdict } from "../../src/verdict";

const firstfault = (severity: number, message: string) => ({ severity, message, source: "firstfault" });

test("the Error is the verdict, whatever else is published", () => {
  const got = statusVerdict([firstfault(HINT, "NCCL INFO ..."), firstfault(ERROR, "First failure: CUDA out of memory on one rank — rank 2\nmore"),
    { severity: ERROR, message: "a linter's error", source: "other" }]);
  assert.deepEqual(got, { verdict: "First failure: CUDA out of memory on one rank — rank 2", context: 1 });
});

test("a possible cause or an unrecognised first failure is a Warning, and still a verdict", () => {
  assert.equal(statusVerdict([firstfault(WARNING, "Possible cause: Rendezvous host cannot be resolved")]).verdict,
    "Possible cause: Rendezvous host cannot be resolved");
  assert.equal(statusVerdict([firstfault(WARNING, "First failure: Unrecognised failure: error lines that no reference explains")]).verdict,
    "First failure: Unrecognised failure: error lines that no reference explains");
  assert.equal(statusVerdict([firstfault(WARNING, "Collective operation timed out — competing hypothesis, confidence 0.30")]).verdict, null);
});

test("a clean log counts its context lines instead of showing a bare check", () => {
  assert.deepEqual(statusVerdict([firstfault(HINT, "a"), firstfault(HINT, "b"), { severity: HINT, message: "c", source: "x" }]),
    { verdict: null, context: 2 });
  assert.deepEqual(statusVerdict([]), { verdict: null, context: 0 });
});
