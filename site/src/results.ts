// Results as a table: SPARQL JSON solutions or N-Triples triples, IRIs linking to their resource
// page (shown by label or prefixed name once names.ts has them), literals with their language or
// datatype; each column sortable by its header button.

import { applyName, nameLinks } from "./names";
import type { Term } from "./types";

const XSD_STRING = "http://www.w3.org/2001/XMLSchema#string";
const NUMERIC = /#(integer|decimal|double|float|long|int|short|byte|nonNegativeInteger|positiveInteger|unsignedInt|unsignedLong)$/;

function resourceLink(dataset: string, iri: string): HTMLAnchorElement {
  const a = document.createElement("a");
  a.className = "iri";
  a.href = `/${encodeURIComponent(dataset)}/resource?iri=${encodeURIComponent(iri)}`;
  a.textContent = iri;
  a.dataset.iri = iri;
  applyName(dataset, a, iri);
  return a;
}

/** A table cell's content for a term. */
export function termNode(dataset: string, term: Term): Node {
  if (term.type === "triple") {
    // An RDF 1.2 triple term: its parts shown (and linked) like any term.
    const span = document.createElement("span");
    span.className = "triple";
    const { subject, predicate, object } = term.value;
    span.append("<<( ", termNode(dataset, subject), " ", termNode(dataset, predicate), " ", termNode(dataset, object), " )>>");
    return span;
  }
  if (term.type === "uri") return resourceLink(dataset, term.value);
  if (term.type === "bnode") {
    const code = document.createElement("code");
    code.textContent = `_:${term.value}`;
    return code;
  }
  const span = document.createElement("span");
  const lit = document.createElement("span");
  lit.className = "lit";
  lit.textContent = term.value;
  span.append(lit);
  const tag = document.createElement("span");
  tag.className = "dt";
  if (term["xml:lang"]) {
    tag.textContent = ` @${term["xml:lang"]}${term["its:dir"] ? `--${term["its:dir"]}` : ""}`;
    span.append(tag);
  } else if (term.datatype && term.datatype !== XSD_STRING) {
    tag.append(" ^^", resourceLink(dataset, term.datatype));
    span.append(tag);
  }
  return span;
}

/** The value a column sorts by: numbers as numbers, the rest as text. */
function sortKey(term: Term | undefined): number | string {
  if (!term) return "";
  if (term.type === "triple") return termText(term);
  if (term.type === "literal" && term.datatype && NUMERIC.test(term.datatype)) {
    const n = Number(term.value);
    if (!Number.isNaN(n)) return n;
  }
  return term.value;
}

/** A term as plain text; a triple term as `<<( s p o )>>` of its parts' text. */
function termText(term: Term): string {
  if (term.type !== "triple") return term.value;
  const { subject, predicate, object } = term.value;
  return `<<( ${termText(subject)} ${termText(predicate)} ${termText(object)} )>>`;
}

function compare(a: number | string, b: number | string): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "number") return -1;
  if (typeof b === "number") return 1;
  return a.localeCompare(b, undefined, { numeric: true });
}

/** A sortable table of rows of terms (a missing term is an unbound variable). */
export function resultsTable(dataset: string, columns: string[], rows: (Term | undefined)[][]): HTMLElement {
  const table = document.createElement("table");
  table.className = "results";
  const head = table.createTHead().insertRow();
  const body = table.createTBody();
  let order = rows.map((_, i) => i);
  const fill = () => {
    const fragment = document.createDocumentFragment();
    for (const i of order) {
      const tr = document.createElement("tr");
      for (const term of rows[i]) {
        const td = tr.insertCell();
        if (term) td.append(termNode(dataset, term));
      }
      fragment.append(tr);
    }
    body.replaceChildren(fragment);
  };
  columns.forEach((column, c) => {
    const th = document.createElement("th");
    th.scope = "col";
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = column;
    button.title = `Sort by ${column}`;
    button.addEventListener("click", () => {
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      for (const other of head.querySelectorAll("th")) other.removeAttribute("aria-sort");
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const keys = rows.map((row) => sortKey(row[c]));
      order = rows.map((_, i) => i).sort((a, b) => (ascending ? 1 : -1) * compare(keys[a], keys[b]) || a - b);
      fill();
    });
    th.append(button);
    head.append(th);
  });
  fill();
  nameLinks(dataset, table).catch((error: unknown) => console.warn("names:", error));
  const scroll = document.createElement("div");
  scroll.className = "scroll";
  scroll.append(table);
  return scroll;
}

// N-Triples 1.2 (the answer of CONSTRUCT and DESCRIBE): one triple a line, terms as below, and
// triple terms `<<( s p o )>>` of such terms (nested in object position).
const TERM = /\s*(?:<([^>]*)>|_:([^\s.()]+(?:\.[^\s.()]+)*)|"((?:[^"\\]|\\.)*)"(?:@([A-Za-z]+(?:-[A-Za-z0-9]+)*?)(?:--(ltr|rtl))?(?=[\s.)])|\^\^<([^>]*)>)?)/y;
const OPEN = /\s*<<\(/y;
const CLOSE = /\s*\)>>/y;

function unescape(text: string): string {
  return text.replace(/\\(?:U([0-9A-Fa-f]{8})|u([0-9A-Fa-f]{4})|(.))/g, (_, long, short, char) => {
    if (long || short) return String.fromCodePoint(parseInt(long ?? short, 16));
    return ({ t: "\t", b: "\b", n: "\n", r: "\r", f: "\f" } as Record<string, string>)[char] ?? char;
  });
}

/** The term at `at.index` of `line`, moving past it; `undefined` when there is none. */
function readTerm(line: string, at: { index: number }, depth = 0): Term | undefined {
  OPEN.lastIndex = at.index;
  if (OPEN.test(line)) {
    if (depth >= 32) return undefined;
    at.index = OPEN.lastIndex;
    const [subject, predicate, object] = [0, 1, 2].map(() => readTerm(line, at, depth + 1));
    CLOSE.lastIndex = at.index;
    if (!subject || !predicate || !object || !CLOSE.test(line)) return undefined;
    at.index = CLOSE.lastIndex;
    return { type: "triple", value: { subject, predicate, object } };
  }
  TERM.lastIndex = at.index;
  const m = TERM.exec(line);
  if (!m) return undefined;
  at.index = TERM.lastIndex;
  if (m[1] !== undefined) return { type: "uri", value: unescape(m[1]) };
  if (m[2] !== undefined) return { type: "bnode", value: m[2] };
  return { type: "literal", value: unescape(m[3]), "xml:lang": m[4], "its:dir": m[5], datatype: m[6] ? unescape(m[6]) : undefined };
}

/** Parses N-Triples into rows of [subject, predicate, object]; throws naming the line it cannot read. */
export function parseNTriples(text: string): Term[][] {
  const triples: Term[][] = [];
  text.split("\n").forEach((line, index) => {
    if (/^\s*(#.*)?$/.test(line)) return;
    const at = { index: 0 };
    const terms: Term[] = [];
    for (let k = 0; k < 3; k++) {
      const term = readTerm(line, at);
      if (!term) throw new Error(`line ${index + 1} of the N-Triples answer is not a triple: ${line}`);
      terms.push(term);
    }
    triples.push(terms);
  });
  return triples;
}
