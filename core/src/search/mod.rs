//! Finding resources by name through the label search index (FORMAT.md §12):
//! a query's words become key lookups in the posting blocks, their postings
//! are intersected and ranked, and the best hits are named through the
//! dictionary. Like every read of the core it runs over a [`Store`] and may
//! miss blocks: a run that misses lists every block it needs and ends with
//! [`ReadError::Missing`], so a host drives it in rounds (`run_in_rounds`,
//! `docs/READ-PATH.md`): the posting blocks in one round, the names in the next.

pub mod names;
pub mod normalize;
pub mod sparql;

use crate::format::search::{KeyPostings, PREFIX_LIST_MARK, Posting, SearchRoot};
use crate::read::{RangeSource, Store};
use crate::{ReadError, TermId};
use oxrdf::Term;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::ops::RangeInclusive;
use std::sync::Arc;

/// FORMAT.md §12.5: a word read as a prefix reads its keys directly when they
/// lie in at most this many posting blocks, else its prefix list.
pub const MAX_PREFIX_BLOCKS: usize = 2;
/// Added to a hit's weight when every query word matched a whole word of
/// its label ("lincoln" before "lincolnshire"): the weight of twice the links.
pub const WHOLE_WORD_BONUS: u64 = 16;
/// Added to a hit's weight in proportion to the share of its label the query
/// covers ("place" before "populated place"): 32 when it is all of it.
pub const COVERAGE_BONUS: u64 = 32;
/// Most hits one search returns.
pub const MAX_LIMIT: usize = 1000;
/// Words of a query beyond this many are ignored (and the answer says it was cut).
pub const MAX_QUERY_WORDS: usize = 8;
/// Types listed per hit when a search asks for them.
pub const MAX_TYPES: usize = 4;
/// Candidates named per hit asked for when some word can only be checked on
/// the label's text (a word too common to intersect its postings).
const CHECK_FACTOR: usize = 4;

/// One word of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryWord {
    /// The normalised word.
    pub word: String,
    /// Whether longer words starting with it match too.
    pub prefix: bool,
}

/// What to search for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    /// The words, every one of which a hit's label must contain.
    pub words: Vec<QueryWord>,
    /// Only labels whose language tag matches (SPARQL `langMatches`; `""`: no tag).
    pub lang: Option<String>,
    /// Most hits returned (one per subject).
    pub limit: usize,
    /// Whether the query had more words than [`MAX_QUERY_WORDS`].
    pub words_dropped: bool,
    /// Whether to find each hit's types (`rdf:type` IRIs, bounded: see
    /// [`names::find_types`]); one more round.
    pub types: bool,
}

impl SearchRequest {
    /// A request from text typed in a search box: every word matches as a
    /// prefix ("abr linc" finds "Abraham Lincoln").
    pub fn typed(text: &str, lang: Option<&str>, limit: usize) -> Self {
        Self::from_words(normalize::words(text).into_iter().map(|word| QueryWord { word, prefix: true }).collect(), lang, limit)
    }

    /// A request in the query syntax of Jena's `text:query` (Lucene's): words
    /// match whole unless written with a trailing `*` ("linc*").
    pub fn lucene(text: &str, lang: Option<&str>, limit: usize) -> Self {
        let mut words = Vec::new();
        for token in text.split_whitespace() {
            let prefix = token.ends_with('*');
            let cut = normalize::words(token);
            let last = cut.len().saturating_sub(1);
            words.extend(cut.into_iter().enumerate().map(|(i, word)| QueryWord { word, prefix: prefix && i == last }));
        }
        Self::from_words(words, lang, limit)
    }

    fn from_words(mut words: Vec<QueryWord>, lang: Option<&str>, limit: usize) -> Self {
        words.dedup();
        let words_dropped = words.len() > MAX_QUERY_WORDS;
        words.truncate(MAX_QUERY_WORDS);
        Self { words, lang: lang.map(str::to_owned), limit: limit.clamp(1, MAX_LIMIT), words_dropped, types: false }
    }
}

/// One resource found.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// The subject.
    pub subject: Term,
    /// The label that matched (a literal).
    pub label: Term,
    /// The rank score: the subject's weight (FORMAT.md §12.4), plus up to
    /// [`COVERAGE_BONUS`] for the share of the label the query covers, plus
    /// [`WHOLE_WORD_BONUS`] when every word matched whole.
    pub score: u64,
    /// Its types (IRIs), when the request asked for them.
    pub types: Option<Vec<String>>,
}

/// The hits of a search, best first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchAnswer {
    /// Hits, one per subject, best first.
    pub hits: Vec<SearchHit>,
    /// Whether hits may be missing: a word so common that only its best
    /// postings are stored, a prefix list shorter than the limit, or words
    /// beyond [`MAX_QUERY_WORDS`].
    pub cut: bool,
    /// Whether some hits' types were not read (the bounds of [`names::find_types`]).
    pub types_cut: bool,
}

/// The JSON of a search, the same from `rete search --json` and from
/// `GET /{ds}/search` (README "Search"): the hits and what finding them cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchOutput {
    /// The query as given.
    pub query: String,
    /// Hits, best first.
    pub results: Vec<SearchResult>,
    /// Whether hits may be missing (see [`SearchAnswer::cut`]).
    pub cut: bool,
    /// Whether some hits' types were left unread (see [`SearchAnswer::types_cut`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub types_cut: bool,
    /// Sequential rounds of reads, the open included.
    pub rounds: u64,
    /// Range requests.
    pub requests: u64,
    /// Bytes fetched.
    pub bytes: u64,
}

/// One hit as printed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    /// The resource's IRI (a blank node in N-Triples form).
    pub iri: String,
    /// The label that matched.
    pub label: String,
    /// The label's language tag, `""` when it has none.
    pub lang: String,
    /// The rank score (see [`SearchHit::score`]).
    pub score: u64,
    /// Its types (at most [`MAX_TYPES`]), when asked for (`--types`, `types=1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<String>>,
}

impl SearchOutput {
    /// The output for `query`'s answer, with what reading it cost.
    pub fn new(query: &str, answer: &SearchAnswer, rounds: u64, requests: u64, bytes: u64) -> Self {
        Self { query: query.to_owned(), results: answer.hits.iter().map(SearchResult::from_hit).collect(), cut: answer.cut, types_cut: answer.types_cut, rounds, requests, bytes }
    }
}

impl SearchResult {
    /// A hit as printed.
    pub fn from_hit(hit: &SearchHit) -> Self {
        let iri = match &hit.subject {
            Term::NamedNode(node) => node.as_str().to_owned(),
            other => other.to_string(),
        };
        let (label, lang) = match &hit.label {
            Term::Literal(literal) => (literal.value().to_owned(), literal.language().unwrap_or_default().to_owned()),
            other => (other.to_string(), String::new()),
        };
        Self { iri, label, lang, score: hit.score, types: hit.types.clone() }
    }
}

/// The search failed for a reason of the file, not of the read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The file was built without a search index.
    #[error("this file has no search index: it was built with --no-search, or by a rete older than the index; rebuild it without --no-search")]
    NoIndex,
    /// Reading failed (or, in rounds, is not complete yet).
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Searches the labels of a store: one run, which may miss blocks (see the module doc).
pub fn search<S: RangeSource>(store: &Store<S>, request: &SearchRequest) -> Result<SearchAnswer, SearchError> {
    let root = store.search_root()?.ok_or(SearchError::NoIndex)?;
    if request.words.is_empty() {
        return Ok(SearchAnswer::default());
    }
    let languages = request.lang.as_deref().map(|lang| root.language_ranges(lang));
    if languages.as_ref().is_some_and(Vec::is_empty) {
        return Ok(SearchAnswer { hits: Vec::new(), cut: request.words_dropped, types_cut: false });
    }
    let plans: Vec<WordPlan> = request.words.iter().map(|word| WordPlan::new(&root, word)).collect();
    // rdf:type's id, when types are asked for: its dictionary block in the postings' round.
    let rdf_type = request.types.then(|| store.term_id(oxrdf::vocab::rdf::TYPE.into()));
    let blocks = all_or_missing(plans.iter().flat_map(|plan| plan.blocks.clone()), |n| store.search_block(n))?;
    let rdf_type = rdf_type.transpose()?.flatten();
    let matches: Vec<WordMatches> = plans.iter().map(|plan| plan.matches(&blocks)).collect();
    let Some(driver) = driver(&matches) else { return Ok(SearchAnswer::default()) };
    let query_chars = request.words.iter().map(|w| w.word.chars().count() as u64 + 1).sum::<u64>() - 1;
    let mut candidates = intersect(&matches, driver, languages.as_deref(), query_chars);
    // An incomplete set other than the driver cannot be intersected: its words are checked on the label's text.
    let needs_text = matches.iter().enumerate().any(|(i, m)| i != driver && !m.complete);
    let named = if needs_text { request.limit.saturating_mul(CHECK_FACTOR) } else { request.limit };
    let mut cut = request.words_dropped || matches.iter().any(|m| !m.complete);
    candidates.truncate(named);
    // The candidates' types, their PSO blocks in the names' round.
    let subjects: Vec<TermId> = candidates.iter().map(|c| c.posting.subject).collect();
    let types = rdf_type.map(|id| names::find_types(store, id, &subjects, MAX_TYPES));
    let terms = all_or_missing(candidates.iter().flat_map(|c| [c.posting.subject, c.posting.label]), |id| store.term(id));
    let (terms, types) = (terms?, types.transpose()?);
    let subject_types = |id: TermId| request.types.then(|| types.as_ref().and_then(|(found, _)| found.get(&id).cloned()).unwrap_or_default());
    let types_cut = types.as_ref().is_some_and(|(_, cut)| *cut);
    let mut hits = Vec::new();
    for candidate in candidates {
        let (Some(subject), Some(label @ Term::Literal(literal))) = (terms.get(&candidate.posting.subject), terms.get(&candidate.posting.label)) else { continue };
        let words = normalize::words(literal.value());
        if needs_text && !request.words.iter().all(|w| words.iter().any(|lw| lw == &w.word || (w.prefix && lw.starts_with(&w.word)))) {
            continue;
        }
        let whole = request.words.iter().all(|w| words.contains(&w.word));
        hits.push(SearchHit { subject: subject.clone(), label: label.clone(), score: candidate.score + if whole { WHOLE_WORD_BONUS } else { 0 }, types: subject_types(candidate.posting.subject) });
    }
    hits.sort_by(|a, b| b.score.cmp(&a.score));
    // When every named candidate was a hit, more may have followed.
    if hits.len() > request.limit {
        hits.truncate(request.limit);
    } else if needs_text && hits.len() == named {
        cut = true;
    }
    Ok(SearchAnswer { hits, cut, types_cut })
}

/// Which posting blocks one word reads, and how.
struct WordPlan<'a> {
    word: &'a QueryWord,
    blocks: std::ops::Range<usize>,
    /// Read the prefix list `word + 00` instead of the words under it.
    list: bool,
}

impl<'a> WordPlan<'a> {
    /// FORMAT.md §12.5: an exact word reads the one block that may hold it; a
    /// prefix reads the blocks of its keys when they are at most
    /// [`MAX_PREFIX_BLOCKS`], else the block of its prefix list.
    fn new(root: &SearchRoot, word: &'a QueryWord) -> Self {
        let key = word.word.as_bytes();
        let single = |key: &[u8]| root.block_for_key(key).map_or(0..0, |n| n..n + 1);
        if !word.prefix {
            return Self { word, blocks: single(key), list: false };
        }
        let blocks = root.blocks_for_prefix(key);
        if blocks.len() <= MAX_PREFIX_BLOCKS {
            return Self { word, blocks, list: false };
        }
        Self { word, blocks: single(&list_key(key)), list: true }
    }

    /// The word's postings in the blocks read.
    fn matches(&self, blocks: &HashMap<usize, Arc<crate::format::search::PostingBlock>>) -> WordMatches {
        let word = self.word.word.as_bytes();
        let mut found = WordMatches { postings: HashMap::new(), complete: true };
        let mut add = |key: &KeyPostings| {
            found.complete &= key.is_complete();
            for posting in &key.postings {
                found.postings.entry((posting.subject, posting.label)).or_insert(*posting);
            }
        };
        for block in self.blocks.clone().filter_map(|n| blocks.get(&n)) {
            if self.list {
                block.find(&list_key(word)).into_iter().for_each(&mut add);
            } else if self.word.prefix {
                block.with_prefix(word).filter(|k| k.prefix().is_none()).for_each(&mut add);
            } else {
                block.find(word).into_iter().for_each(&mut add);
            }
        }
        found
    }
}

fn list_key(prefix: &[u8]) -> Vec<u8> {
    let mut key = prefix.to_vec();
    key.push(PREFIX_LIST_MARK);
    key
}

/// The postings a word matched, by (subject, label).
struct WordMatches {
    postings: HashMap<(TermId, TermId), Posting>,
    /// Whether these are all of them.
    complete: bool,
}

/// A (subject, label) pair every complete word matched.
struct Candidate {
    posting: Posting,
    /// Weight and coverage: the score before the label's text is known.
    score: u64,
}

/// The word whose pairs are the candidates: the smallest complete set, or
/// the smallest set when none is complete.
fn driver(matches: &[WordMatches]) -> Option<usize> {
    let smallest = |complete_only: bool| matches.iter().enumerate().filter(|(_, m)| m.complete || !complete_only).min_by_key(|(_, m)| m.postings.len()).map(|(i, _)| i);
    smallest(true).or_else(|| smallest(false))
}

/// The driver's pairs that every other complete set holds too, in a language
/// asked for; ranked, one per subject. Incomplete sets are checked later on
/// the label's text.
fn intersect(matches: &[WordMatches], driver: usize, languages: Option<&[RangeInclusive<TermId>]>, query_chars: u64) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = matches[driver]
        .postings
        .iter()
        .filter(|(pair, _)| matches.iter().filter(|m| m.complete).all(|m| m.postings.contains_key(pair)))
        .filter(|(_, p)| languages.is_none_or(|ranges| ranges.iter().any(|r| r.contains(&p.label))))
        .map(|(_, &posting)| Candidate { posting, score: posting.weight + COVERAGE_BONUS * query_chars.min(posting.length) / posting.length.max(1) })
        .collect();
    candidates.sort_by_key(|c| (std::cmp::Reverse(c.score), c.posting.length, c.posting.subject, c.posting.label));
    let mut seen = HashSet::new();
    candidates.retain(|c| seen.insert(c.posting.subject));
    candidates
}

/// Gets every key, asking for all of them before reporting a miss, so that
/// one round fetches every block they need.
fn all_or_missing<K: Copy + Eq + std::hash::Hash, V>(keys: impl Iterator<Item = K>, mut get: impl FnMut(K) -> Result<V, ReadError>) -> Result<HashMap<K, V>, ReadError> {
    let mut found = HashMap::new();
    let mut missing = None;
    for key in keys {
        if found.contains_key(&key) {
            continue;
        }
        match get(key) {
            Ok(value) => _ = found.insert(key, value),
            Err(ReadError::Missing(ranges)) => missing.get_or_insert_with(Vec::new).extend(ranges),
            Err(other) => return Err(other),
        }
    }
    missing.map_or(Ok(found), |ranges| Err(ReadError::Missing(ranges)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_and_lucene_requests() {
        let typed = SearchRequest::typed("Abr  Linc", Some("en"), 20);
        assert_eq!(typed.words, [QueryWord { word: "abr".into(), prefix: true }, QueryWord { word: "linc".into(), prefix: true }]);
        let lucene = SearchRequest::lucene("abraham linc*", None, 0);
        assert_eq!(lucene.words, [QueryWord { word: "abraham".into(), prefix: false }, QueryWord { word: "linc".into(), prefix: true }]);
        assert_eq!(lucene.limit, 1);
        let long = SearchRequest::typed("a b c d e f g h i j", None, 5000);
        assert!(long.words_dropped);
        assert_eq!((long.words.len(), long.limit), (MAX_QUERY_WORDS, MAX_LIMIT));
    }
}
