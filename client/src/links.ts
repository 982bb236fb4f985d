/** A failure literal the server's automaton knows (from `firstfault.server.literals`), lower-cased. */
export interface Literal {
  literal: string;
  reference: string;
  title: string;
}

export interface LineMatch {
  start: number;
  length: number;
  reference: string;
  title: string;
}

/**
 * Finds failure literals in terminal lines. Terminal link providers are called for every visible line,
 * so this only looks for the literals; the server's regexes decide when the user opens the link.
 */
export class LinkMatcher {
  private readonly literals: Literal[];

  constructor(literals: readonly Literal[]) {
    // Longest first, so "failure detected by watchdog at work sequence id" wins over its prefix.
    this.literals = literals.filter((l) => l.literal.length >= 4).slice().sort((a, b) => b.literal.length - a.literal.length);
  }

  get empty(): boolean {
    return this.literals.length === 0;
  }

  /** Non-overlapping matches, left to right. */
  find(line: string): LineMatch[] {
    if (this.literals.length === 0) return [];
    const lower = asciiLower(line);
    const found: LineMatch[] = [];
    for (const l of this.literals) {
      let at = lower.indexOf(l.literal);
      while (at >= 0) {
        const end = at + l.literal.length;
        if (!found.some((f) => at < f.start + f.length && f.start < end)) {
          found.push({ start: at, length: l.literal.length, reference: l.reference, title: l.title });
        }
        at = lower.indexOf(l.literal, end);
      }
    }
    return found.sort((a, b) => a.start - b.start);
  }

  /** Whether any line of a text holds a literal: the cheap test before asking the server. */
  anyIn(text: string): boolean {
    const lower = asciiLower(text);
    return this.literals.some((l) => lower.includes(l.literal));
  }
}

/** Lower-cases A-Z only, so offsets in the result are offsets in the line (toLowerCase can change lengths). */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (s) => s.toLowerCase());
}
