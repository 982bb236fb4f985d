import { readFileSync } from "fs";
import { join } from "path";

/** The repository root: tests run from it (npm scripts) and are bundled into client/out. */
export const ROOT = process.cwd();

/** Lines of the bundled example (real formats: an OOM on rank 2, watchdog timeouts on the others). */
export function exampleLines(): string[] {
  return readFileSync(join(ROOT, "examples", "oom-cascade", "train.log"), "utf8").split("\n");
}

export function exampleLine(needle: string): string {
  const line = exampleLines().find((l) => l.includes(needle));
  if (!line) throw new Error(`no example line holds ${needle}`);
  return line;
}

export function exampleReport(): import("../../src/report").Report {
  return JSON.parse(readFileSync(join(ROOT, "client", "test", "unit", "example-report.json"), "utf8"));
}
