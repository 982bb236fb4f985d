import { test } from "node:test";
import assert from "node:assert/strict";
import { plainText, stripEscapes } from "../../src/escapes";
import { exampleLine } from "./fixtures";

test("strips colours, OSC 633 marks and title sequences, keeps the text", () => {
  const line = exampleLine("torch.OutOfMemoryError");
  const raw = `\x1b]633;C\x07\x1b[31m${line.slice(0, 20)}\x1b[0m${line.slice(20)}\r\n\x1b]0;user@host: ~\x1b\\done`;
  assert.equal(plainText(raw), `${line}\ndone`);
});

test("CSI with parameters and private modes, charset selection", () => {
  assert.equal(stripEscapes("\x1b[?2004h\x1b[1;32mok\x1b[K\x1b(B"), "ok");
});

test("a lone CR (progress bar redraw) ends a line", () => {
  assert.equal(plainText("10%\r50%\r100%\n"), "10%\n50%\n100%\n");
});

test("text without escapes is unchanged", () => {
  const line = exampleLine("Watchdog caught collective operation timeout");
  assert.equal(plainText(line), line);
});
