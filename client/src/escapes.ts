// Terminal output arrives raw: CSI colour codes, OSC 633 shell-integration marks, CRLF line ends.
// The server strips escapes too, but terminal links and the "does this output hold a failure" check
// run here, on plain text.

// OSC ... (BEL | ESC \), CSI ... final byte, and the two-byte ESC sequences (charset selection, keypad modes).
const ESCAPE = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78cM]|\x9b[0-?]*[ -/]*[@-~]/g;

export function stripEscapes(text: string): string {
  return text.replace(ESCAPE, "");
}

/** Plain text with \n line ends: escapes removed, CRLF and lone CR (progress bars redrawing a line) ended as lines. */
export function plainText(raw: string): string {
  return stripEscapes(raw).replace(/\r\n?/g, "\n");
}
