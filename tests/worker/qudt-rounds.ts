// The requests on qudt whose cold rounds the Worker specs bound (rounds.spec.ts on the flat file,
// directory.spec.ts on a file with a directory), each with the most rounds it may take cold on
// the flat file, the pointer included (issue 12 §3).
const UNIT = "http://qudt.org/vocab/unit/";

export const sparql = (query: string) =>
  `/qudt/sparql?query=${encodeURIComponent(`PREFIX qudt: <http://qudt.org/schema/qudt/> PREFIX unit: <${UNIT}> ${query}`)}`;

/** Request → the most rounds it may take cold on the flat file, the pointer included. */
export const ROUND_CASES: [string, string, number][] = [
  ["the card", "/qudt/card", 1],
  ["one pattern, bound subject", sparql("SELECT ?p ?o WHERE { unit:KiloM-PER-HR ?p ?o }"), 3],
  ["ASK of one triple", sparql("ASK { unit:KiloM-PER-HR qudt:symbol ?s }"), 3],
  ["DESCRIBE of one IRI", sparql("DESCRIBE unit:KiloM-PER-HR"), 3],
  ["dereference (303)", "/qudt/id/vocab/unit/KiloM-PER-HR", 3],
  ["BGP of 2 patterns", sparql('SELECT ?u WHERE { ?u qudt:symbol "km/h" ; qudt:hasQuantityKind ?k }'), 4],
];
