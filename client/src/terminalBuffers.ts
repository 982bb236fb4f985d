import { plainText } from "./escapes";

/** One shell command's output as read through shell integration. */
export interface CommandOutput {
  commandLine: string;
  text: string;
  /** Bytes dropped from the middle when the output outgrew the cap. */
  dropped: number;
  exitCode: number | undefined;
  finished: boolean;
}

/**
 * Per-terminal buffers of command output. A failing job can print gigabytes, so each command keeps its
 * head (where the first failure usually is) and its tail (the launcher's summary), and drops the middle.
 */
export class TerminalBuffers<K> {
  private readonly last = new Map<K, CommandOutput>();
  private readonly pending = new Map<K, string>(); // a partial escape sequence split across chunks

  constructor(private readonly headChars = 4 << 20, private readonly tailChars = 4 << 20) {}

  start(terminal: K, commandLine: string): CommandOutput {
    const output: CommandOutput = { commandLine, text: "", dropped: 0, exitCode: undefined, finished: false };
    this.last.set(terminal, output);
    this.pending.delete(terminal);
    return output;
  }

  append(terminal: K, raw: string): void {
    const output = this.last.get(terminal);
    if (!output || output.finished) return;
    let chunk = (this.pending.get(terminal) ?? "") + raw;
    // Hold back an escape sequence (or CR that may pair with LF) cut at the chunk's end.
    const cut = chunk.search(/(\x1b[^\x07]*|\r)$/);
    if (cut >= 0 && chunk.length - cut < 256) {
      this.pending.set(terminal, chunk.slice(cut));
      chunk = chunk.slice(0, cut);
    } else {
      this.pending.delete(terminal);
    }
    this.add(output, plainText(chunk));
  }

  end(terminal: K, exitCode: number | undefined): CommandOutput | undefined {
    const output = this.last.get(terminal);
    if (!output) return undefined;
    const rest = this.pending.get(terminal);
    if (rest) this.add(output, plainText(rest));
    this.pending.delete(terminal);
    output.exitCode = exitCode;
    output.finished = true;
    return output;
  }

  latest(terminal: K): CommandOutput | undefined {
    return this.last.get(terminal);
  }

  forget(terminal: K): void {
    this.last.delete(terminal);
    this.pending.delete(terminal);
  }

  private add(output: CommandOutput, text: string): void {
    output.text += text;
    const limit = this.headChars + this.tailChars;
    if (output.text.length > limit) {
      const head = output.text.slice(0, this.headChars);
      const tail = output.text.slice(output.text.length - this.tailChars);
      // Cut at line boundaries so no half line reaches the server.
      const headEnd = head.lastIndexOf("\n") + 1 || head.length;
      const tailStart = tail.indexOf("\n") + 1;
      output.dropped += output.text.length - headEnd - (tail.length - tailStart);
      output.text = head.slice(0, headEnd) + tail.slice(tailStart);
    }
  }
}
