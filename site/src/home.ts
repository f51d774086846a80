// Home page: fills each dataset row's title and licence from its card, which the server-rendered
// page leaves empty (reading every card would open every file on the server).

import type { Card } from "./types";

/** Cards read at most, so a bucket of many datasets does not open them all. */
const MAX_CARDS = 50;

export function enhance(): void {
  const rows = Array.from(document.querySelectorAll<HTMLTableRowElement>("tr[data-dataset]")).slice(0, MAX_CARDS);
  for (const row of rows) {
    const name = row.dataset.dataset ?? "";
    fetch(`/${encodeURIComponent(name)}/card`, { headers: { accept: "application/json" } })
      .then((r) => (r.ok ? (r.json() as Promise<Card>) : null))
      .then((card) => {
        if (!card) return;
        const title = row.querySelector<HTMLElement>('[data-card="title"]');
        if (title && card.title) title.textContent = card.title;
        const license = row.querySelector<HTMLElement>('[data-card="license"]');
        if (license && card.license) {
          if (/^https?:\/\//.test(card.license)) {
            const a = document.createElement("a");
            a.href = card.license;
            a.textContent = card.license.replace(/^https?:\/\//, "");
            license.replaceChildren(a);
          } else license.textContent = card.license;
        }
      })
      .catch((error: unknown) => console.warn(`card of ${name}:`, error));
  }
}
