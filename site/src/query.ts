// The query page with JavaScript: the server's form becomes a SPARQL editor (CodeMirror 6 with
// SPARQL highlighting); Run fetches /{ds}/sparql like any client (GET, or POST when the URL would
// be long) and shows the answer as a sortable table, the request's reads, bytes and time, download
// links in the endpoint's own formats, and a syntax error marked at its line and column. The URL
// keeps ?query=, so a result is shared as a link; opening such a link runs the query. The editor
// completes prefixes, the card's predicates and classes, and resources by label (complete.ts).

import { basicSetup, EditorView } from "codemirror";
import { setDiagnostics } from "@codemirror/lint";
import { EditorState, Prec } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { sparql } from "codemirror-lang-sparql";
import { completion } from "./complete";
import { parseNTriples, resultsTable } from "./results";
import type { ErrorBody, Example, SparqlJson } from "./types";

/** Longer GET URLs are sent as a POST form instead, as SPARQL clients do. */
const MAX_GET_URL = 2000;
const ACCEPT = "application/sparql-results+json, application/n-triples;q=0.9";

function element<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

/** The editor position of a 1-based line and column (the column counts code points). */
function position(view: EditorView, line: number, column: number): number {
  const doc = view.state.doc;
  const at = doc.line(Math.min(Math.max(line, 1), doc.lines));
  const prefix = Array.from(at.text).slice(0, Math.max(column - 1, 0)).join("");
  return at.from + prefix.length;
}

export function enhance(dataset: string): void {
  const form = document.querySelector<HTMLFormElement>("form.query");
  const textarea = form?.querySelector("textarea");
  const found = document.getElementById("results");
  if (!form || !textarea || !found) return;
  const results: HTMLElement = found;
  const endpoint = `/${encodeURIComponent(dataset)}/sparql`;

  // The editor replaces the textarea; the label now names the editor.
  const label = form.querySelector<HTMLLabelElement>("label[for=query]");
  if (label) {
    label.id = "query-label";
    label.htmlFor = "";
  }
  textarea.hidden = true;
  const host = element("div", { className: "editor" });
  textarea.after(host);
  const complete = completion(dataset);
  const view = new EditorView({
    doc: textarea.value,
    parent: host,
    extensions: [
      basicSetup,
      sparql(),
      EditorState.languageData.of(() => [{ autocomplete: complete }]),
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ "aria-labelledby": "query-label", "aria-describedby": "query-help" }),
      Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => (run(), true) }])),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) update.view.dispatch(setDiagnostics(update.state, []));
      }),
    ],
  });
  host.after(element("p", { id: "query-help", className: "help" }, "Ctrl+Enter (⌘+Enter) runs the query. Esc then Tab leaves the editor."));

  // Results appear here; the format menu of the no-script form is replaced by download links.
  form.querySelector("select[name=format]")?.closest("label")?.remove();
  const status = element("p", { className: "status", role: "status" });
  results.before(status);

  examples(dataset, form, view).catch((error: unknown) => console.warn("examples:", error));

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run();
  });
  if (new URLSearchParams(location.search).has("query")) run();

  async function run(): Promise<void> {
    const query = view.state.doc.toString();
    history.replaceState(null, "", `${endpoint}?${new URLSearchParams({ query })}`);
    const params = new URLSearchParams({ query });
    const url = `${endpoint}?${params}`;
    const init: RequestInit = url.length <= MAX_GET_URL ? { headers: { accept: ACCEPT } } : { method: "POST", body: params, headers: { accept: ACCEPT } };
    status.textContent = "Running…";
    results.replaceChildren();
    results.setAttribute("aria-busy", "true");
    const started = performance.now();
    try {
      const response = await fetch(url.length <= MAX_GET_URL ? url : endpoint, init);
      const text = await response.text();
      const elapsed = Math.round(performance.now() - started);
      const reads = response.headers.get("x-rete-reads") ?? "?";
      const bytes = Number(response.headers.get("x-rete-bytes") ?? "0");
      const cost = `${elapsed} ms · ${reads} reads · ${bytes.toLocaleString("en")} bytes read`;
      if (!response.ok) {
        showError(text, response.status, cost);
        return;
      }
      const type = response.headers.get("content-type") ?? "";
      if (type.startsWith("application/n-triples")) {
        const triples = parseNTriples(text);
        status.textContent = `${triples.length} triples · ${cost}`;
        results.replaceChildren(downloads(query, ["ttl", "nt", "jsonld"]), resultsTable(dataset, ["subject", "predicate", "object"], triples));
      } else {
        const json = JSON.parse(text) as SparqlJson;
        if (json.boolean !== undefined) {
          status.textContent = `Answer: ${json.boolean} · ${cost}`;
          results.replaceChildren(downloads(query, ["json", "xml", "csv", "tsv"]), element("p", { className: "boolean" }, "Answer: ", element("strong", {}, String(json.boolean))));
        } else {
          const vars = json.head.vars ?? [];
          const bindings = json.results?.bindings ?? [];
          status.textContent = `${bindings.length} solutions · ${cost}`;
          const rows = bindings.map((b) => vars.map((v) => b[v]));
          results.replaceChildren(downloads(query, ["json", "csv", "tsv"]), resultsTable(dataset, vars.map((v) => `?${v}`), rows));
        }
      }
    } catch (error) {
      status.textContent = `The request failed: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      results.removeAttribute("aria-busy");
    }
  }

  function showError(text: string, code: number, cost: string): void {
    let body: ErrorBody | undefined;
    try {
      body = JSON.parse(text) as ErrorBody;
    } catch {
      body = undefined;
    }
    const message = body ? body.message + (body.pointer ? `\n${body.pointer}` : "") : text;
    const box = element("div", { className: "error", role: "alert" }, element("strong", {}, `Error ${code}: `), element("pre", {}, message));
    results.replaceChildren(box);
    status.textContent = `Failed · ${cost}`;
    if (body?.line !== undefined && body.column !== undefined) {
      const from = position(view, body.line, body.column);
      const to = Math.min(from + 1, view.state.doc.lineAt(from).to);
      view.dispatch(setDiagnostics(view.state, [{ from, to: Math.max(to, from), severity: "error", message: body.message }]));
      view.dispatch({ selection: { anchor: from } });
      box.prepend(element("p", { className: "where" }, `At line ${body.line}, column ${body.column}:`));
    }
  }

  /** Links that ask the endpoint itself for the answer in each format (nothing re-serialized here). */
  function downloads(query: string, formats: string[]): HTMLElement {
    const nav = element("p", { className: "downloads" }, "Download: ");
    formats.forEach((format, i) => {
      const a = element("a", { href: `${endpoint}?${new URLSearchParams({ query, format })}`, textContent: format.toUpperCase() });
      a.setAttribute("download", `${dataset}-results.${format}`);
      if (i) nav.append(" · ");
      nav.append(a);
    });
    return nav;
  }
}

/** The example queries of this dataset, when the site ships some (examples/NAME/queries/). */
async function examples(dataset: string, form: HTMLFormElement, view: EditorView): Promise<void> {
  const response = await fetch(`/_site/examples/${encodeURIComponent(dataset)}.json`);
  if (!response.ok) return;
  const list = (await response.json()) as Example[];
  if (!list.length) return;
  const select = element("select", { name: "example" }, element("option", { value: "" }, "choose…"));
  for (const [i, example] of list.entries()) select.append(element("option", { value: String(i) }, example.title));
  select.addEventListener("change", () => {
    const example = list[Number(select.value)];
    if (select.value === "" || !example) return;
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: example.query } });
  });
  form.prepend(element("label", { className: "examples" }, "Example queries ", select));
}
