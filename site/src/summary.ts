// The dataset page's summary picture, drawn with Cytoscape.js from /{ds}/summary: the schema
// graph (classes sized by instances, linked by the predicates between their instances) and, when
// the file carries community levels, one graph per level, level 0 the coarsest. Clicking a node
// (or its entry in the list under the graph, for keyboards and screen readers) drills down: a
// community opens its members at the next level, or at the finest lists its member resources
// page by page; a class lists its instances. Without a summary, the card's classes are drawn.

import cytoscape from "cytoscape";
import type { Card, LevelNode, Members, Summary, SummaryLevel } from "./types";

/** Nodes drawn at most; the list under the graph says when some were left out. */
const MAX_NODES = 150;

interface GraphNode { id: string; label: string; size: number; title: string; open: () => void }
interface GraphEdge { source: string; target: string; label?: string; weight: number; dashed?: boolean }

function localName(iri: string): string {
  return iri.replace(/^.*[/#:]/, "") || iri;
}

async function json<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

export async function enhance(dataset: string): Promise<void> {
  const box = document.querySelector<HTMLElement>(".summary");
  if (!box) return;
  const base = `/${encodeURIComponent(dataset)}`;
  const summary = await json<Summary>(`${base}/summary`);
  const card = summary.schema ? undefined : await json<Card>(`${base}/card`);

  const picker = document.createElement("select");
  picker.append(new Option("Schema: classes and their links", "schema"));
  for (const level of summary.levels) picker.append(new Option(`Communities, level ${level.level} (${level.nodes} nodes)`, String(level.level)));
  const label = document.createElement("label");
  label.append("Show ", picker);
  const note = document.createElement("p");
  note.className = "note";
  note.setAttribute("role", "status");
  const canvas = document.createElement("div");
  canvas.className = "graph";
  canvas.setAttribute("role", "img");
  const list = document.createElement("ul");
  list.className = "nodes";
  const members = document.createElement("section");
  members.className = "members";
  members.setAttribute("aria-live", "polite");
  const details = document.createElement("details");
  const summaryLine = document.createElement("summary");
  summaryLine.textContent = "The nodes as a list";
  details.append(summaryLine, list);
  box.replaceChildren(label, note, canvas, details, members);
  if (!summary.levels.length) picker.after(" (this file has no community levels)");

  // The query of worker/src/pages/query.rs instances_query: default graph and named graphs.
  const instances = (iri: string) => `SELECT DISTINCT ?instance WHERE { { ?instance a <${iri}> } UNION { GRAPH ?g { ?instance a <${iri}> } } } LIMIT 100`;
  const classQuery = (iri: string) => `${base}/sparql?query=${encodeURIComponent(instances(iri))}`;

  /** Lists a community's member resources, a page at a time (`url` from the level's node). */
  async function showMembers(title: string, url: string, append = false): Promise<void> {
    const page = await json<Members>(url);
    let ul = members.querySelector("ul");
    if (!append || !ul) {
      const heading = document.createElement("h3");
      heading.textContent = `${title}: ${page.size} members`;
      ul = document.createElement("ul");
      members.replaceChildren(heading, ul);
    }
    for (const member of page.members) {
      const li = document.createElement("li");
      if (/^[a-z][a-z0-9+.-]*:/i.test(member) && !member.startsWith("_:")) {
        const a = document.createElement("a");
        a.className = "iri";
        a.href = `${base}/resource?iri=${encodeURIComponent(member)}`;
        a.textContent = member;
        li.append(a);
      } else li.textContent = member;
      ul.append(li);
    }
    members.querySelector("button.more")?.remove();
    if (page.next) {
      const next = page.next;
      const more = document.createElement("button");
      more.type = "button";
      more.className = "more";
      more.textContent = "More members";
      more.addEventListener("click", () => showMembers(title, next, true).catch(failed));
      members.append(more);
    }
  }

  function draw(nodes: GraphNode[], edges: GraphEdge[], caption: string): void {
    members.replaceChildren();
    const shown = nodes.slice(0, MAX_NODES);
    const ids = new Set(shown.map((n) => n.id));
    note.textContent = caption + (nodes.length > shown.length ? ` The ${shown.length} largest of ${nodes.length} nodes are drawn.` : "");
    canvas.setAttribute("aria-label", `${caption} A graph of ${shown.length} nodes; the list below holds the same nodes.`);
    const max = Math.max(1, ...shown.map((n) => n.size));
    const cy = cytoscape({
      container: canvas,
      elements: [
        ...shown.map((n) => ({ data: { id: n.id, label: n.label, diameter: 14 + 46 * Math.sqrt(n.size / max) } })),
        ...edges
          .filter((e) => ids.has(e.source) && ids.has(e.target))
          .map((e, i) => ({ data: { id: `e${i}`, source: e.source, target: e.target, label: e.label ?? "", width: 1 + Math.log10(1 + e.weight) }, classes: e.dashed ? "dashed" : "" })),
      ],
      style: [
        { selector: "node", style: { label: "data(label)", width: "data(diameter)", height: "data(diameter)", "background-color": "#3a6ea5", "font-size": 10, "text-valign": "bottom", "text-margin-y": 3 } },
        { selector: "edge", style: { width: "data(width)", "line-color": "#9ab", "target-arrow-color": "#9ab", "target-arrow-shape": "triangle", "curve-style": "bezier", label: "data(label)", "font-size": 8, color: "#567" } },
        { selector: "edge.dashed", style: { "line-style": "dashed", "target-arrow-shape": "triangle-backcurve" } },
      ],
      layout: { name: "cose", animate: false },
      wheelSensitivity: 0.3,
    });
    const byId = new Map(shown.map((n) => [n.id, n]));
    cy.on("tap", "node", (event) => byId.get(event.target.id())?.open());
    list.replaceChildren(
      ...shown.map((n) => {
        const li = document.createElement("li");
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = n.title;
        button.addEventListener("click", n.open);
        li.append(button);
        return li;
      }),
    );
  }

  function schema(): void {
    const classes = summary.schema?.classes ?? card?.classes ?? [];
    const nodes: GraphNode[] = classes.map((c) => ({
      id: c.iri,
      label: c.label ?? localName(c.iri),
      size: c.instances,
      title: `${c.label ?? c.iri}: ${c.instances} instances`,
      open: () => location.assign(classQuery(c.iri)),
    }));
    const edges: GraphEdge[] = [
      ...(summary.schema?.links ?? []).map((l) => ({ source: l.from, target: l.to, label: localName(l.predicate), weight: l.count })),
      ...(summary.schema?.subclass_of ?? []).map((s) => ({ source: s.sub, target: s.super, label: "subClassOf", weight: 1, dashed: true })),
    ];
    const about = summary.schema && !summary.note ? "Classes, sized by instances; arrows are predicates between their instances." : `Classes from the card, sized by instances${summary.note ? ` (${summary.note})` : " (this file has no summary section, so no links)"}.`;
    draw(nodes, edges, `${about} Click a class to list its instances.`);
  }

  async function level(number: number, parent?: LevelNode): Promise<void> {
    const data = await json<SummaryLevel>(`${base}/summary?level=${number}`);
    // Ids are numbers in the JSON; Cytoscape wants strings.
    const nodes = parent ? data.nodes.filter((n) => String(n.parent) === String(parent.id)) : data.nodes;
    const ids = new Set(nodes.map((n) => String(n.id)));
    const name = (n: LevelNode) => n.label || n.iri || `community ${n.id}`;
    const graphNodes: GraphNode[] = [...nodes]
      .sort((a, b) => b.size - a.size)
      .map((n) => ({
        id: String(n.id),
        label: name(n),
        size: n.size,
        title: `${name(n)}: ${n.size} members`,
        open: () => {
          if (number + 1 < data.levels) {
            picker.value = String(number + 1);
            level(number + 1, n).catch(failed);
          } else if (n.members) showMembers(name(n), n.members).catch(failed);
          else if (n.iri) location.assign(`${base}/resource?iri=${encodeURIComponent(n.iri)}`);
        },
      }));
    const edges = data.edges
      .filter((e) => ids.has(String(e.source)) && ids.has(String(e.target)))
      .map((e) => ({ source: String(e.source), target: String(e.target), weight: e.weight }));
    const scope = parent ? `Communities inside ${name(parent)} at level ${number}.` : `Communities at level ${number}.`;
    draw(graphNodes, edges, `${scope} Click a community to open ${number + 1 < data.levels ? "its members at the next level" : "its members"}.`);
  }

  function failed(error: unknown): void {
    note.textContent = `Cannot load this part of the summary: ${error instanceof Error ? error.message : String(error)}`;
  }

  picker.addEventListener("change", () => {
    if (picker.value === "schema") schema();
    else level(Number(picker.value)).catch(failed);
  });
  schema();
}
