// The site's entry point. Every page is server-rendered and whole without this script; it only
// enhances the page named by <body data-page>, loading that page's module (and its libraries:
// the editor for the query page, the graph library for the dataset page) on demand.

const page = document.body.dataset.page;
const dataset = document.body.dataset.dataset ?? "";

async function enhance(): Promise<void> {
  if (page === "query") (await import("./query")).enhance(dataset);
  else if (page === "dataset") (await import("./summary")).enhance(dataset);
}

enhance().catch((error: unknown) => console.error("rete site:", error));
// Any page with a search form (home, dataset, search) gets suggestions as you type.
if (document.querySelector("form.search")) import("./search").then((search) => search.enhance()).catch((error: unknown) => console.error("rete search:", error));
