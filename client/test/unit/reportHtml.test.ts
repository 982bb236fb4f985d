import { test } from "node:test";
import assert from "node:assert/strict";
import { headline } from "../../src/report";
import { renderReport, template } from "../../src/reportHtml";
import { exampleReport } from "./fixtures";

const options = { nonce: "abc123", cspSource: "vscode-webview://x", canRun: true, subject: "examples/oom-cascade/train.log" };

test("the page states the verdict, the initiator, the hypotheses, the fix and the commands", () => {
  const html = renderReport(exampleReport(), options);
  assert.match(html, /<strong>rank 2 on gpu-node-a<\/strong> started it: CUDA out of memory/);
  assert.match(html, /Other hypotheses/);
  assert.match(html, /Collateral \(53\)/);
  assert.match(html, /<svg class="timeline"/);
  assert.match(html, /data-line="32"/);
  assert.match(html, /PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True/);
  assert.match(html, /<button class="run" data-index="0">Run…<\/button>/);
});

test("strict CSP: nothing remote, scripts and styles only with the nonce, no inline handlers", () => {
  const html = renderReport(exampleReport(), options);
  assert.match(html, /default-src 'none'; img-src vscode-webview:\/\/x data:; style-src 'nonce-abc123'; script-src 'nonce-abc123';/);
  assert.doesNotMatch(html, /https?:\/\/[^"<\s]*\.(js|css)/);
  assert.doesNotMatch(html, /\son[a-z]+=/i);
  assert.equal((html.match(/<script/g) ?? []).length, (html.match(/<script nonce="abc123">/g) ?? []).length);
});

test("log text is escaped", () => {
  const report = exampleReport();
  report.diagnoses[0].initiator!.text = '<img src=x onerror="alert(1)">';
  const html = renderReport(report, options);
  assert.ok(html.includes("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"));
  assert.ok(!html.includes('<img src=x'));
});

test("untrusted or incomplete commands get Copy, never Run", () => {
  const report = exampleReport();
  assert.doesNotMatch(renderReport(report, { ...options, canRun: false }), /class="run"/);
  report.diagnoses[0].verify = [{ title: "t", argv: ["ibstat", "<device>"], command: "ibstat '<device>'", complete: false }];
  const html = renderReport(report, options);
  assert.doesNotMatch(html, /class="run"/);
  assert.match(html, /class="copy"/);
});

test("undetermined and clean reports say so", () => {
  const report = exampleReport();
  report.diagnoses[0].undetermined = true;
  report.diagnoses[0].next_checks = ["Set TORCH_DISTRIBUTED_DEBUG=DETAIL and rerun"];
  assert.match(renderReport(report, options), /Not sure: .*Check next/s);
  assert.match(renderReport({ ...report, diagnoses: [] }, options), /No failure found in examples\/oom-cascade\/train.log/);
  const clean = renderReport({ ...report, diagnoses: [], next_checks: ["dump every rank's stacks <py-spy>"] }, options);
  assert.match(clean, /No failure found in .*<h2>Check next<\/h2><ol><li>dump every rank&#39;s stacks &lt;py-spy&gt;<\/li>/s);
});

test("headline: who started it and what it caused", () => {
  assert.equal(headline(exampleReport()), "rank 2 on gpu-node-a: CUDA out of memory on one rank caused Collective operation timed out (NCCL watchdog / gloo) (+1 more)");
});

test("the page reads in the order people act: verdict, fix, commands, evidence, hypotheses, timeline, lines", () => {
  const html = renderReport(exampleReport(), options);
  const order = ["started it:", "<h2>Fix</h2>", "<h2>Verify</h2>", "<h2>Evidence for</h2>", "<h2>Other hypotheses</h2>",
    "<h2>Timeline</h2>", "<h2>First failure</h2>", "<h2>Collateral (53)</h2>"].map((h) => html.indexOf(h));
  assert.ok(order.every((i) => i > 0), `missing a section: ${order}`);
  assert.deepEqual(order, [...order].sort((a, b) => a - b));
});

test("collateral is grouped per message and folded, with its count and ranks", () => {
  const html = renderReport(exampleReport(), options);
  const groups = html.match(/<details class="group">/g) ?? [];
  assert.ok(groups.length >= 2 && groups.length < 20, `${groups.length} groups`);
  assert.match(html, /Watchdog caught collective operation timeout.*— 7 lines on ranks 0, 1, 3, 4, 5, 6, 7/);
  assert.doesNotMatch(html, /word-break: break-all/);
});

test("a template drops who printed the line and masks numbers", () => {
  assert.equal(template("[rank5]:[E ProcessGroupNCCL.cpp:616] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12"),
    template("[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12"));
  assert.equal(template("(VllmWorker rank=1 pid=2445156) ERROR x 3"), "ERROR x N");
});

test("a comparison with a good run shows how far each got, the setup that differs and what is new, escaped", () => {
  const report = { ...exampleReport(), baseline: {
    baseline: ["runs/good <ok>"], phase: "the failed run reached step 2; the good run reached step 4",
    setup: ["NCCL version: 2.26.2+cuda12.2 in the failed run, 2.26.2+cuda12.6 in the good run"],
    new_lines: ["ValueError: corrupt shard <x> ×3 (console.log:28, rank(s) 1)"], discounted: 4 } };
  const html = renderReport(report, options);
  assert.match(html, /<h2>Compared with a good run<\/h2><p class="subject">runs\/good &lt;ok&gt;<\/p>/);
  assert.match(html, /<li>the failed run reached step 2; the good run reached step 4<\/li><li>NCCL version: /);
  assert.match(html, /<h3>Error lines the good run never printed<\/h3><ul><li><code>ValueError: corrupt shard &lt;x&gt;/);
  assert.match(html, /4 failure-like line\(s\) of the failed run were printed by the good run too/);
  assert.doesNotMatch(renderReport(exampleReport(), options), /Compared with a good run/);
});

test("a possible cause says why it is only possible: a line healthy runs print, or the usual explanation", () => {
  const report = exampleReport();
  report.diagnoses[0].possible = true;
  assert.match(renderReport(report, options), /The only evidence is a line healthy runs print too\./);
  report.diagnoses[0].suggested = true;
  const html = renderReport(report, options);
  assert.match(html, /The log does not show the cause; this is what usually explains its lines\./);
  assert.doesNotMatch(html, /healthy runs print too/);
});
