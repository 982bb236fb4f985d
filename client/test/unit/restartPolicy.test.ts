import { test } from "node:test";
import assert from "node:assert/strict";
import { RestartPolicy } from "../../src/restartPolicy";

test("delays double per crash and the policy gives up past the limit inside the window", () => {
  const policy = new RestartPolicy(3, 60_000, 500, 15_000);
  assert.deepEqual([policy.crashed(0), policy.crashed(1000), policy.crashed(2000), policy.crashed(3000)], [500, 1000, 2000, undefined]);
});

test("crashes older than the window are forgotten", () => {
  const policy = new RestartPolicy(2, 60_000, 500, 15_000);
  policy.crashed(0);
  policy.crashed(30_000);
  assert.equal(policy.crashed(70_000), 1000); // the crash at 30 s still counts, the one at 0 not
});

test("the delay is capped and a user's restart resets the count", () => {
  const policy = new RestartPolicy(10, 60_000, 500, 3000);
  const delays = Array.from({ length: 6 }, (_, i) => policy.crashed(i));
  assert.equal(Math.max(...(delays as number[])), 3000);
  policy.reset();
  assert.equal(policy.crashed(10), 500);
});
