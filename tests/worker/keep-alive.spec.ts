// A request that runs into its time limit must leave its connection usable (issue 12): a cross
// product on qudt once ran 20 s into MAX_TIME_MS (422), and the next request on the same
// keep-alive connection was reset (seen against `wrangler dev` in session 6; not seen since, with
// wrangler.toml's vars the same query now ends at rows-produced in ~1 s). Here over a real socket
// (workerd serving HTTP on 127.0.0.1) and one keep-alive connection: queries that can only end at
// MAX_TIME_MS (every other budget lifted), each followed by a plain query on that connection.
import { Agent, request } from "node:http";
import { resolve } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { FILES, startWorker, type Worker } from "./mf.ts";

let w: Worker;
let origin = "";

beforeAll(async () => {
  // wrangler.toml's vars, a short time limit and no other evaluation budget: the deadline ends it.
  const lifted = "1000000000000";
  w = await startWorker({ MAX_TIME_MS: "1500", MAX_STEPS: lifted, MAX_ROWS_PRODUCED: lifted, MAX_QUADS_SCANNED: lifted }, { port: 0 });
  origin = String(await w.mf.ready).replace(/\/$/, "");
  await w.publish("qudt", resolve(FILES, "qudt.rete"));
});
afterAll(() => w?.dispose());

/** GET on the agent's connection: status, headers, body and the socket's local port. */
function get(agent: Agent, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string; port: number }> {
  return new Promise((done, fail) => {
    const req = request(`${origin}${path}`, { agent, headers: { accept: "application/sparql-results+json" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString(), port: req.socket?.localPort ?? 0 }));
      res.on("error", fail);
    });
    req.on("error", fail);
    req.end();
  });
}

const q = (query: string) => `/qudt/sparql?query=${encodeURIComponent(query)}`;

test("a time limit hit, then the next request on the same connection answers", async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    // A cross product whose rows stream out (the capture overflows), and one counted in place.
    for (const query of ["SELECT * { ?a ?b ?c . ?d ?e ?f }", "SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f }"]) {
      const hit = await get(agent, q(query));
      expect(hit.status, hit.body).toBe(422);
      expect(hit.headers["x-rete-limit"]).toBe("deadline");
      expect(JSON.parse(hit.body)).toMatchObject({ error: "budget", limit: "deadline", status: 422 });
      const next = await get(agent, q("SELECT ?s { ?s a ?t } ORDER BY ?s LIMIT 1"));
      expect(next.status, next.body).toBe(200);
      expect(JSON.parse(next.body).results.bindings).toHaveLength(1);
      expect(next.port, "the same connection").toBe(hit.port);
    }
  } finally {
    agent.destroy();
  }
}, 120_000);
