// Builds the site (site/src) into build/site/_site/, the Workers static assets wrangler.toml's
// [assets] serves at /_site/: one esbuild bundle (ES modules, split so the query page alone loads
// the editor and the dataset page alone the graph library), the stylesheet, and the example queries
// of examples/NAME/queries/*.rq as examples/NAME.json. Type-checks first (esbuild only strips
// types: `tsc -p site`, strict). Prints each file's gzip size.
//
// Usage: node scripts/build-site.mjs
import { execFileSync } from "node:child_process";
import { build } from "esbuild";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";

const root = resolve(import.meta.dirname, "..");
const out = join(root, "build/site/_site");
execFileSync(join(root, "node_modules/.bin/tsc"), ["-p", join(root, "site")], { stdio: "inherit" });
rmSync(join(root, "build/site"), { recursive: true, force: true });
mkdirSync(join(out, "examples"), { recursive: true });

await build({
  entryPoints: { site: join(root, "site/src/main.ts"), "site-css": join(root, "site/src/style.css") },
  bundle: true,
  splitting: true,
  format: "esm",
  minify: true,
  target: "es2022",
  outdir: out,
  entryNames: "[name]",
  chunkNames: "chunks/[name]-[hash]",
  logLevel: "warning",
});
// esbuild names a CSS entry after its key; the pages link site.css.
writeFileSync(join(out, "site.css"), readFileSync(join(out, "site-css.css")));
rmSync(join(out, "site-css.css"));
rmSync(join(out, "site-css.js"), { force: true });

// Example queries: the first comment line of each .rq is its title.
const examples = join(root, "examples");
for (const name of readdirSync(examples)) {
  const dir = join(examples, name, "queries");
  if (!existsSync(dir)) continue;
  const list = readdirSync(dir)
    .filter((file) => file.endsWith(".rq"))
    .sort()
    .map((file) => {
      const query = readFileSync(join(dir, file), "utf8");
      const title = query.match(/^#\s*(.+)$/m)?.[1] ?? file;
      return { file, title, query };
    });
  writeFileSync(join(out, "examples", `${name}.json`), JSON.stringify(list));
}

let total = 0;
const sizes = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (/\.(js|css)$/.test(entry.name)) {
      const gz = gzipSync(readFileSync(path)).length;
      total += gz;
      sizes.push(`  ${path.slice(out.length + 1)}: ${readFileSync(path).length} bytes, ${gz} gzipped`);
    }
  }
};
walk(out);
console.log(`build-site: build/site/_site/ (${(total / 1024).toFixed(0)} KiB gzipped in all)\n${sizes.join("\n")}`);
