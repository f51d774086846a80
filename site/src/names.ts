// Names for the IRIs of a result table, as the resource pages show them: after the answer is
// drawn, the table's IRIs (the first MAX_IRIS) are sent to `/{ds}/labels` in batches and each
// link then shows the IRI's label, else its prefixed name from the dataset's card; the link
// keeps the IRI as its target and on hover (title). Names already fetched are kept per dataset,
// so re-sorting the table or a second query does not ask again.

import type { NamesOutput } from "./types";

/** IRIs one table names at most (the Worker's bounds cut the label lookups beyond that anyway). */
const MAX_IRIS = 300;
/** IRIs a request asks for (the Worker's limit is 100), and the longest request URL. */
const BATCH = 100;
const MAX_URL = 6000;

/** Names fetched so far, by dataset then IRI; `null`: the IRI has no name. */
const known = new Map<string, Map<string, string | null>>();

function namesOf(dataset: string): Map<string, string | null> {
  let names = known.get(dataset);
  if (!names) known.set(dataset, (names = new Map()));
  return names;
}

/** The name known for an IRI of a dataset, if fetched. */
export function nameOf(dataset: string, iri: string): string | undefined {
  return namesOf(dataset).get(iri) ?? undefined;
}

/** Shows a link by name when one is known, keeping the IRI on hover. */
export function applyName(dataset: string, link: HTMLAnchorElement, iri: string): void {
  const name = nameOf(dataset, iri);
  if (!name) return;
  link.textContent = name;
  link.title = iri;
  link.classList.add("named");
}

/** Batches of IRIs whose request URL stays short. */
function batches(dataset: string, iris: string[]): string[] {
  const urls: string[] = [];
  let params = new URLSearchParams();
  let count = 0;
  const base = `/${encodeURIComponent(dataset)}/labels?`;
  for (const iri of iris) {
    const next = new URLSearchParams(params);
    next.append("iri", iri);
    if (count && (count >= BATCH || base.length + next.toString().length > MAX_URL)) {
      urls.push(base + params.toString());
      params = new URLSearchParams([["iri", iri]]);
      count = 1;
    } else {
      params = next;
      count++;
    }
  }
  if (count) urls.push(base + params.toString());
  return urls;
}

/** Fetches names for the links under `root` not named yet, then shows them. */
export async function nameLinks(dataset: string, root: HTMLElement): Promise<void> {
  const names = namesOf(dataset);
  const links = Array.from(root.querySelectorAll<HTMLAnchorElement>("a.iri[data-iri]"));
  const wanted = [...new Set(links.map((a) => a.dataset.iri ?? ""))].filter((iri) => iri && !names.has(iri)).slice(0, MAX_IRIS);
  await Promise.all(
    batches(dataset, wanted).map(async (url) => {
      const response = await fetch(url, { headers: { accept: "application/json" } });
      if (!response.ok) return;
      const output = (await response.json()) as NamesOutput;
      for (const entry of output.names) names.set(entry.iri, entry.label ?? entry.prefixed ?? null);
    }),
  );
  for (const link of root.querySelectorAll<HTMLAnchorElement>("a.iri[data-iri]")) applyName(dataset, link, link.dataset.iri ?? "");
}
