// Answers in one comparable shape, whoever produced them: `rete query` on the .rete file (the
// reference) or a client. Terms follow the SPARQL-results JSON model and are keyed as N-Triples-like
// strings; blank nodes all key as `_:` (labels are the server's or client's own), `xsd:string` is
// the plain literal, language tags are lowercased. Rows and triples are sorted; graphs are sets.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import type { Form } from "./cases";

const RETE = resolve(import.meta.dirname, "../../target/release/rete");
const XSD_STRING = "http://www.w3.org/2001/XMLSchema#string";

export interface Term {
  type: string;
  value: string;
  "xml:lang"?: string;
  datatype?: string;
}

/** What a client driver prints for one query (drivers/*). */
export type Raw = { vars: string[]; rows: Record<string, Term>[] } | { boolean: boolean } | { triples: Term[][] } | { error: string };

export type Canonical = { vars: string[]; rows: string[] } | { boolean: boolean } | { triples: string[] };

export function key(term: Term): string {
  switch (term.type) {
    case "uri":
      return `<${term.value}>`;
    case "bnode":
      return "_:";
    case "literal":
    case "typed-literal": {
      const lexical = JSON.stringify(term.value);
      if (term["xml:lang"]) return `${lexical}@${term["xml:lang"].toLowerCase()}`;
      return term.datatype && term.datatype !== XSD_STRING ? `${lexical}^^<${term.datatype}>` : lexical;
    }
    default:
      throw new Error(`unknown term type ${term.type}`);
  }
}

export function canonical(raw: Raw): Canonical {
  if ("error" in raw) throw new Error(raw.error);
  if ("boolean" in raw) return { boolean: raw.boolean };
  if ("triples" in raw) return { triples: [...new Set(raw.triples.map((t) => t.map(key).join(" ")))].sort() };
  const rows = raw.rows.map((row) => JSON.stringify(raw.vars.filter((v) => row[v]).map((v) => [v, key(row[v])])));
  return { vars: raw.vars, rows: rows.sort() };
}

/** One N-Triples term as `rete query` writes it (oxttl: no spaces inside IRIs or labels). */
function ntTerm(text: string): Term {
  if (text.startsWith("<")) return { type: "uri", value: text.slice(1, -1) };
  if (text.startsWith("_:")) return { type: "bnode", value: text.slice(2) };
  const m = /^("(?:[^"\\]|\\.)*")(?:@([^\s]+)|\^\^<([^>]*)>)?$/.exec(text);
  if (!m) throw new Error(`not an N-Triples term: ${text}`);
  const value = JSON.parse(m[1].replace(/\\U([0-9A-Fa-f]{8})/g, (_, hex) => JSON.stringify(String.fromCodePoint(parseInt(hex, 16))).slice(1, -1)));
  return m[2] ? { type: "literal", value, "xml:lang": m[2] } : { type: "literal", value, datatype: m[3] ?? XSD_STRING };
}

function parseNTriples(text: string): Term[][] {
  return text
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => {
      const m = /^(\S+) (\S+) (.*) \.$/.exec(line.trim());
      if (!m) throw new Error(`not an N-Triples line: ${line}`);
      return [ntTerm(m[1]), ntTerm(m[2]), ntTerm(m[3])];
    });
}

/** `rete query` on the file: the answer every client is compared with. */
export function reference(reteFile: string, form: Form, query: string, extra: string[] = []): Canonical {
  const graph = form === "construct" || form === "describe";
  const out = execFileSync(RETE, ["query", reteFile, query, "-f", graph ? "nt" : "json", ...extra], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (graph) return canonical({ triples: parseNTriples(out) });
  const json = JSON.parse(out);
  return canonical("boolean" in json ? { boolean: json.boolean } : { vars: json.head.vars, rows: json.results.bindings });
}
