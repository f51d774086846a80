"""Runs the suite's queries through a Python SPARQL client against the endpoint and prints each
answer as JSON in the SPARQL-results term model (see tests/clients/clients.spec.ts).

Usage: python3 python_clients.py sparqlwrapper|rdflib CASES.json
CASES.json: {"endpoint": URL, "cases": [{"id", "form", "query"}]}. Output: {id: {"vars", "rows"} |
{"boolean"} | {"triples"} | {"error"}}. SPARQLWrapper asks for SPARQL JSON (SELECT, ASK) and
RDF/XML (CONSTRUCT, DESCRIBE, its default); rdflib's SPARQLStore asks for SPARQL XML and sends
its own Accept list. Both POST the long query (neither switches by itself). rdflib's literal
normalization is turned off so lexical forms arrive as sent ("07"^^xsd:integer stays 07).
"""

import json
import sys

import rdflib
from rdflib import BNode, Graph, Literal, URIRef

rdflib.NORMALIZE_LITERALS = False


def term(t):
    if isinstance(t, URIRef):
        return {"type": "uri", "value": str(t)}
    if isinstance(t, BNode):
        return {"type": "bnode", "value": str(t)}
    if isinstance(t, Literal):
        out = {"type": "literal", "value": str(t)}
        if t.language:
            out["xml:lang"] = t.language
        elif t.datatype:
            out["datatype"] = str(t.datatype)
        return out
    raise TypeError(f"unexpected term {t!r}")


def triples(graph):
    return {"triples": [[term(s), term(p), term(o)] for s, p, o in graph]}


def with_sparqlwrapper(endpoint, case):
    from SPARQLWrapper import JSON, POST, XML, SPARQLWrapper

    client = SPARQLWrapper(endpoint)
    client.setQuery(case["query"])
    if len(case["query"]) > 2000:
        client.setMethod(POST)
    if case["form"] in ("select", "ask"):
        client.setReturnFormat(JSON)
        answer = client.query().convert()
        if case["form"] == "ask":
            return {"boolean": answer["boolean"]}
        return {"vars": answer["head"]["vars"], "rows": answer["results"]["bindings"]}
    client.setReturnFormat(XML)
    return triples(client.query().convert())


def with_rdflib(endpoint, case):
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    method = "POST" if len(case["query"]) > 2000 else "GET"
    graph = Graph(store=SPARQLStore(endpoint, method=method))
    result = graph.query(case["query"])
    if result.type == "ASK":
        return {"boolean": bool(result.askAnswer)}
    if result.type == "SELECT":
        names = [str(v) for v in result.vars]
        rows = [{name: term(value) for name, value in zip(names, row) if value is not None} for row in result]
        return {"vars": names, "rows": rows}
    return triples(result.graph)


def main():
    client = {"sparqlwrapper": with_sparqlwrapper, "rdflib": with_rdflib}[sys.argv[1]]
    with open(sys.argv[2], encoding="utf-8") as f:
        spec = json.load(f)
    answers = {}
    for case in spec["cases"]:
        try:
            answers[case["id"]] = client(spec["endpoint"], case)
        except Exception as error:  # reported per case; the suite fails that test with it
            answers[case["id"]] = {"error": f"{type(error).__name__}: {error}"}
    json.dump(answers, sys.stdout)


main()
