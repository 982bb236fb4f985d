// The shape of `firstfault diagnose --format json` (and of the server's diagnose commands), as far as
// the client reads it. The server owns the contract; the client only shows it.

export interface Location {
  rank: number | null;
  host: string | null;
  path: string;
  line: number | null;
  text: string;
  reference?: string | null;
  time?: number | null;
}

export interface VerifyCommand {
  title: string;
  argv: string[];
  command: string;
  complete: boolean;
}

export interface Diagnosis {
  id: string;
  title: string;
  category?: string;
  confidence: number;
  undetermined: boolean;
  /** The only evidence is a line healthy runs print too (an excerpt, or a log that stops mid-retry). */
  possible?: boolean;
  /** Not read from the log: what usually explains lines that do not name their cause. */
  suggested?: boolean;
  /** What happened between the ranks, when the verdict rests on it (a silent, departed, lagging or odd rank). */
  headline?: string;
  /** Error lines (one per template) that no reference explains, listed beside the verdict. */
  unexplained?: string[];
  initiator: Location | null;
  collateral: Location[];
  collateral_total?: number;
  evidence: { for: string[]; against: string[] };
  summary?: string;
  mechanism?: string;
  confirm?: string[];
  fix: string[];
  /** The framework whose advice `fix` is (vllm, deepspeed), when the log shows one. */
  fix_framework?: string | null;
  verify: VerifyCommand[];
  next_checks: string[];
  references?: string[];
}

export interface Report {
  version: string;
  inputs: { path: string; lines: number; bytes: number; binary: boolean; kind?: "log" | "error-file" | "flight-recorder" | "nccl-ras" }[];
  attempts?: { index: number; first_line: number; last_line: number; events: number; summary: string }[];
  notes?: string[];
  diagnoses: Diagnosis[];
  /** Without a diagnosis: where the failure can be instead, and how to get it. */
  next_checks?: string[];
  /** Present when a good run was given to compare with. */
  baseline?: Comparison;
}

/** A failed run beside a good one: how far each got, the setup that differs, what only the failed run printed. */
export interface Comparison {
  baseline: string[];
  phase: string;
  setup: string[];
  new_lines: string[];
  /** Failure-like lines the good run printed too (taken as noise). */
  discounted: number;
}

export function where(location: Location): string {
  const who = location.rank !== null && location.rank !== undefined ? `rank ${location.rank}` : "an unknown rank";
  return location.host ? `${who} on ${location.host}` : who;
}

/** One sentence for a notification or the status bar: what started it and what it caused. */
export function headline(report: Report): string | undefined {
  const top = report.diagnoses[0];
  if (!top) return undefined;
  if (top.undetermined || !top.initiator) return `not sure: ${top.title} — see the next checks`;
  if (top.possible) return `possible cause at ${where(top.initiator)}: ${top.title}`;
  if (top.headline) return `${top.headline} — ${top.title}`;
  const titles = new Map(report.diagnoses.map((d) => [d.id, d.title]));
  const caused = [...new Set(top.collateral.map((c) => c.reference).filter((r): r is string => !!r && r !== top.id))]
    .map((r) => titles.get(r) ?? r);
  const effect = caused.length ? ` caused ${caused[0]}${caused.length > 1 ? ` (+${caused.length - 1} more)` : ""}` : "";
  return `${where(top.initiator)}: ${top.title}${effect}`;
}
