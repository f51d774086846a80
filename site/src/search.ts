// Suggestions as you type, for every search form the server renders (form.search: the dataset
// page, the search page, the home page). The form works without this script (a GET to the HTML
// search page); with it, the input becomes an ARIA combobox: after a short pause each change
// asks `/{ds}/search?q=…&limit=8` for JSON (the previous request aborted), the hits are listed
// below the input, arrow keys move through them, Enter or a click opens the resource's page,
// Escape closes the list. On the home page the form's dataset select says where to search;
// its "all" option asks every dataset that has a search index and merges the hits.

import type { SearchOutput } from "./types";

const DEBOUNCE_MS = 150;
const SUGGESTIONS = 8;

interface Suggestion { dataset: string; iri: string; label: string; lang: string; score: number }

let forms = 0;

/** Enhances every search form on the page. */
export function enhance(): void {
  for (const form of document.querySelectorAll<HTMLFormElement>("form.search")) suggest(form);
}

function resourceHref(dataset: string, iri: string): string {
  return `/${encodeURIComponent(dataset)}/resource?iri=${encodeURIComponent(iri)}`;
}

/** The datasets a form searches: its own, or the home page select's choice (all of them for ""). */
function datasetsOf(form: HTMLFormElement): string[] {
  const select = form.querySelector<HTMLSelectElement>("select[name=ds]");
  if (!select) return [form.dataset.dataset ?? ""].filter(Boolean);
  if (select.value) return [select.value];
  return Array.from(select.options, (option) => option.value).filter(Boolean);
}

/** Hits of one dataset; none when it has no search index (404) or the request failed. */
async function fetchHits(dataset: string, q: string, signal: AbortSignal): Promise<Suggestion[]> {
  const url = `/${encodeURIComponent(dataset)}/search?q=${encodeURIComponent(q)}&limit=${SUGGESTIONS}`;
  const response = await fetch(url, { headers: { accept: "application/json" }, signal });
  if (!response.ok) return [];
  const output = (await response.json()) as SearchOutput;
  return output.results.map((hit) => ({ dataset, ...hit }));
}

function suggest(form: HTMLFormElement): void {
  const input = form.querySelector<HTMLInputElement>("input[name=q]");
  if (!input) return;
  const id = `suggestions-${forms++}`;
  const list = Object.assign(document.createElement("ul"), { id, className: "suggestions", hidden: true });
  list.setAttribute("role", "listbox");
  list.setAttribute("aria-label", "suggestions");
  input.after(list);
  input.setAttribute("role", "combobox");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-controls", id);
  input.setAttribute("aria-expanded", "false");

  // The home page's dataset list: "all datasets" first; the server's form (no script) names one.
  const select = form.querySelector<HTMLSelectElement>("select[name=ds]");
  if (select && select.options.length > 1) {
    select.prepend(new Option("all datasets", "", true, true));
    select.value = "";
  }

  let items: Suggestion[] = [];
  let active = -1;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inflight: AbortController | undefined;
  const several = () => datasetsOf(form).length > 1;

  function close(): void {
    list.hidden = true;
    input!.setAttribute("aria-expanded", "false");
    input!.removeAttribute("aria-activedescendant");
    active = -1;
  }

  function mark(index: number): void {
    active = index;
    list.querySelectorAll("li").forEach((li, i) => li.setAttribute("aria-selected", String(i === index)));
    if (index >= 0) input!.setAttribute("aria-activedescendant", `${id}-${index}`);
    else input!.removeAttribute("aria-activedescendant");
  }

  function open(hit: Suggestion): void {
    window.location.assign(resourceHref(hit.dataset, hit.iri));
  }

  function render(): void {
    list.replaceChildren(
      ...items.map((hit, i) => {
        const li = Object.assign(document.createElement("li"), { id: `${id}-${i}` });
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", "false");
        const link = Object.assign(document.createElement("a"), { href: resourceHref(hit.dataset, hit.iri), textContent: hit.label, tabIndex: -1 });
        const iri = Object.assign(document.createElement("span"), { className: "iri", textContent: several() ? `${hit.dataset} · ${hit.iri}` : hit.iri });
        li.append(link, " ", iri);
        // mousedown, not click: the input's blur would close the list first.
        li.addEventListener("mousedown", (event) => {
          event.preventDefault();
          open(hit);
        });
        return li;
      }),
    );
    list.hidden = items.length === 0;
    input!.setAttribute("aria-expanded", String(items.length > 0));
    mark(-1);
  }

  async function lookup(q: string): Promise<void> {
    inflight?.abort();
    const controller = new AbortController();
    inflight = controller;
    try {
      const answers = await Promise.all(datasetsOf(form).map((dataset) => fetchHits(dataset, q, controller.signal)));
      if (controller.signal.aborted) return;
      items = answers.flat().sort((a, b) => b.score - a.score).slice(0, SUGGESTIONS);
      render();
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  }

  input.addEventListener("input", () => {
    clearTimeout(timer);
    const q = input.value.trim();
    if (!q) {
      inflight?.abort();
      items = [];
      render();
      return;
    }
    timer = setTimeout(() => lookup(q).catch((error: unknown) => console.error("rete search:", error)), DEBOUNCE_MS);
  });
  input.addEventListener("keydown", (event) => {
    if (list.hidden || items.length === 0) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      // -1 is the input itself, between the last suggestion and the first.
      const states = items.length + 1;
      mark(((active + 1 + step + states) % states) - 1);
    } else if (event.key === "Enter" && active >= 0) {
      event.preventDefault();
      open(items[active]);
    } else if (event.key === "Escape") {
      event.preventDefault();
      close();
    }
  });
  input.addEventListener("blur", close);
  // A search of "all datasets" submitted without a pick shows the page of the best hit's dataset.
  form.addEventListener("submit", () => {
    if (select && !select.value) select.value = items[0]?.dataset ?? select.options[1]?.value ?? "";
  });
  select?.addEventListener("change", () => input.dispatchEvent(new Event("input")));
  input.addEventListener("focus", () => {
    if (items.length) render();
  });
}
