// didOpen of a big log as VS Code sends it: a Node client (JSON.stringify, the server's stdio on Unix sockets, as
// child_process gives them). Run by bench/lsp.py:  node bench/lsp_node.js PYTHON LOG [ROUNDS]
// Prints one JSON line: per round, the ms spent encoding the message and the ms from writing it to the diagnostics.
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const path = require("path");

const [python, log, rounds = "3"] = process.argv.slice(2);
const server = spawn(python, ["-m", "firstfault", "lsp"], { stdio: ["pipe", "pipe", "ignore"] });
const waiting = new Map(); // id or URI -> resolve
let buffer = Buffer.alloc(0);

server.stdout.on("data", (data) => {
  buffer = Buffer.concat([buffer, data]);
  for (;;) {
    const end = buffer.indexOf("\r\n\r\n");
    if (end < 0) return;
    const length = Number(/Content-Length: *(\d+)/i.exec(buffer.subarray(0, end).toString())[1]);
    if (buffer.length < end + 4 + length) return;
    const message = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString());
    buffer = buffer.subarray(end + 4 + length);
    const key = message.method === "textDocument/publishDiagnostics" ? message.params.uri : message.id;
    if (waiting.has(key)) {
      waiting.get(key)(message);
      waiting.delete(key);
    }
  }
});

function frame(body) {
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
}

function send(message) {
  server.stdin.write(frame(Buffer.from(JSON.stringify(message), "utf8")));
}

function reply(key) {
  return new Promise((resolve) => waiting.set(key, resolve));
}

async function main() {
  const initialized = reply(1);
  send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { processId: null, rootUri: null, capabilities: {},
    initializationOptions: { firstfault: { debounceMs: 0 } } } });
  await initialized;
  send({ jsonrpc: "2.0", method: "initialized", params: {} });
  const text = fs.readFileSync(log, "utf8");
  const results = [];
  for (let round = 0; round < Number(rounds); round++) {
    const uri = `file://${path.dirname(path.resolve(log))}/node-${round}.log`;
    const published = reply(uri);
    const start = performance.now();
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", method: "textDocument/didOpen",
      params: { textDocument: { uri, languageId: "log", version: 1, text } } }), "utf8");
    const encoded = performance.now();
    server.stdin.write(frame(body));
    await published;
    results.push({ encode_ms: encoded - start, served_ms: performance.now() - encoded });
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  console.log(JSON.stringify(results));
  server.kill();
}

main().catch((error) => {
  console.error(error);
  server.kill();
  process.exit(1);
});
