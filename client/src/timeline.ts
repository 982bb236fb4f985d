import { Diagnosis, Location, where } from "./report";

export interface Mark {
  row: number;
  /** 0..1 across the plot. */
  x: number;
  kind: "initiator" | "collateral";
  location: Location;
}

export interface Timeline {
  rows: string[];
  marks: Mark[];
  /** "time" when every mark has a timestamp from the log, else "line" (positions follow line order). */
  axis: "time" | "line";
  /** Seconds from the first to the last mark, when axis is "time". */
  span: number;
}

/** Ranks/hosts against time: one row per source, the first failure marked, collateral after it. */
export function layoutTimeline(diagnosis: Diagnosis, maxRows = 64): Timeline | undefined {
  const points: { location: Location; kind: Mark["kind"] }[] = [];
  if (diagnosis.initiator) points.push({ location: diagnosis.initiator, kind: "initiator" });
  for (const c of diagnosis.collateral) points.push({ location: c, kind: "collateral" });
  if (points.length === 0) return undefined;

  const timed = points.every((p) => typeof p.location.time === "number");
  const value = (l: Location, i: number): number =>
    timed ? (l.time as number) : (l.line ?? i) + pathOrder(points, l.path) * 1e9;
  const values = points.map((p, i) => value(p.location, i));
  const lo = Math.min(...values);
  const hi = Math.max(...values);

  const rowKey = (l: Location) => where(l);
  const rankOf = (l: Location) => (l.rank ?? Number.MAX_SAFE_INTEGER);
  const keys = [...new Map(points.map((p) => [rowKey(p.location), p.location])).entries()]
    .sort((a, b) => rankOf(a[1]) - rankOf(b[1]) || a[0].localeCompare(b[0]))
    .map(([key]) => key);
  // Past maxRows, keep the initiator's row and the first rows by rank.
  const initiatorKey = diagnosis.initiator ? rowKey(diagnosis.initiator) : undefined;
  let rows = keys.slice(0, maxRows);
  if (initiatorKey && !rows.includes(initiatorKey)) rows = [initiatorKey, ...rows.slice(0, maxRows - 1)];
  const rowIndex = new Map(rows.map((r, i) => [r, i]));

  const marks: Mark[] = [];
  points.forEach((p, i) => {
    const row = rowIndex.get(rowKey(p.location));
    if (row === undefined) return;
    marks.push({ row, x: hi > lo ? (values[i] - lo) / (hi - lo) : 0, kind: p.kind, location: p.location });
  });
  return { rows, marks, axis: timed ? "time" : "line", span: timed ? hi - lo : 0 };
}

function pathOrder(points: { location: Location }[], path: string): number {
  // Without timestamps, per-rank files have no common clock: order by file, then line, so the picture
  // never suggests a precision it does not have.
  const paths = [...new Set(points.map((p) => p.location.path))];
  return paths.length > 1 ? paths.indexOf(path) : 0;
}

export function formatSpan(seconds: number): string {
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  if (seconds < 7200) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
