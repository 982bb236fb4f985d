// Bundles the extension (dist/extension.js) with esbuild; --tests also bundles the unit, packaging and
// end-to-end test files into client/out/. --production minifies and drops source maps.
import { build } from "esbuild";
import { existsSync, readdirSync } from "fs";
import { join } from "path";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");
const common = { bundle: true, platform: "node", format: "cjs", target: "node20", external: ["vscode"], logLevel: "warning" };

await build({
  ...common,
  entryPoints: ["client/src/extension.ts"],
  outfile: "dist/extension.js",
  minify: production,
  sourcemap: !production,
});

if (tests) {
  const tests = (dir) => readdirSync(dir).filter((f) => f.endsWith(".test.ts")).map((f) => join(dir, f));
  await build({ ...common, entryPoints: tests("client/test/unit"), outdir: "client/out/test/unit", sourcemap: true });
  if (existsSync("client/test/package")) {
    await build({ ...common, entryPoints: tests("client/test/package"), outdir: "client/out/test/package", sourcemap: true });
  }
  if (existsSync("client/test/e2e/suite/index.ts")) {
    await build({ ...common, entryPoints: ["client/test/e2e/suite/index.ts"], outfile: "client/out/test/e2e/suite/index.js", sourcemap: true });
  }
}
