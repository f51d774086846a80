// Completion in the query editor (CodeMirror's autocompletion, which basicSetup turns on):
// - after `<` and a few letters, resources by label through `/{ds}/search` (the IRI is inserted);
// - after `prefix:`, the card's predicates and classes in that namespace, or when none starts with
//   the letters typed, resources by label whose IRI lies in it (inserted as prefixed names);
// - a word at the start of a name, the card's prefixes (`rdfs:`) and prefixed predicates/classes.
// A prefixed name whose prefix the query does not declare adds its PREFIX line at the top.

import type { Completion, CompletionContext, CompletionResult } from "@codemirror/autocomplete";
import type { EditorView } from "@codemirror/view";
import type { Card, SearchOutput } from "./types";

/** Hits asked of the search index for one completion. */
const HITS = 10;
/** Letters typed before the search index is asked. */
const MIN_SEARCH = 2;

/** A local name Turtle and SPARQL take as is (a conservative PN_LOCAL). */
const PLAIN_LOCAL = /^[\p{L}\p{N}_][\p{L}\p{N}_.-]*$/u;

interface Vocabulary {
  namespaces: { prefix: string; iri: string }[];
  /** Predicates and classes of the card, with their label and kind. */
  terms: { iri: string; label?: string; type: "property" | "class"; count: number }[];
}

function vocabularyOf(card: Card): Vocabulary {
  const namespaces = (card.namespaces ?? []).map(({ prefix, iri }) => ({ prefix, iri })).sort((a, b) => b.iri.length - a.iri.length);
  const terms = [
    ...card.predicates.map((p) => ({ iri: p.iri, label: p.label, type: "property" as const, count: p.quads })),
    ...card.classes.map((c) => ({ iri: c.iri, label: c.label, type: "class" as const, count: c.instances })),
  ];
  return { namespaces, terms };
}

/** `iri` as `prefix:local` when a namespace holds it and the local name needs no escape. */
function prefixed(vocabulary: Vocabulary, iri: string): string | undefined {
  for (const { prefix, iri: namespace } of vocabulary.namespaces) {
    if (iri.startsWith(namespace)) {
      const local = iri.slice(namespace.length);
      if (PLAIN_LOCAL.test(local) && !local.endsWith(".")) return `${prefix}:${local}`;
    }
  }
  return undefined;
}

/** Inserts `text` over [from, to) (and a `>` the editor closed), declaring `prefix` when the query does not. */
function insert(text: string, declare?: { prefix: string; iri: string }) {
  return (view: EditorView, _completion: Completion, from: number, to: number): void => {
    const doc = view.state.doc;
    const end = text.startsWith("<") && doc.sliceString(to, to + 1) === ">" ? to + 1 : to;
    const changes = [{ from, to: end, insert: text }];
    let shift = 0;
    if (declare) {
      const declared = new RegExp(`(^|\\s)PREFIX\\s+${declare.prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:`, "i").test(doc.toString());
      if (!declared) {
        const line = `PREFIX ${declare.prefix}: <${declare.iri}>\n`;
        changes.push({ from: 0, to: 0, insert: line });
        shift = line.length;
      }
    }
    view.dispatch({ changes, selection: { anchor: from + text.length + shift } });
  };
}

/** The completion source of a dataset's query editor. */
export function completion(dataset: string): (context: CompletionContext) => Promise<CompletionResult | null> {
  let vocabulary: Promise<Vocabulary> | undefined;
  const load = (): Promise<Vocabulary> =>
    (vocabulary ??= fetch(`/${encodeURIComponent(dataset)}/card`, { headers: { accept: "application/json" } })
      .then((r) => (r.ok ? (r.json() as Promise<Card>) : Promise.reject(new Error(`card: ${r.status}`))))
      .then(vocabularyOf)
      .catch(() => ({ namespaces: [], terms: [] })));

  async function search(q: string, context: CompletionContext): Promise<SearchOutput["results"]> {
    const controller = new AbortController();
    context.addEventListener("abort", () => controller.abort());
    const url = `/${encodeURIComponent(dataset)}/search?q=${encodeURIComponent(q)}&limit=${HITS}`;
    try {
      const response = await fetch(url, { headers: { accept: "application/json" }, signal: controller.signal });
      return response.ok ? ((await response.json()) as SearchOutput).results : [];
    } catch {
      return [];
    }
  }

  return async (context) => {
    // `<` then words: resources by label (an IRI being typed, `<http…`, is left alone).
    const bracket = context.matchBefore(/<[^<>"{}|^`\\\n]*$/);
    if (bracket) {
      const text = bracket.text.slice(1);
      if (text.trim().length < MIN_SEARCH || /^\s/.test(text) || /^[a-z][a-z0-9+.-]*:/i.test(text)) return null;
      const hits = await search(text, context);
      if (context.aborted || !hits.length) return null;
      return {
        from: bracket.from,
        filter: false,
        options: hits.map((hit) => ({ label: hit.label, detail: hit.iri, type: "constant", apply: insert(`<${hit.iri}>`) })),
      };
    }
    const name = context.matchBefore(/[A-Za-z][\w.-]*:[\p{L}\p{N}_.-]*$|[A-Za-z][\w-]*$/u);
    if (!name || (name.from === name.to && !context.explicit)) return null;
    const before = context.state.doc.sliceString(Math.max(0, name.from - 1), name.from);
    if (before && /[\w?$:<"']/.test(before)) return null;
    const v = await load();
    if (context.aborted) return null;
    const colon = name.text.indexOf(":");
    if (colon < 0) {
      // A word: prefixes, and the card's terms by prefixed name.
      const prefixes: Completion[] = v.namespaces.map(({ prefix, iri }) => ({ label: `${prefix}:`, detail: iri, type: "namespace" }));
      const terms: Completion[] = [];
      for (const term of v.terms) {
        const short = prefixed(v, term.iri);
        if (!short) continue;
        const ns = v.namespaces.find((n) => short.startsWith(`${n.prefix}:`));
        terms.push({ label: short, detail: term.label ? `${term.label} · ${term.type}` : term.type, type: term.type, boost: Math.min(Math.log10(1 + term.count), 9) - 10, apply: insert(short, ns) });
      }
      return { from: name.from, options: [...prefixes, ...terms], validFor: /^[\w-]*$/ };
    }
    // `prefix:local`: the namespace's card terms, then resources by label in it.
    const prefix = name.text.slice(0, colon);
    const local = name.text.slice(colon + 1);
    const ns = v.namespaces.find((n) => n.prefix === prefix);
    if (!ns) return null;
    const options: Completion[] = v.terms
      .filter((term) => term.iri.startsWith(ns.iri) && PLAIN_LOCAL.test(term.iri.slice(ns.iri.length)))
      .map((term) => {
        const short = `${prefix}:${term.iri.slice(ns.iri.length)}`;
        return { label: short, detail: term.label ? `${term.label} · ${term.type}` : term.type, type: term.type, apply: insert(short, ns) };
      });
    // The card's terms answer at once (and keep answering while the name grows); resources by
    // label are asked for only when no term of the card starts with what was typed.
    const lower = local.toLowerCase();
    if (options.some((o) => o.label.slice(prefix.length + 1).toLowerCase().startsWith(lower))) {
      return { from: name.from, options, validFor: /^[\w.-]*:[\p{L}\p{N}_.-]*$/u };
    }
    if (local.length >= MIN_SEARCH) {
      const hits: Completion[] = [];
      const seen = new Set<string>();
      for (const hit of await search(local, context)) {
        if (!hit.iri.startsWith(ns.iri)) continue;
        const rest = hit.iri.slice(ns.iri.length);
        const text = PLAIN_LOCAL.test(rest) ? `${prefix}:${rest}` : `<${hit.iri}>`;
        if (seen.has(text)) continue;
        seen.add(text);
        hits.push({ label: hit.label, detail: text, type: "constant", apply: insert(text, text.startsWith("<") ? undefined : ns) });
      }
      if (context.aborted) return null;
      // Server hits match by label, not by the text typed: the list is not filtered again.
      return hits.length ? { from: name.from, filter: false, options: hits } : null;
    }
    return options.length ? { from: name.from, options } : null;
  };
}
