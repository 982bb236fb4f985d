// Finding a Python for the server: the firstfault.interpreter setting, then the Python extension's
// environment, then python3/python on PATH. Each candidate is asked its version once; the first that
// is 3.11 or newer wins. Process spawning is injected so the order and messages are unit-tested.

export const MINIMUM: [number, number] = [3, 11];
export const VERSION_PROBE = "import sys; print('%d.%d.%d' % sys.version_info[:3])";

export interface Candidate {
  command: string[];
  /** Where it came from, for messages: "setting firstfault.interpreter", "Python extension", "PATH". */
  origin: string;
}

export type Probe = (command: string[]) => Promise<{ version?: string; error?: string }>;

export interface Found {
  command: string[];
  version: string;
  origin: string;
}

export interface Rejected {
  candidate: Candidate;
  reason: string;
}

export function parseVersion(text: string): [number, number, number] | undefined {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

export function meetsMinimum(version: [number, number, number]): boolean {
  return version[0] > MINIMUM[0] || (version[0] === MINIMUM[0] && version[1] >= MINIMUM[1]);
}

export async function findInterpreter(candidates: Candidate[], probe: Probe): Promise<{ found?: Found; rejected: Rejected[] }> {
  const rejected: Rejected[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    const key = JSON.stringify(candidate.command);
    if (seen.has(key)) continue;
    seen.add(key);
    const answer = await probe(candidate.command);
    const version = answer.version ? parseVersion(answer.version) : undefined;
    if (!version) {
      rejected.push({ candidate, reason: answer.error ?? `did not report a version (${answer.version ?? "no output"})` });
    } else if (!meetsMinimum(version)) {
      rejected.push({ candidate, reason: `is Python ${version.join(".")}` });
    } else {
      return { found: { command: candidate.command, version: version.join("."), origin: candidate.origin }, rejected };
    }
  }
  return { rejected };
}

/** One actionable message for when nothing fits. */
export function noInterpreterMessage(rejected: Rejected[]): string {
  const tried = rejected.map((r) => `${r.candidate.command.join(" ")} (${r.candidate.origin}) ${r.reason}`).join("; ");
  return `firstfault needs Python ${MINIMUM.join(".")} or newer to run its analysis server, and found none` +
    (tried ? `: ${tried}.` : ".") +
    ` Install Python ${MINIMUM.join(".")}+ (or select one in the Python extension), or set "firstfault.interpreter",` +
    ` e.g. ["/usr/bin/python3.12"] or ["uv", "run", "python"].`;
}
