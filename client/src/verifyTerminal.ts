import { ChildProcess, spawn } from "child_process";
import * as vscode from "vscode";
import { VerifyCommand } from "./report";

/**
 * A terminal that runs one verification command's argv directly (no shell parses it) and stays open
 * with its output and exit code afterwards; a terminal whose process exits 0 would otherwise close at
 * once, taking the output with it. Ctrl+C stops the command.
 */
export function openVerificationTerminal(command: VerifyCommand, cwd: string | undefined): vscode.Terminal {
  const write = new vscode.EventEmitter<string>();
  let child: ChildProcess | undefined;
  const crlf = (chunk: Buffer | string) => String(chunk).replace(/\r?\n/g, "\r\n");
  const pty: vscode.Pseudoterminal = {
    onDidWrite: write.event,
    open: () => {
      write.fire(`\x1b[2m$ ${command.command}\x1b[0m\r\n`);
      child = spawn(command.argv[0], command.argv.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
      child.stdout?.on("data", (d) => write.fire(crlf(d)));
      child.stderr?.on("data", (d) => write.fire(crlf(d)));
      child.on("error", (error: NodeJS.ErrnoException) => {
        write.fire(error.code === "ENOENT"
          ? `\r\nfirstfault: ${command.argv[0]} is not installed here (not on PATH).\r\n`
          : `\r\nfirstfault: could not run ${command.argv[0]}: ${error.message}\r\n`);
      });
      child.on("close", (code, signal) => {
        write.fire(`\r\n\x1b[2m[firstfault: ${signal ? `stopped by ${signal}` : `exit code ${code}`}]\x1b[0m\r\n`);
        child = undefined;
      });
    },
    close: () => child?.kill(),
    handleInput: (data) => {
      if (data === "\x03") child?.kill("SIGINT");
    },
  };
  const terminal = vscode.window.createTerminal({ name: `firstfault: ${command.title}`, pty });
  terminal.show();
  return terminal;
}
