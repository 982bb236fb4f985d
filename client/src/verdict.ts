// What the status bar says about the active log, from the diagnostics the server published for it.
// Kept free of the vscode module so it can be tested on its own; severities are LSP/VS Code's numbers.

export const ERROR = 0;
export const WARNING = 1;
export const HINT = 3;

export interface PublishedDiagnostic {
  severity: number;
  message: string;
  source?: string;
}

export interface StatusVerdict {
  /** The first failure's message; null when the log has none. */
  verdict: string | null;
  /** Lines that matched known messages but count as context, not failures, in this log. */
  context: number;
}

/** A first failure is the Error; a possible cause or an unrecognised first failure is a Warning that says so. */
export function statusVerdict(diagnostics: readonly PublishedDiagnostic[]): StatusVerdict {
  const mine = diagnostics.filter((d) => d.source === "firstfault");
  const first = mine.find((d) => d.severity === ERROR)
    ?? mine.find((d) => d.severity === WARNING && /^(First failure|Possible cause):/.test(d.message));
  return {
    verdict: first ? first.message.split("\n")[0] : null,
    context: mine.filter((d) => d.severity === HINT).length,
  };
}
