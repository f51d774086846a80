// Runs the suite's queries through Apache Jena ARQ (QueryExecutionHTTP) against the endpoint and
// prints each answer as JSON in the SPARQL-results term model (see tests/clients/clients.spec.ts).
// Jena sends its own Accept lists and switches from GET to POST once the URL grows past 2 KB.
//
// Usage: java -cp 'JENA_LIB/*' JenaClient.java CASES.json
import java.util.Iterator;
import org.apache.jena.atlas.json.JSON;
import org.apache.jena.atlas.json.JsonArray;
import org.apache.jena.atlas.json.JsonObject;
import org.apache.jena.atlas.json.JsonValue;
import org.apache.jena.graph.Node;
import org.apache.jena.graph.Triple;
import org.apache.jena.query.QuerySolution;
import org.apache.jena.query.ResultSet;
import org.apache.jena.rdf.model.Model;
import org.apache.jena.sparql.exec.http.QueryExecutionHTTP;

public class JenaClient {
  static JsonObject term(Node node) {
    JsonObject out = new JsonObject();
    if (node.isURI()) {
      out.put("type", "uri");
      out.put("value", node.getURI());
    } else if (node.isBlank()) {
      out.put("type", "bnode");
      out.put("value", node.getBlankNodeLabel());
    } else {
      out.put("type", "literal");
      out.put("value", node.getLiteralLexicalForm());
      if (!node.getLiteralLanguage().isEmpty()) out.put("xml:lang", node.getLiteralLanguage());
      else out.put("datatype", node.getLiteralDatatypeURI());
    }
    return out;
  }

  static JsonObject triples(Model model) {
    JsonArray triples = new JsonArray();
    for (Iterator<Triple> it = model.getGraph().find(); it.hasNext(); ) {
      Triple t = it.next();
      JsonArray triple = new JsonArray();
      triple.add(term(t.getSubject()));
      triple.add(term(t.getPredicate()));
      triple.add(term(t.getObject()));
      triples.add(triple);
    }
    JsonObject out = new JsonObject();
    out.put("triples", triples);
    return out;
  }

  static JsonObject answer(String endpoint, String form, String query) {
    try (QueryExecutionHTTP exec = QueryExecutionHTTP.service(endpoint).query(query).build()) {
      JsonObject out = new JsonObject();
      switch (form) {
        case "ask" -> out.put("boolean", exec.execAsk());
        case "select" -> {
          ResultSet results = exec.execSelect();
          JsonArray vars = new JsonArray();
          results.getResultVars().forEach(vars::add);
          JsonArray rows = new JsonArray();
          while (results.hasNext()) {
            QuerySolution row = results.next();
            JsonObject binding = new JsonObject();
            row.varNames().forEachRemaining(name -> binding.put(name, term(row.get(name).asNode())));
            rows.add(binding);
          }
          out.put("vars", vars);
          out.put("rows", rows);
        }
        case "construct" -> out = triples(exec.execConstruct());
        case "describe" -> out = triples(exec.execDescribe());
        default -> throw new IllegalArgumentException("unknown form " + form);
      }
      return out;
    }
  }

  public static void main(String[] args) {
    JsonObject spec = JSON.read(args[0]);
    String endpoint = spec.get("endpoint").getAsString().value();
    JsonObject answers = new JsonObject();
    for (JsonValue value : spec.get("cases").getAsArray()) {
      JsonObject c = value.getAsObject();
      String id = c.get("id").getAsString().value();
      try {
        answers.put(id, answer(endpoint, c.get("form").getAsString().value(), c.get("query").getAsString().value()));
      } catch (Exception error) {
        JsonObject failed = new JsonObject();
        failed.put("error", error.toString());
        answers.put(id, failed);
      }
    }
    System.out.println(JSON.toStringFlat(answers));
  }
}
