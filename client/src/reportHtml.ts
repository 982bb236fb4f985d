import { Comparison, Diagnosis, Location, Report, where } from "./report";
import { formatSpan, layoutTimeline, Timeline } from "./timeline";

export interface PageOptions {
  nonce: string;
  cspSource: string;
  /** False in an untrusted workspace: Run buttons are not shown. */
  canRun: boolean;
  /** What was diagnosed, for the heading. */
  subject: string;
}

const esc = (s: unknown): string =>
  String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const MAX_COLLATERAL_SHOWN = 50;
const FRAMEWORK_NAMES: Record<string, string> = { vllm: "vLLM", deepspeed: "DeepSpeed" };

/** What to check next, for a verdict the log cannot settle or a report without one. */
const checkNext = (checks: string[]): string =>
  checks.length ? `<h2>Check next</h2><ol>${checks.map((c) => `<li>${esc(c)}</li>`).join("")}</ol>` : "";

function nothingFound(report: Report, o: PageOptions): string {
  return `<p class="clean">No failure found in ${esc(o.subject)}.</p>` + checkNext(report.next_checks ?? []);
}

/**
 * The report view's whole page. Strict CSP: nothing remote, no inline handlers; the one script and
 * style carry a nonce. Every value from the log is escaped; buttons carry indices, not commands.
 */
export function renderReport(report: Report, o: PageOptions): string {
  const top = report.diagnoses[0];
  const body = top ? diagnosisSection(top, report, o) : nothingFound(report, o);
  const csp = `default-src 'none'; img-src ${o.cspSource} data:; style-src 'nonce-${o.nonce}'; script-src 'nonce-${o.nonce}';`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp.replace(/"/g, "&quot;")}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>firstfault report</title>
<style nonce="${o.nonce}">${STYLE}</style></head>
<body>
<header><h1>firstfault</h1><p class="subject">${esc(o.subject)}</p></header>
${body}
${report.baseline ? comparison(report.baseline) : ""}
${(report.notes ?? []).length ? `<section><h2>Notes</h2><ul>${report.notes!.map((n) => `<li>${esc(n)}</li>`).join("")}</ul></section>` : ""}
<script nonce="${o.nonce}">${SCRIPT}</script>
</body></html>`;
}

/** What a good run given as a baseline shows beside the failed one. */
function comparison(c: Comparison): string {
  const discounted = c.discounted
    ? `<li>${c.discounted} failure-like line(s) of the failed run were printed by the good run too: taken as noise, not evidence</li>`
    : "";
  return `<section><h2>Compared with a good run</h2><p class="subject">${c.baseline.map(esc).join(", ")}</p>
<ul>${[c.phase, ...c.setup].map((l) => `<li>${esc(l)}</li>`).join("")}${discounted}</ul>
${c.new_lines.length ? `<h3>Error lines the good run never printed</h3><ul>${c.new_lines.map((l) => `<li><code>${esc(l)}</code></li>`).join("")}</ul>` : "<p>The failed run printed no error line the good run did not print too.</p>"}
</section>`;
}

/**
 * In the order people read a verdict: what and how sure, what to do (fix, checks, commands), why (evidence,
 * the other hypotheses), then where (timeline, the first line, the collateral grouped by message).
 */
function diagnosisSection(d: Diagnosis, report: Report, o: PageOptions): string {
  const verdict = d.undetermined
    ? `<p class="verdict unsure">Not sure: ${esc(d.title)}. The log cannot tell; check these next.</p>`
    : d.possible
    ? `<p class="verdict unsure">Possible cause${d.initiator ? ` at <strong>${esc(where(d.initiator))}</strong>` : ""}: ${esc(d.title)}. ${d.suggested ? "The log does not show the cause; this is what usually explains its lines." : "The only evidence is a line healthy runs print too."}</p>`
    : `<p class="verdict">${d.initiator ? `<strong>${esc(where(d.initiator))}</strong> started it: ` : ""}${esc(d.title)}</p>`;
  const confidence = (d.headline ? `<p class="headline">${esc(d.headline)}.</p>` : "") +
    `<p class="confidence">confidence ${Math.round(d.confidence * 100)}%</p>`;
  const fixTitle = `Fix${d.fix_framework ? ` (${esc(FRAMEWORK_NAMES[d.fix_framework] ?? d.fix_framework)})` : ""}`;
  const others = report.diagnoses.slice(1);
  const timeline = layoutTimeline(d);
  return `<section class="top">${verdict}${confidence}
${d.summary ? `<p>${esc(d.summary)}</p>` : ""}
${d.fix.length ? `<h2>${fixTitle}</h2><ul>${d.fix.map((f) => `<li>${esc(f)}</li>`).join("")}</ul>` : ""}
${checkNext(d.next_checks)}
${d.verify.length ? `<h2>Verify</h2>${d.verify.map((v, i) => verifyRow(v, i, o.canRun)).join("")}` : ""}
${evidence(d)}
${d.unexplained?.length ? `<h2>Error lines no reference explains</h2><ul>${d.unexplained.map((u) => `<li><code>${esc(u)}</code></li>`).join("")}</ul>` : ""}
${others.length ? `<h2>Other hypotheses</h2>${others.map((h, i) => hypothesis(h, i + 1)).join("")}` : ""}
${timeline ? `<h2>Timeline</h2>${timelineSvg(timeline)}` : ""}
${d.initiator ? `<h2>First failure</h2>${locationList([d.initiator], "initiator")}` : ""}
${collateralGroups(d)}
${d.mechanism ? `<h2>Why it happens</h2><p>${esc(d.mechanism)}</p>` : ""}
${(d.references ?? []).length ? `<h2>Sources</h2><ul>${d.references!.map((r) => `<li>${esc(r)}</li>`).join("")}</ul>` : ""}
</section>`;
}

/** A collateral line's message without who printed it and with numbers masked: lines alike group together. */
export function template(text: string): string {
  return text.replace(/^\s*(?:\[(?:rank|default)\d+\]:\s*|\[\d+(?:,\d+)?\]<std(?:out|err)>:\s*|\([^)]*pid=\d+[^)]*\)\s*)+/, "")
    .replace(/0x[0-9a-f]+|\d+/gi, "N").trim();
}

const SHOWN_PER_GROUP = 5;

/** Collateral grouped per message, each group folded: its count and ranks on one line, a few lines when opened. */
function collateralGroups(d: Diagnosis): string {
  if (!d.collateral.length) return "";
  const total = d.collateral_total ?? d.collateral.length;
  const groups = new Map<string, Location[]>();
  for (const loc of d.collateral.slice(0, MAX_COLLATERAL_SHOWN)) {
    const key = template(loc.text);
    groups.set(key, [...(groups.get(key) ?? []), loc]);
  }
  const folded = [...groups.values()].map((locs) => {
    const ranks = [...new Set(locs.map((l) => l.rank).filter((r): r is number => r !== null))].sort((a, b) => a - b);
    const who = ranks.length ? ` on rank${ranks.length > 1 ? "s" : ""} ${esc(ranks.join(", "))}` : "";
    const rest = locs.length > SHOWN_PER_GROUP
      ? `<details class="more"><summary>show all ${locs.length}</summary>${locationList(locs.slice(SHOWN_PER_GROUP), "collateral")}</details>` : "";
    return `<details class="group"><summary><code>${esc(locs[0].text.trim().slice(0, 160))}</code> — ${locs.length} line${locs.length > 1 ? "s" : ""}${who}</summary>` +
      `${locationList(locs.slice(0, SHOWN_PER_GROUP), "collateral")}${rest}</details>`;
  }).join("");
  const more = total > MAX_COLLATERAL_SHOWN ? `<p class="more">and ${total - MAX_COLLATERAL_SHOWN} more (the JSON report lists them)</p>` : "";
  return `<h2>Collateral (${total})</h2>${folded}${more}`;
}

function evidence(d: Diagnosis): string {
  const list = (items: string[]) => `<ul>${items.map((e) => `<li>${esc(e)}</li>`).join("")}</ul>`;
  return (d.evidence.for.length ? `<h2>Evidence for</h2>${list(d.evidence.for)}` : "") +
    (d.evidence.against.length ? `<h2>Evidence against</h2>${list(d.evidence.against)}` : "");
}

function hypothesis(d: Diagnosis, index: number): string {
  return `<details class="hypothesis"><summary>${index}. ${esc(d.title)} — ${Math.round(d.confidence * 100)}%` +
    `${d.initiator ? `, ${esc(where(d.initiator))}` : ""}</summary>${evidence(d)}` +
    `${d.initiator ? locationList([d.initiator], "initiator") : ""}</details>`;
}

function locationList(locations: Location[], kind: string): string {
  return `<ul class="lines ${kind}">${locations.map((l) =>
    `<li><a href="#" class="jump" data-path="${esc(l.path)}" data-line="${esc(l.line ?? "")}">` +
    `${esc(where(l))}, line ${esc(l.line ?? "?")}</a> <code>${esc(l.text.slice(0, 300))}</code></li>`).join("")}</ul>`;
}

function verifyRow(v: Diagnosis["verify"][number], index: number, canRun: boolean): string {
  const run = canRun && v.complete ? `<button class="run" data-index="${index}">Run…</button>` : "";
  const incomplete = v.complete ? "" : `<p class="hint">Fill in the &lt;placeholders&gt; before running it.</p>`;
  return `<div class="verify"><p>${esc(v.title)}</p><pre>${esc(v.command)}</pre>` +
    `<button class="copy" data-index="${index}">Copy</button>${run}${incomplete}</div>`;
}

export function timelineSvg(t: Timeline): string {
  // viewBox units; the picture scales to the panel's width, so keep it close to a typical panel.
  const rowHeight = 22, left = 150, width = 470, top = 10;
  const height = top * 2 + t.rows.length * rowHeight + 20;
  const x = (v: number) => left + 12 + v * (width - 40);
  const rows = t.rows.map((r, i) =>
    `<text x="${left - 8}" y="${top + i * rowHeight + 14}" text-anchor="end">${esc(r)}</text>` +
    `<line x1="${left}" x2="${left + width - 20}" y1="${top + i * rowHeight + 10}" y2="${top + i * rowHeight + 10}" class="row"/>`).join("");
  // Initiator drawn last so collateral at the same spot never hides it.
  const ordered = [...t.marks].sort((a, b) => (a.kind === "initiator" ? 1 : 0) - (b.kind === "initiator" ? 1 : 0));
  const marks = ordered.map((m) => {
    const cx = x(m.x), cy = top + m.row * rowHeight + 10;
    const label = `${where(m.location)}, line ${m.location.line ?? "?"}`;
    const attrs = `class="jump ${m.kind}" data-path="${esc(m.location.path)}" data-line="${esc(m.location.line ?? "")}"`;
    return m.kind === "initiator"
      ? `<g ${attrs}><title>first failure: ${esc(label)}</title><circle cx="${cx}" cy="${cy}" r="7"/></g>`
      : `<g ${attrs}><title>collateral: ${esc(label)}</title><rect x="${cx - 4}" y="${cy - 4}" width="8" height="8"/></g>`;
  }).join("");
  const axis = t.axis === "time" ? `time from the first failure → (${esc(formatSpan(t.span))} in all)` : "log order → (no timestamps on these lines)";
  return `<svg class="timeline" role="img" aria-label="timeline" viewBox="0 0 ${left + width} ${height}" width="100%" xmlns="http://www.w3.org/2000/svg">` +
    `${rows}${marks}<text x="${left}" y="${height - 4}" class="axis">${axis}</text></svg>` +
    `<p class="legend"><span class="dot"></span> first failure <span class="square"></span> collateral</p>`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1.2em 2em; line-height: 1.45; }
h1 { font-size: 1.3em; margin-bottom: 0; } h2 { font-size: 1.05em; margin-top: 1.4em; }
.subject { color: var(--vscode-descriptionForeground); margin-top: 0.2em; }
.verdict { font-size: 1.2em; } .verdict.unsure { color: var(--vscode-editorWarning-foreground); }
.confidence, .more, .hint { color: var(--vscode-descriptionForeground); }
code, pre { font-family: var(--vscode-editor-font-family); font-size: 0.92em; }
pre { background: var(--vscode-textCodeBlock-background); padding: 0.5em; white-space: pre-wrap; overflow-wrap: anywhere; }
ul.lines { list-style: none; padding-left: 0; } ul.lines li { margin: 0.3em 0; }
/* Words wrap whole; only a token longer than the line (a path, a hex dump) is cut. */
body { overflow-wrap: break-word; } code { overflow-wrap: anywhere; }
ul.initiator a { color: var(--vscode-errorForeground); font-weight: bold; }
a { color: var(--vscode-textLink-foreground); cursor: pointer; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 0.3em 0.9em; margin-right: 0.5em; cursor: pointer; }
svg.timeline { max-width: 760px; }
svg.timeline text { fill: var(--vscode-foreground); font-size: 13px; }
svg.timeline line.row { stroke: var(--vscode-editorIndentGuide-background, #8884); }
svg.timeline .initiator circle { fill: var(--vscode-errorForeground, #e51400); cursor: pointer; }
svg.timeline .collateral rect { fill: var(--vscode-editorInfo-foreground, #3794ff); opacity: 0.8; cursor: pointer; }
.legend .dot, .legend .square { display: inline-block; width: 9px; height: 9px; margin-left: 1em; }
.legend .dot { border-radius: 50%; background: var(--vscode-errorForeground, #e51400); }
.legend .square { background: var(--vscode-editorInfo-foreground, #3794ff); }
details.hypothesis, details.group { margin: 0.5em 0; } details.group summary code { font-size: 0.88em; }
.clean { font-size: 1.1em; }
`;

const SCRIPT = `
const vscode = acquireVsCodeApi();
document.addEventListener('click', (event) => {
  const target = event.target.closest('.jump, button.copy, button.run');
  if (!target) return;
  event.preventDefault();
  if (target.classList.contains('jump')) {
    vscode.postMessage({ type: 'reveal', path: target.dataset.path, line: Number(target.dataset.line) });
  } else {
    vscode.postMessage({ type: target.classList.contains('run') ? 'run' : 'copy', index: Number(target.dataset.index) });
  }
});
`;
