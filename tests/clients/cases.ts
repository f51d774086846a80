// The queries every client runs against the endpoint; each answer is compared with `rete query` on
// the same file. Together they cover every query form, typed and language-tagged literals, blank
// nodes, and a query long enough (~10 KB) that clients which switch to POST for long URLs do so.
export type Form = "select" | "ask" | "construct" | "describe";

export interface Case {
  id: string;
  form: Form;
  query: string;
}

const PREFIX = "PREFIX ex: <http://example.org/>\n";
// Three hundred IRIs no subject has: the filter keeps every row, and makes the query long.
const ABSENT = Array.from({ length: 300 }, (_, i) => `<http://example.org/absent/${i}>`).join(", ");

export const CASES: Case[] = [
  { id: "select", form: "select", query: `${PREFIX}SELECT ?s ?p ?o WHERE { ?s ?p ?o }` },
  { id: "select-optional", form: "select", query: `${PREFIX}SELECT ?person ?name ?age WHERE { ?person a ex:Person . OPTIONAL { ?person ex:name ?name FILTER(lang(?name) = "en") } OPTIONAL { ?person ex:age ?age } }` },
  { id: "ask-true", form: "ask", query: `${PREFIX}ASK { ex:alice ex:knows ex:bob }` },
  { id: "ask-false", form: "ask", query: `${PREFIX}ASK { ex:bob ex:knows ex:alice }` },
  { id: "construct", form: "construct", query: `${PREFIX}CONSTRUCT { ?s ex:label ?name ; ?p ?o } WHERE { ?s ?p ?o OPTIONAL { ?s ex:name ?name } }` },
  { id: "describe", form: "describe", query: `${PREFIX}DESCRIBE ex:alice` },
  { id: "long-select", form: "select", query: `${PREFIX}SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(?s NOT IN (${ABSENT})) }` },
];
