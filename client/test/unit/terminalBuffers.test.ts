import { test } from "node:test";
import assert from "node:assert/strict";
import { TerminalBuffers } from "../../src/terminalBuffers";

test("buffers a command's output per terminal and records its exit code", () => {
  const buffers = new TerminalBuffers<string>();
  buffers.start("a", "torchrun train.py");
  buffers.start("b", "ls");
  buffers.append("a", "\x1b[31mline one\x1b[0m\r\n");
  buffers.append("b", "file\r\n");
  buffers.append("a", "line two\r\n");
  const out = buffers.end("a", 1)!;
  assert.equal(out.text, "line one\nline two\n");
  assert.equal(out.exitCode, 1);
  assert.equal(buffers.latest("b")!.text, "file\n");
  assert.equal(buffers.latest("b")!.finished, false);
});

test("an escape sequence or CRLF split across chunks is not left half in the text", () => {
  const buffers = new TerminalBuffers<number>();
  buffers.start(1, "cmd");
  buffers.append(1, "error here\x1b[3");
  buffers.append(1, "1mred\x1b[0m\r");
  buffers.append(1, "\nnext");
  const out = buffers.end(1, 0)!;
  assert.equal(out.text, "error herered\nnext");
});

test("a new command replaces the terminal's previous output; output after end is ignored", () => {
  const buffers = new TerminalBuffers<number>();
  buffers.start(1, "first");
  buffers.append(1, "old\n");
  buffers.end(1, 0);
  buffers.append(1, "late\n");
  assert.equal(buffers.latest(1)!.text, "old\n");
  buffers.start(1, "second");
  assert.equal(buffers.latest(1)!.text, "");
  assert.equal(buffers.latest(1)!.commandLine, "second");
});

test("huge output keeps whole lines of its head and tail and counts what it dropped", () => {
  const buffers = new TerminalBuffers<number>(100, 100);
  buffers.start(1, "job");
  const lines = Array.from({ length: 200 }, (_, i) => `line ${String(i).padStart(3, "0")}\n`); // 9 chars each
  for (const line of lines) buffers.append(1, line);
  const out = buffers.end(1, 1)!;
  const kept = out.text.split("\n").filter(Boolean);
  assert.equal(kept[0], "line 000");
  assert.equal(kept[kept.length - 1], "line 199");
  assert.ok(kept.every((l) => /^line \d{3}$/.test(l)), "no half lines");
  assert.equal(out.text.length + out.dropped, lines.join("").length);
  assert.ok(out.text.length <= 200);
});

test("forget drops a closed terminal", () => {
  const buffers = new TerminalBuffers<number>();
  buffers.start(1, "x");
  buffers.forget(1);
  assert.equal(buffers.latest(1), undefined);
  assert.equal(buffers.end(1, 0), undefined);
});
