//! Every flag of `rete`, documented once: clap builds `--help` from these
//! doc comments (first line: short help; the rest: `--help` only).

use clap::{Args, Parser, Subcommand};
use rete_core::results::ResultFormat;
use rete_publisher::cmd::UsageError;
use rete_publisher::cmd::build::BuildSettings;
use rete_publisher::ingest::build::BlockLayout;
use rete_publisher::cmd::publish::PublishOptions;
use rete_publisher::ingest::metadata::{DefaultGraph, Metadata};
use rete_publisher::r2::{Choice, TargetOptions, Tuning, Verify};
use std::path::PathBuf;

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  invalid data: an RDF syntax error, a corrupt .rete file, a failed verify,
     a malformed or unsupported SPARQL query, an invalid IRI given to reach or path
  2  usage error: unknown flag, missing argument, invalid flag value, a query
     --format that cannot hold the answer
  3  any other failure: a file that cannot be read or written, …
  4  storage error (publish, ls, rollback, gc): R2 rejected the credentials, could not be
     reached or kept failing, or wrangler failed; the served version was not changed
  5  the query exceeded a limit (query --timeout-s; the block cache or the rounds
     of reads of query, cost, reach, path and check)";

/// rete: publish an RDF dataset as one .rete file and query it where it sits.
#[derive(Debug, Parser)]
#[command(name = "rete", version, after_help = EXIT_CODES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a .rete file from N-Triples, N-Quads, Turtle, TriG or RDF/XML.
    ///
    /// Inputs are parsed as a stream (never held whole); the dictionary and the
    /// six quad orders are sorted on disk when they outgrow --mem. The output is
    /// written beside OUT and renamed into place only when complete, so a failed
    /// build leaves no partial file. RDF 1.2 input is read too: triple terms
    /// <<( s p o )>>, reifiers << s p o >>, annotations {| |}, VERSION and
    /// directional language tags ("x"@en--ltr); a file holding triple terms is
    /// written as format 2.0, which rete before 2.0 refuses by its version.
    ///
    /// Example: rete build people.nt.gz places.ttl -o dataset.rete
    #[command(after_help = EXIT_CODES)]
    Build {
        /// Input files (`.gz` is decompressed; `-` reads stdin and needs --format).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The .rete file to write.
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        build: BuildArgs,
        /// No progress bar or summary line.
        #[arg(short, long)]
        quiet: bool,
        #[command(flatten)]
        card: CardArgs,
    },
    /// Show a file's header, sections, counts and card.
    #[command(after_help = EXIT_CODES)]
    Inspect {
        /// The .rete file.
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check every checksum, every block and the content hash.
    ///
    /// Exits with 1 and lists the problems when anything does not match.
    #[command(after_help = EXIT_CODES)]
    Verify {
        /// The .rete file.
        file: PathBuf,
    },
    /// Run a SPARQL 1.1 or 1.2 query over a .rete file and write the answer to stdout.
    ///
    /// Every query form works: SELECT and ASK answer in SPARQL JSON (default),
    /// XML, CSV or TSV; CONSTRUCT and DESCRIBE in N-Triples (default), Turtle,
    /// N-Quads, TriG, JSON-LD or RDF/XML (JSON-LD refuses an answer holding an
    /// RDF 1.2 triple term, which it cannot write). Solutions are written as they are
    /// found. Literals keep their lexical form ("01"^^xsd:integer stays 01).
    /// A malformed query is reported with its line and column and a caret
    /// under the error.
    ///
    /// Example: rete query dataset.rete 'SELECT ?s WHERE { ?s a <http://schema.org/Person> } LIMIT 10'
    #[command(after_help = EXIT_CODES)]
    Query {
        /// The .rete file, or its http(s) URL on a server that honours Range.
        ///
        /// A URL is read in rounds of parallel ranged GETs pinned to the file's
        /// ETag; see `rete cost` for what a query reads.
        file: PathBuf,
        /// The query text (or use --file).
        #[arg(required_unless_present = "query_file", conflicts_with = "query_file")]
        query: Option<String>,
        /// Read the query from a file instead (`-` reads stdin).
        ///
        /// Example: rete query dataset.rete --file report.rq -f csv
        #[arg(long = "file", value_name = "QUERY_FILE")]
        query_file: Option<PathBuf>,
        /// Output format: json, xml, csv, tsv (SELECT, ASK); nt, ttl, nq, trig, jsonld, rdf (CONSTRUCT, DESCRIBE).
        ///
        /// By default JSON for SELECT and ASK, N-Triples for CONSTRUCT and DESCRIBE.
        /// A format that cannot hold the answer (ttl for a SELECT) is a usage error.
        #[arg(short, long, value_parser = parse_result_format)]
        format: Option<ResultFormat>,
        /// Base IRI against which relative IRIs in the query resolve.
        #[arg(long, value_name = "IRI", value_parser = parse_iri)]
        base: Option<String>,
        /// A graph to merge into the default graph (repeatable), like the protocol's default-graph-uri.
        ///
        /// With --named-graph, replaces the query's own FROM and FROM NAMED
        /// clauses. Example: --default-graph http://example.org/g1
        #[arg(long = "default-graph", value_name = "IRI", value_parser = parse_iri)]
        default_graphs: Vec<String>,
        /// A graph GRAPH can see (repeatable), like the protocol's named-graph-uri.
        ///
        /// When given, the other named graphs are invisible to the query.
        #[arg(long = "named-graph", value_name = "IRI", value_parser = parse_iri)]
        named_graphs: Vec<String>,
        /// Give up after this many seconds (exit code 5).
        #[arg(long, value_name = "SECONDS")]
        timeout_s: Option<f64>,
    },
    /// Measure what a query reads from a .rete file where it sits: rounds, requests, bytes.
    ///
    /// The file (a path or an http(s) URL) is opened and the query evaluated as a
    /// remote host would: in rounds, each one batch of parallel range requests for
    /// every block the previous run found missing. The open (the first 16 KiB)
    /// counts as a round. Prints the rounds, the requests, the bytes fetched and
    /// their share of the file; --json prints {"rounds", "requests", "bytes", "file_bytes"}.
    ///
    /// Example: rete cost https://example.org/data.rete 'ASK { <http://example.org/a> ?p ?o }'
    #[command(after_help = EXIT_CODES)]
    Cost {
        /// The .rete file or its http(s) URL.
        file: PathBuf,
        /// The query text (or use --file).
        #[arg(required_unless_present = "query_file", conflicts_with = "query_file")]
        query: Option<String>,
        /// Read the query from a file instead (`-` reads stdin).
        #[arg(long = "file", value_name = "QUERY_FILE")]
        query_file: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// First print what each round after the open read: its requests and its bytes by section
        /// (DIRECTORY bytes are directory nodes).
        #[arg(long)]
        rounds: bool,
    },
    /// Count (or list) the nodes each seed reaches along some predicates, many seeds at once.
    ///
    /// One breadth-first search serves every seed: each level reads the blocks of
    /// the whole frontier in one round, so the file is read where it sits (a path or
    /// an http(s) URL) in about as many rounds as the deepest seed needs levels.
    /// A seed never counts itself. Prints "REACHED<TAB>SEED" lines; --json prints
    /// {"seeds":[{"from":IRI,"reached":N}],"rounds":R,"requests":Q,"bytes":B}
    /// (rounds and bytes include the open).
    ///
    /// Example: rete reach dblp.rete --from-file authors.txt --via http://ex.org/coauthor --undirected --json
    #[command(after_help = EXIT_CODES)]
    Reach {
        /// The .rete file or its http(s) URL.
        file: PathBuf,
        /// A seed IRI (repeatable; `_:label` for a blank node).
        #[arg(long = "from", value_name = "IRI")]
        from: Vec<String>,
        /// A file of seed IRIs, one a line (blank lines and `#` lines skipped).
        #[arg(long, value_name = "FILE")]
        from_file: Option<PathBuf>,
        /// A predicate to follow (repeatable; at least one).
        #[arg(long, value_name = "PRED", required = true)]
        via: Vec<String>,
        /// Follow triples from object to subject instead.
        #[arg(long, conflicts_with = "undirected")]
        inverse: bool,
        /// Follow triples both ways.
        #[arg(long)]
        undirected: bool,
        /// At most this many hops from each seed.
        #[arg(long, value_name = "N")]
        max_depth: Option<u32>,
        /// Split the seeds (in groups of 64) across all cores; the result is the same.
        #[arg(long)]
        parallel: bool,
        /// Also list the nodes each seed reaches.
        #[arg(long)]
        members: bool,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Find a shortest path between two nodes (bidirectional breadth-first search).
    ///
    /// Both ends search towards each other, a whole level at a time, the smaller
    /// frontier first, reading only the blocks of the frontier's ids. Each step is
    /// printed as the triple is stored (with --undirected a step may run object to
    /// subject). No path is not an error (exit 0); an invalid IRI is (exit 1).
    /// --json prints {"length":L,"path":[[s,p,o],...],"visited":V,"rounds":R,"bytes":B},
    /// or {"length":null,...} when there is none within --max-depth.
    ///
    /// Example: rete path data.rete http://ex.org/a http://ex.org/b --via http://ex.org/knows --json
    #[command(after_help = EXIT_CODES)]
    Path {
        /// The .rete file or its http(s) URL.
        file: PathBuf,
        /// Where the path starts: an IRI or `_:label`.
        from: String,
        /// Where it ends.
        to: String,
        /// A predicate to follow (repeatable; none: every predicate).
        #[arg(long, value_name = "PRED")]
        via: Vec<String>,
        /// Follow triples both ways.
        #[arg(long)]
        undirected: bool,
        /// Only paths of at most this many steps.
        #[arg(long, value_name = "N")]
        max_depth: Option<u32>,
        /// Search from FROM only (a plain BFS), to compare visited nodes and bytes.
        #[arg(long)]
        unidirectional: bool,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Check the data's coherence against its schema: findings with the triples that prove them.
    ///
    /// Tier 0 reads only the schema axioms (a small section, usually inside the first
    /// read): classes under two disjoint classes (unsatisfiable-class) and subclass
    /// cycles (subclass-cycle). Tier 1 adds the instances the schema points at,
    /// reading only rdf:type of those classes and the schema's properties:
    /// instances of disjoint classes, directly or through rdfs:domain/range
    /// (disjoint-instance), functional properties with two values
    /// (functional-property). Tier 2 finds the same over every quad. Findings are
    /// not an error (exit 0). --json prints
    /// {"tier":T,"findings":[{"kind":K,"subject":IRI,"evidence":[[s,p,o],...]}],"rounds":R,"bytes":B}.
    ///
    /// Example: rete check data.rete --tier 1 --json
    #[command(after_help = EXIT_CODES)]
    Check {
        /// The .rete file or its http(s) URL.
        file: PathBuf,
        /// 0 (schema), 1 (the instances the schema points at) or 2 (every quad).
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=2))]
        tier: u8,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Find resources by name in a .rete file's label search index.
    ///
    /// Every word of the query matches the start of a word of a label
    /// (case, accents and width ignored: "linc" finds "Lincoln", "melis" finds
    /// "Mélisande"); a hit's label has them all. Hits are ranked by how many
    /// links point to the resource, then by label length. The file (a path or
    /// an http(s) URL) is read as a remote host would, in rounds; --json prints
    /// {"query", "results": [{"iri", "label", "lang", "score"}], "cut", "rounds",
    /// "requests", "bytes"}; "cut" is true when hits may be missing (a word too
    /// common to be listed whole). --types adds each hit's rdf:type IRIs
    /// ("types", at most 4, read in one more round within a bound; "types_cut"
    /// when some hits' types were left unread).
    ///
    /// Example: rete search https://example.org/data.rete 'abr linc' --lang en --json
    #[command(after_help = EXIT_CODES)]
    Search {
        /// The .rete file or its http(s) URL.
        file: PathBuf,
        /// The words to look for.
        query: String,
        /// Only labels in this language (or a subtag of it: en matches en-GB); "" for labels without a tag.
        #[arg(long, value_name = "TAG")]
        lang: Option<String>,
        /// Most results (one per resource).
        #[arg(long, default_value_t = 20, value_name = "N")]
        limit: usize,
        /// Also list each hit's types (rdf:type IRIs, at most 4; one more round).
        #[arg(long)]
        types: bool,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write every quad as N-Quads to stdout.
    #[command(after_help = EXIT_CODES)]
    Dump {
        /// The .rete file.
        file: PathBuf,
    },
    /// Build a dataset (or take a .rete file) and publish it to R2, atomically.
    ///
    /// The file is uploaded as datasets/NAME/<content-hash>.rete (multipart, parts in
    /// parallel, retried), checked against the local file, and only then does
    /// datasets/NAME/current.json switch to it; a failure at any point leaves the previous
    /// version served, and re-running the same command finishes the job (uploads restart,
    /// an object already complete is reused).
    ///
    /// R2 credentials come from R2_ACCOUNT_ID, R2_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY and
    /// R2_BUCKET (R2_ENDPOINT for another S3-compatible server), else from the [r2] table of
    /// --config or ~/.config/rete/config.toml. Without any, or with --local, the dataset
    /// goes to wrangler's local R2 so `wrangler dev` serves it.
    ///
    /// Example: rete publish people.nt.gz --name people --url https://rete.example.workers.dev
    #[command(after_help = EXIT_CODES)]
    Publish(PublishArgs),
    /// List published datasets and their versions; `*` marks the one served.
    #[command(after_help = EXIT_CODES)]
    Ls {
        /// Only this dataset.
        name: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Serve an older version again: switch current.json back.
    ///
    /// Without VERSION, goes to the version published just before the current one.
    /// Only the pointer changes; no file is deleted.
    ///
    /// Example: rete rollback people 3f2a9c
    #[command(after_help = EXIT_CODES)]
    Rollback {
        /// The dataset.
        name: String,
        /// The version to serve: its content hash or a unique prefix of it (4+ digits).
        version: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Delete old versions of a dataset, keeping the newest ones and always the current one.
    ///
    /// Example: rete gc people --keep 3
    #[command(after_help = EXIT_CODES)]
    Gc {
        /// The dataset.
        name: String,
        /// Versions to keep, newest first (the current one is kept in any case).
        #[arg(long)]
        keep: usize,
        /// Say what would be deleted; delete nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
}

/// Where `publish`, `ls`, `rollback` and `gc` work.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Use wrangler's local R2 (what `wrangler dev` serves), even when R2 is configured.
    ///
    /// Runs `wrangler r2 object put|delete --local` from the node_modules of the current
    /// directory or a parent (run `npm ci` in the rete checkout first).
    #[arg(long, conflicts_with = "remote")]
    pub local: bool,
    /// Require R2: fail when credentials are missing instead of falling back to --local.
    #[arg(long)]
    pub remote: bool,
    /// TOML file with an [r2] table (default: ~/.config/rete/config.toml).
    ///
    /// Keys: account_id, access_key_id, secret_access_key, bucket, endpoint, url. Each
    /// R2_* environment variable (RETE_URL for url) overrides its key.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Bucket (R2: overrides R2_BUCKET; local: default "rete").
    #[arg(long)]
    pub bucket: Option<String>,
    /// State directory of the local R2, shared with `wrangler dev --persist-to`.
    #[arg(long, value_name = "DIR", default_value = ".wrangler/state")]
    pub persist_to: PathBuf,
}

/// How a dataset is built: the flags `rete build` and `rete publish` share
/// (the card's come next to them, in [`CardArgs`]).
#[derive(Debug, Clone, Args)]
pub struct BuildArgs {
    /// Syntax of every input: nt, nq, ttl, trig or rdfxml.
    ///
    /// By default each input's syntax comes from its extension (.nt, .nq, .ttl,
    /// .trig, .rdf/.owl, optionally followed by .gz).
    #[arg(short, long)]
    pub format: Option<String>,
    /// Memory budget, e.g. 512MiB, 2GiB.
    ///
    /// The term table and the sorts spill to temporary files beyond it.
    #[arg(long, default_value = "1GiB")]
    pub mem: String,
    /// Worker threads for parsing N-Triples/N-Quads, sorting and compression (default: all cores).
    ///
    /// The output is byte-identical whatever the thread count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Skip statements with syntax errors and report how many, instead of failing.
    #[arg(long)]
    pub lenient: bool,
    /// Directory for temporary files (default: the output's directory; for
    /// `publish` without --output, the system's).
    ///
    /// They are compressed and released as soon as read: allow about twice
    /// the output's size (1.1–1.6× measured, docs/BENCHMARK.md "Scale").
    #[arg(long)]
    pub temp_dir: Option<PathBuf>,
    /// Quads per permutation block, fixed (tests and benchmarks; default: by size, FORMAT.md §8).
    #[arg(long, value_name = "N", hide = true)]
    pub block_quads: Option<usize>,
    /// Write a directory of nodes (FORMAT.md §4.3) holding at most N entries
    /// each, even when a flat INDEX fits (tests and benchmarks).
    #[arg(long, value_name = "N", hide = true)]
    pub node_entries: Option<usize>,
}

impl BuildArgs {
    /// Checks the flag values (`--format`, `--mem`) and makes the library's
    /// settings, with the card's flags.
    pub fn to_settings(&self, card: &CardArgs) -> Result<BuildSettings, UsageError> {
        let format = self.format.as_deref().map(BuildSettings::parse_format).transpose()?;
        let memory_bytes = parse_bytes(&self.mem).ok_or_else(|| UsageError(format!("invalid --mem {:?}; write a size such as 512MiB or 2GiB", self.mem)))?;
        Ok(BuildSettings {
            format,
            memory_bytes,
            threads: self.threads,
            lenient: self.lenient,
            temp_dir: self.temp_dir.clone(),
            metadata: card.metadata(),
            pyramid: !card.no_pyramid,
            blocks: BlockLayout { block_quads: self.block_quads, node_entries: self.node_entries },
        })
    }
}

/// What the card says about the dataset, and whether the summary has community levels.
#[derive(Debug, Clone, Args)]
pub struct CardArgs {
    /// The card's title.
    ///
    /// Flags win over a card.toml beside the first input (same keys: title,
    /// description, license, source, publisher, base_iri; also
    /// label_predicates and search, see below), which wins over a
    /// VoID, DCAT or schema.org dataset description found in the data.
    /// Example: --title "Nobel prizes" --license https://creativecommons.org/publicdomain/zero/1.0/
    #[arg(long)]
    pub title: Option<String>,
    /// The card's description.
    #[arg(long)]
    pub description: Option<String>,
    /// The card's licence (an IRI or a name).
    #[arg(long)]
    pub license: Option<String>,
    /// Where the data comes from (an IRI or a name).
    #[arg(long)]
    pub source: Option<String>,
    /// Who publishes the dataset.
    #[arg(long)]
    pub publisher: Option<String>,
    /// The IRI under which the dataset's resources live, recorded in the card.
    #[arg(long, value_name = "IRI", value_parser = parse_iri)]
    pub base_iri: Option<String>,
    /// What a query without FROM sees as its default graph: `union` (every graph's
    /// triples, the named graphs' included) or `empty` (only the triples outside any
    /// named graph, the default).
    ///
    /// Recorded in the file; an explicit FROM or default-graph-uri still wins. Also a
    /// card.toml key: default_graph = "union". Example: --default-graph union
    #[arg(long, value_enum, value_name = "union|empty")]
    pub default_graph: Option<DefaultGraph>,
    /// Leave the community levels out of the summary (faster build, smaller file).
    ///
    /// The schema level (classes, subclasses, class-to-class links) is always built.
    #[arg(long)]
    pub no_pyramid: bool,
    /// Index the literals of this predicate for `rete search` too (repeatable).
    ///
    /// The label search index always takes rdfs:label, skos:prefLabel,
    /// skos:altLabel, schema:name, dcterms:title, foaf:name and
    /// skosxl:literalForm; this adds more (card.toml key `label_predicates`,
    /// a list). Example: --label-predicate http://swat.cse.lehigh.edu/onto/univ-bench.owl#name
    #[arg(long = "label-predicate", value_name = "IRI", value_parser = parse_iri)]
    pub label_predicates: Vec<String>,
    /// Leave the label search index out (smaller file, no `rete search`).
    ///
    /// Same as `search = false` in card.toml.
    #[arg(long)]
    pub no_search: bool,
}

impl CardArgs {
    /// The card members given as flags.
    pub fn metadata(&self) -> Metadata {
        Metadata {
            title: self.title.clone(),
            description: self.description.clone(),
            license: self.license.clone(),
            source: self.source.clone(),
            publisher: self.publisher.clone(),
            base_iri: self.base_iri.clone(),
            label_predicates: (!self.label_predicates.is_empty()).then(|| self.label_predicates.clone()),
            search: self.no_search.then_some(false),
            default_graph: self.default_graph,
        }
    }
}

/// `rete publish`'s flags.
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// RDF files to build, or one ready .rete file (recognised by its magic number).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Dataset name: letters, digits, '.', '_', '-' (a key segment and a URL segment).
    #[arg(long)]
    pub name: String,
    /// Keep the built .rete file here (default: a temporary file, deleted after upload).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// How RDF inputs are built, as in `rete build`.
    #[command(flatten)]
    pub build: BuildArgs,
    /// Card members and --no-pyramid, as in `rete build` (when publish builds).
    #[command(flatten)]
    pub card: CardArgs,
    /// Base URL of the Worker, for the printed card and SPARQL links.
    ///
    /// Default: `url` of the config file or RETE_URL; http://127.0.0.1:8787 (wrangler dev)
    /// for the local target.
    #[arg(long)]
    pub url: Option<String>,
    /// Size of each multipart part, at least 5MiB (all parts but the last are this size).
    #[arg(long, default_value = "16MiB")]
    pub part_size: String,
    /// Parts uploaded at once (memory: about part size × this).
    #[arg(long, default_value_t = 4)]
    pub parallel: usize,
    /// Retries of each failed request, with exponential backoff.
    #[arg(long, default_value_t = 5)]
    pub retries: usize,
    /// Timeout of each request, in seconds (with --local: of each wrangler call, plus 1 s per 4 MiB).
    #[arg(long, default_value_t = 120)]
    pub timeout_s: u64,
    /// How the uploaded object is checked before switching: full or quick.
    ///
    /// full (default) reads the whole object back and recomputes its content hash; quick
    /// checks only its size and its header bytes (which hold the content hash), for large
    /// files over slow links. Either way the server checked each request body against the
    /// SHA-256 that signs it.
    #[arg(long, value_name = "MODE", default_value = "full", value_parser = parse_verify)]
    pub verify: Verify,
    /// Print one JSON object (dataset, version, key, bytes, URLs) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Say what would be uploaded and switched; change nothing (RDF inputs are still built).
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bars or summary.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

impl TargetArgs {
    /// The library's view of these flags.
    pub fn to_options(&self, tuning: Tuning) -> TargetOptions {
        let choice = if self.local {
            Choice::Local
        } else if self.remote {
            Choice::Remote
        } else {
            Choice::Auto
        };
        TargetOptions { choice, config_file: self.config.clone(), bucket: self.bucket.clone(), persist_to: self.persist_to.clone(), tuning }
    }
}

impl PublishArgs {
    /// Checks the flag values and makes the library's options.
    pub fn to_options(&self, interactive: bool) -> Result<PublishOptions, UsageError> {
        let build = self.build.to_settings(&self.card)?;
        let part_bytes = parse_bytes(&self.part_size)
            .map(|b| b as u64)
            .filter(|&b| b >= rete_publisher::r2::MIN_PART_BYTES)
            .ok_or_else(|| UsageError(format!("invalid --part-size {:?}; write a size of at least 5MiB, such as 16MiB", self.part_size)))?;
        if self.parallel == 0 {
            return Err(UsageError("--parallel must be at least 1".into()));
        }
        let tuning = Tuning { part_bytes, parallel_parts: self.parallel, max_retries: self.retries, request_timeout: std::time::Duration::from_secs(self.timeout_s.max(1)) };
        Ok(PublishOptions {
            inputs: self.inputs.clone(),
            name: self.name.clone(),
            output: self.output.clone(),
            build,
            target: self.target.to_options(tuning),
            url: self.url.clone(),
            verify: self.verify,
            json: self.json,
            dry_run: self.dry_run,
            progress: interactive && !self.quiet && !self.json,
            quiet: self.quiet,
        })
    }
}

/// Parses `--format` of `rete query`.
fn parse_result_format(name: &str) -> Result<ResultFormat, String> {
    ResultFormat::from_name(name).ok_or_else(|| format!("unknown format {name:?}; expected json, xml, csv, tsv, nt, ttl, nq, trig, jsonld or rdf"))
}

/// Parses `--verify` of `rete publish`.
fn parse_verify(mode: &str) -> Result<Verify, String> {
    match mode {
        "full" => Ok(Verify::Full),
        "quick" => Ok(Verify::Quick),
        _ => Err(format!("unknown verify mode {mode:?}; expected full or quick")),
    }
}

/// Checks an absolute IRI flag.
fn parse_iri(iri: &str) -> Result<String, String> {
    oxrdf::NamedNode::new(iri).map(|n| n.into_string()).map_err(|e| format!("not an absolute IRI: {e}"))
}

/// Parses a byte size such as `1GiB`, `512M`, `4096`.
pub fn parse_bytes(text: &str) -> Option<usize> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let multiplier: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = number * multiplier;
    (bytes.is_finite() && bytes >= 1.0).then_some(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes() {
        assert_eq!(parse_bytes("1GiB"), Some(1 << 30));
        assert_eq!(parse_bytes("512M"), Some(512 << 20));
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("1.5k"), Some(1536));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("0"), None);
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
