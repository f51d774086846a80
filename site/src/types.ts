// The Worker's JSON answers the site reads, named after the Rust structs and routes that
// produce them (core/src/format/card.rs Card, worker/src/routes/summary.rs, SPARQL JSON results).
// Members marked optional come with newer cards or summaries; the pages work without them.

export interface PredicateCount { iri: string; quads: number; label?: string }
export interface ClassCount { iri: string; instances: number; label?: string; examples?: string[] }
export interface Namespace { prefix: string; iri: string; terms?: number }

/** `GET /{ds}/card` (Accept: application/json). */
export interface Card {
  rete_version: string;
  quads: number;
  terms: number;
  graphs: number;
  predicates: PredicateCount[];
  classes: ClassCount[];
  title?: string;
  description?: string;
  license?: string;
  namespaces?: Namespace[];
}

export interface SchemaLink { from: string; predicate: string; to: string; count: number }

/** `GET /{ds}/summary`. */
export interface Summary {
  dataset: string;
  version: string;
  schema?: {
    classes: { iri: string; label?: string; instances: number }[];
    subclass_of?: { sub: string; super: string }[];
    links?: SchemaLink[];
  };
  levels: { level: number; nodes: number; edges: number }[];
  /** Why the schema is partial (a file without a SUMMARY section). */
  note?: string;
}

/** A community (super-node); `parent` is its community one level coarser. */
export interface LevelNode { id: number | string; size: number; label?: string; iri?: string; parent?: number | string | null; members?: string }

/** `GET /{ds}/summary?level=N`. */
export interface SummaryLevel {
  level: number;
  levels: number;
  nodes: LevelNode[];
  edges: { source: number | string; target: number | string; weight: number }[];
}

/** `GET /{ds}/summary/members?level=N&node=I[&page=P]`: a page of a community's members. */
export interface Members { size: number; page: number; pages: number; members: string[]; next?: string | null }

/** One RDF term of SPARQL JSON results (and of parsed N-Triples); an RDF 1.2 triple term
 * (SPARQL 1.2 JSON results) has its three parts as its value. */
export type Term =
  | { type: "uri" | "literal" | "bnode"; value: string; "xml:lang"?: string; "its:dir"?: string; datatype?: string }
  | { type: "triple"; value: { subject: Term; predicate: Term; object: Term } };

/** SPARQL 1.1 Query Results JSON. */
export interface SparqlJson {
  head: { vars?: string[] };
  results?: { bindings: Record<string, Term>[] };
  boolean?: boolean;
}

/** The Worker's error body (worker/src/http_error.rs): a syntax error carries its position, 1-based. */
export interface ErrorBody { error: string; status: number; message: string; line?: number; column?: number; pointer?: string }

/** An example query shipped with the site (scripts/build-site.mjs, from examples/NAME/queries/). */
export interface Example { file: string; title: string; query: string }

/** `GET /{ds}/search?q=` (core/src/search SearchOutput), the same JSON as `rete search --json`. */
export interface SearchOutput {
  query: string;
  results: { iri: string; label: string; lang: string; score: number; types?: string[] }[];
  cut: boolean;
  types_cut?: boolean;
  rounds: number;
  requests: number;
  bytes: number;
}

/** `GET /{ds}/labels?iri=…` (core/src/search/names.rs NamesOutput): how each IRI is shown. */
export interface NamesOutput {
  names: { iri: string; label?: string; lang?: string; prefixed?: string }[];
  cut: boolean;
}
