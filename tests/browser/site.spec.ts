// The site in a real browser: headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core) against `wrangler dev` serving examples/ (global-setup.ts). Walks what a
// person does: home, a dataset, a query and its rows, sorting, an IRI's resource page, paging
// its links, a syntax error marked in the editor, the resource page without JavaScript, search by
// name (suggestions as you type, keyboard and mouse, the no-script form), names (resource pages and
// result tables by label or prefixed name), completion in the editor, and a phone-width screen. Screenshots go to build/test-artifacts/browser/.
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";

const BASE = inject("baseURL");
const SHOTS = resolve(import.meta.dirname, "../../build/test-artifacts/browser");
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const UNIT = "http://qudt.org/schema/qudt/Unit"; // 1,700+ incoming rdf:type links: several pages
const KMH = "http://qudt.org/vocab/unit/KiloM-PER-HR";
const KMH_LABEL = '"Kilometre per Hour"@en';

let browser: Browser;
let context: BrowserContext;
const errors: string[] = [];

async function open(path: string, ctx: BrowserContext = context): Promise<Page> {
  const page = await ctx.newPage();
  page.on("pageerror", (error) => errors.push(`${path}: ${error.message}`));
  await page.goto(`${BASE}${path}`);
  return page;
}

/** Waits until the page's script has run the query (its status line gives the cost). */
async function ran(page: Page): Promise<string> {
  const status = page.locator("p.status");
  await expect.poll(() => status.innerText()).toMatch(/ · \d+ ms · /);
  return status.innerText();
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: resolve(SHOTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: FLAGS });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  // No page threw: script errors would otherwise pass unseen.
  expect(errors).toEqual([]);
});

describe("home", () => {
  test("lists the datasets with title, triples, size, licence and links, with or without JavaScript", async () => {
    const noScript = await browser.newContext({ javaScriptEnabled: false });
    try {
      for (const ctx of [context, noScript]) {
        const page = await open("/", ctx);
        expect(await page.locator("tr[data-dataset]").count()).toBe(3);
        const qudt = page.locator('tr[data-dataset="qudt"]');
        const cells = await qudt.locator("td").allInnerTexts();
        // title (examples/qudt/card.toml, through the pointer), triples, size, licence, date, links
        expect(cells[0]).toBe("QUDT: units of measure, quantity kinds and physical constants");
        expect(cells[1]).toMatch(/^55\s541$/);
        const license = qudt.locator('a[href="https://creativecommons.org/licenses/by/4.0/"]');
        expect(await license.count()).toBe(1);
        expect(await qudt.locator("a", { hasText: "query" }).getAttribute("href")).toBe("/qudt/sparql");
        if (ctx === context) await shot(page, "home");
      }
    } finally {
      await noScript.close();
    }
  });

  test("a dataset name opens its page: the card, bar charts and the summary graph", async () => {
    const page = await open("/");
    await page.locator("a", { hasText: "qudt" }).first().click();
    await page.waitForURL(`${BASE}/qudt`);
    expect(await page.locator("h1").innerText()).toBeTruthy();
    expect(await page.locator("table.facts").innerText()).toContain("triples");
    expect(await page.locator("#classes-h + .scroll tbody tr").count()).toBeGreaterThan(5);
    expect(await page.locator("span.bar").count()).toBeGreaterThan(5);
    // The summary picture: a Cytoscape canvas and the same nodes as a keyboard-usable list.
    await page.locator(".graph canvas").first().waitFor();
    await expect.poll(() => page.locator(".summary ul.nodes button").count()).toBeGreaterThan(5);
    // Community levels come with files that carry a SUMMARY section; without, the page says so.
    const levels = ((await (await fetch(`${BASE}/qudt/summary`, { headers: { accept: "application/json" } })).json()) as { levels: unknown[] }).levels;
    if (levels.length) expect(await page.locator(".summary select option").count()).toBe(levels.length + 1);
    else expect(await page.locator(".summary").innerText()).toContain("no community levels");
    await shot(page, "dataset");
    // A class node drills down to its instances (here through the list, as a keyboard would).
    await page.locator(".summary details summary").click();
    await page.locator(".summary ul.nodes button").first().focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/qudt\/sparql\?query=/);
    expect(await ran(page)).toMatch(/^100 solutions · /);
  });
});

describe("query page", () => {
  test("the editor runs a query: rows, reads, bytes and time, downloads, the URL keeps the query", async () => {
    const page = await open("/qudt/sparql");
    const editor = page.locator(".cm-content");
    await editor.waitFor();
    // Prefixes are pre-filled, and the query box is labelled.
    expect(await editor.innerText()).toContain("PREFIX");
    expect(await editor.getAttribute("aria-labelledby")).toBe("query-label");
    await editor.click();
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("SELECT ?unit ?label WHERE { GRAPH ?g { ?unit <http://www.w3.org/2000/01/rdf-schema#label> ?label } } LIMIT 20", { delay: 0 });
    await page.locator("form.query button[type=submit]").click();
    const status = await ran(page);
    expect(await page.locator("#results table.results tbody tr").count()).toBe(20);
    expect(status).toMatch(/^20 solutions · \d+ ms · \d+ reads · [\d,]+ bytes read$/);
    expect(new URL(page.url()).searchParams.get("query")).toContain("LIMIT 20");
    const csv = page.locator(".downloads a", { hasText: "CSV" });
    expect(await csv.getAttribute("href")).toContain("format=csv");
    const download = await page.request.get(`${BASE}${await csv.getAttribute("href")}`);
    expect(download.headers()["content-type"]).toContain("text/csv");
    expect((await download.text()).split("\r\n")[0]).toBe("unit,label");
    await shot(page, "query");
  });

  test("a shared link opens with its query run; a column sorts both ways", async () => {
    const query = "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g";
    const page = await open(`/qudt/sparql?query=${encodeURIComponent(query)}`);
    await ran(page);
    expect(await page.locator("#results table.results tbody tr").count()).toBe(7);
    const header = page.locator("table.results th", { hasText: "?n" });
    await header.locator("button").click();
    expect(await header.getAttribute("aria-sort")).toBe("ascending");
    const numbers = async () => (await page.locator("table.results tbody tr td:nth-child(2) .lit").allInnerTexts()).map(Number);
    const ascending = await numbers();
    expect(ascending).toEqual([...ascending].sort((a, b) => a - b));
    await header.locator("button").click();
    expect(await header.getAttribute("aria-sort")).toBe("descending");
    expect((await numbers())[0]).toBe(22360);
  });

  test("a long query goes by POST and still answers", async () => {
    const page = await open("/schema-org/sparql");
    await page.locator(".cm-content").waitFor();
    const posts: string[] = [];
    page.on("request", (request) => request.url().endsWith("/schema-org/sparql") && posts.push(request.method()));
    const query = `# ${"padding ".repeat(300)}\nSELECT ?class WHERE { ?class a <http://www.w3.org/2000/01/rdf-schema#Class> } LIMIT 5`;
    await page.locator(".cm-content").click();
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.insertText(query);
    await page.keyboard.press("Control+Enter"); // the editor's Run key
    expect(await ran(page)).toMatch(/^5 solutions · /);
    expect(posts).toEqual(["POST"]);
  });

  test("CONSTRUCT answers show as triples", async () => {
    const query = `CONSTRUCT { ?u a <http://x/Unit> } WHERE { GRAPH ?g { ?u <http://www.w3.org/2000/01/rdf-schema#label> ${KMH_LABEL} } }`;
    const page = await open(`/qudt/sparql?query=${encodeURIComponent(query)}`);
    expect(await ran(page)).toMatch(/^[1-9]\d* triples · /);
    expect(await page.locator("#results table.results tbody tr").count()).toBeGreaterThan(0);
    expect(await page.locator("table.results thead").innerText()).toContain("subject");
  });

  test("a syntax error is shown at its line and column, and marked in the editor", async () => {
    const page = await open(`/qudt/sparql?query=${encodeURIComponent("SELECT * WHERE {\n  ?s ?p ?o .\n  FILTR(?o)\n}")}`);
    // Without the script the page says it too (a 400 page holding the form).
    expect(await page.locator("#results [role=alert]").innerText()).toContain("At line 3, column 11");
    await ran(page);
    const alert = page.locator("#results [role=alert]");
    expect(await alert.innerText()).toContain("At line 3, column 11");
    await page.locator(".cm-lintRange-error").waitFor();
    const marked = await page.locator(".cm-lintRange-error").evaluate((node) => node.closest(".cm-line")?.textContent);
    expect(marked).toContain("FILTR");
    await shot(page, "syntax-error");
  });

  test("an IRI in the results opens its resource page", async () => {
    const query = `SELECT ?unit WHERE { GRAPH ?g { ?unit <http://www.w3.org/2000/01/rdf-schema#label> ${KMH_LABEL} } }`;
    const page = await open(`/qudt/sparql?query=${encodeURIComponent(query)}`);
    await ran(page);
    const link = page.locator("table.results a.iri").first();
    // The table names its IRIs once /qudt/labels answers: the label shows, the IRI stays on hover and in the link.
    await expect.poll(() => link.innerText()).toBe("Kilometre per Hour");
    expect(await link.getAttribute("title")).toBe(KMH);
    expect(await link.getAttribute("data-iri")).toBe(KMH);
    await link.click();
    await page.waitForURL(/\/qudt\/resource\?iri=/);
    expect(await page.locator("p.iri code").innerText()).toBe(KMH);
    expect(await page.locator("h1").innerText()).toBe("Kilometre per Hour");
    expect(await page.locator("p.types").innerText()).toContain("Type:");
    await shot(page, "resource");
  });
});

describe("names and completion", () => {
  test("the resource page shows predicates and linked resources by name, the IRI on hover", async () => {
    const page = await open(`/qudt/resource?iri=${encodeURIComponent(KMH)}`);
    const type = page.locator("p.types a.iri");
    expect(await type.first().innerText()).toBe("Unit");
    expect(await type.first().getAttribute("title")).toBe(UNIT);
    const predicates = await page.locator("table.links tbody td:first-child a.iri").allInnerTexts();
    expect(predicates).toContain("rdfs:label");
    // Velocity, in the incoming links, by its label.
    const velocity = page.locator('table.links a.iri[title="http://qudt.org/vocab/quantitykind/Velocity"]');
    expect(await velocity.first().innerText()).toBe("Velocity");
    await page.locator("table.links a.iri", { hasText: "rdfs:label" }).first().hover();
    await shot(page, "resource-named");
  });

  test("the editor completes a resource by label after <, and a prefixed predicate from the card", async () => {
    const page = await open("/qudt/sparql");
    const editor = page.locator(".cm-content");
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("SELECT ?p ?o WHERE { ", { delay: 0 });
    await page.keyboard.type("<kilometre per h", { delay: 30 });
    const option = page.locator(".cm-tooltip-autocomplete li", { hasText: "Kilometre per Hour" }).first();
    await option.waitFor();
    await shot(page, "complete-label");
    await option.click();
    await expect.poll(() => editor.innerText()).toContain(`<${KMH}>`);
    await page.keyboard.type(" rdfs:lab", { delay: 30 });
    // The card's terms answer at once: the first is selected, Enter takes it.
    const predicate = page.locator(".cm-tooltip-autocomplete li[aria-selected=true]", { hasText: "rdfs:label" });
    await predicate.waitFor();
    // CodeMirror ignores Enter for its interactionDelay (75 ms) after a list opens, as a person would not press it sooner.
    await page.waitForTimeout(150);
    await page.keyboard.press("Enter");
    await page.keyboard.type(" ?o }", { delay: 0 });
    const text = await editor.innerText();
    expect(text).toContain(`<${KMH}> rdfs:label ?o }`);
    // rdfs: was not declared: its PREFIX line came with it.
    expect(text).toMatch(/^PREFIX rdfs: <http:\/\/www\.w3\.org\/2000\/01\/rdf-schema#>/);
    await page.keyboard.press("Control+Enter");
    expect(await ran(page)).toMatch(/^[1-9]\d* solutions · /);
  });
});

describe("resource pages", () => {
  test("links page forward and back", async () => {
    const page = await open(`/qudt/resource?iri=${encodeURIComponent(UNIT)}`);
    expect(await page.locator("nav.pages span").innerText()).toBe("page 1");
    await page.locator("a[rel=next]").click();
    await page.waitForURL(/page=2/);
    expect(await page.locator("nav.pages span").innerText()).toBe("page 2");
    expect(await page.locator("#in-h").innerText()).toMatch(/Incoming links \(\d+\)/);
    await page.locator("a[rel=prev]").click();
    await page.waitForURL(/page=1/);
  });

  test("work without JavaScript", async () => {
    const noScript = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await open(`/qudt/resource?iri=${encodeURIComponent(KMH)}`, noScript);
      expect(await page.locator("h1").innerText()).toBe("Kilometre per Hour");
      expect(await page.locator("table.links").count()).toBe(2);
      await page.locator("table.links a.iri").first().click();
      await page.waitForURL(/\/qudt\/resource\?iri=/);
      expect(await page.locator("#out-h").count()).toBe(1);
      // The query page degrades to a form that GETs the HTML results.
      const query = await open("/qudt/sparql", noScript);
      await query.locator("form.query button[type=submit]").click();
      await query.waitForURL(/query=/);
      expect(await query.locator("table.results tbody tr").count()).toBe(10);
      // A syntax error comes back as the query page with the error at its position.
      const bad = await open(`/qudt/sparql?query=${encodeURIComponent("SELECT * WHERE {\n  FILTR(?o)\n}")}`, noScript);
      expect(await bad.locator("#results [role=alert]").innerText()).toContain("At line 2, column 11");
      expect(await bad.locator("textarea#query").inputValue()).toContain("FILTR(?o)");
      await shot(page, "resource-no-js");
    } finally {
      await noScript.close();
    }
  });
});

describe("search by name", () => {
  test("type on the dataset page, see suggestions, pick one with the keyboard, land on its page", async () => {
    const page = await open("/qudt");
    const input = page.locator("form.search input[name=q]");
    await input.waitFor();
    await expect.poll(() => input.getAttribute("role")).toBe("combobox");
    await input.pressSequentially("kilometre per h", { delay: 20 });
    const options = page.locator("ul.suggestions li[role=option]");
    await expect.poll(() => options.count()).toBeGreaterThan(0);
    expect(await input.getAttribute("aria-expanded")).toBe("true");
    const labels = await options.locator("a").allInnerTexts();
    const at = labels.indexOf("Kilometre per Hour");
    expect(at, labels.join(" | ")).toBeGreaterThanOrEqual(0);
    for (let i = 0; i <= at; i++) await page.keyboard.press("ArrowDown");
    expect(await input.getAttribute("aria-activedescendant")).toBe(await options.nth(at).getAttribute("id"));
    await shot(page, "search-suggestions");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${BASE}/qudt/resource?iri=${encodeURIComponent(KMH)}`);
    expect(await page.locator("h1").innerText()).toContain("Kilometre per Hour");
  });

  test("a click on a suggestion of the home page's all-datasets box opens the resource", async () => {
    const page = await open("/");
    const input = page.locator("form.search input[name=q]");
    await expect.poll(() => page.locator("form.search select[name=ds]").inputValue()).toBe("");
    await input.pressSequentially("kilometre per h", { delay: 20 });
    const option = page.locator("ul.suggestions li[role=option]", { hasText: "Kilometre per Hour" }).first();
    await option.waitFor();
    expect(await option.innerText()).toContain("qudt · ");
    await option.click();
    await page.waitForURL(`${BASE}/qudt/resource?iri=${encodeURIComponent(KMH)}`);
  });

  test("without JavaScript the form opens the search page, whose hits link to resource pages", async () => {
    const noScript = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await open("/", noScript);
      await page.locator("form.search select[name=ds]").selectOption("qudt");
      await page.locator("form.search input[name=q]").fill("kilometre per hour");
      await page.locator("form.search button[type=submit]").click();
      await page.waitForURL(/\/qudt\/search\?q=kilometre/);
      const hit = page.locator("ol.hits a", { hasText: "Kilometre per Hour" }).first();
      expect(await hit.getAttribute("href")).toBe(`/qudt/resource?iri=${encodeURIComponent(KMH)}`);
      expect(await page.locator("p.cost").innerText()).toMatch(/results from \d+ rounds of reads/);
      await shot(page, "search-no-js");
      await hit.click();
      await page.waitForURL(`${BASE}/qudt/resource?iri=${encodeURIComponent(KMH)}`);
    } finally {
      await noScript.close();
    }
  });
});

describe("graph questions", () => {
  const DBO = "http://dbpedia.org/ontology/";

  test("the resource page finds a path to a second IRI; the dataset page shows the tier-0 check", async () => {
    const page = await open(`/dbpedia-ontology/resource?iri=${encodeURIComponent(`${DBO}Actor`)}`);
    await page.locator("#path-to").fill(`${DBO}City`);
    await page.locator("form.path input[name=undirected]").check();
    await page.locator("form.path button[type=submit]").click();
    await page.waitForURL(/\/dbpedia-ontology\/path\?from=/);
    expect(await page.locator("h1").innerText()).toBe("Shortest path");
    expect(await page.locator("p.found").innerText()).toMatch(/^A path of length \d+; the search visited \d+ nodes\.$/);
    const steps = await page.locator("table.links tbody tr").count();
    expect(await page.locator("p.found").innerText()).toContain(`length ${steps};`);
    await shot(page, "path");
    const dataset = await open("/dbpedia-ontology");
    expect(await dataset.locator("#check-h").innerText()).toBe("Coherence");
    expect(await dataset.locator("#check p.found").innerText()).toMatch(/schema axioms/);
    await dataset.locator('#check a[href$="tier=1"]').click();
    await dataset.waitForURL(/\/check\?tier=1/);
    expect(await dataset.locator("p.found").innerText()).toMatch(/^Tier 1: \d+ findings\.$/);
  });
});

describe("on a phone", () => {
  test("pages fit 375 px wide", async () => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
    try {
      for (const [path, name] of [["/", "phone-home"], ["/qudt", "phone-dataset"], [`/qudt/resource?iri=${encodeURIComponent(KMH)}`, "phone-resource"], ["/qudt/sparql", "phone-query"], ["/qudt/search?q=metre", "phone-search"]]) {
        const page = await open(path, phone);
        await page.waitForLoadState("networkidle");
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(width, path).toBeLessThanOrEqual(375);
        await shot(page, name);
      }
    } finally {
      await phone.close();
    }
  });
});
