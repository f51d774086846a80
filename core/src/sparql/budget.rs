//! Budgets for untrusted queries, and the meter that enforces them.
//!
//! spareval only calls back into rete when it touches the dataset, so a
//! cartesian product of two in-memory tables would run unseen. Before
//! evaluation the optimized plan gets a step hook above every join: a `BIND`
//! of a marker function that spareval does not call but reads as "count this
//! join's rows" (vendored spareval change 29): the join asks the dataset for
//! one step per row it yields. Once a limit is hit every count turns its row
//! into an error and every scan ends, so the iterators drain in time
//! proportional to what is already buffered.

use super::error::{Limit, QueryError};
use crate::{ByteRange, ReadError};
use std::collections::BTreeSet;
use oxrdf::{NamedNode, Variable};
use sparopt::algebra::{AggregateExpression, Expression, Function, GraphPattern, OrderExpression};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Limits on one evaluation. Every limit is inclusive; `u64::MAX` means none.
#[derive(Clone)]
pub struct Budget {
    /// Quads the store may hand to the evaluator.
    pub max_quads_scanned: u64,
    /// Solutions or triples the caller may receive.
    pub max_rows_produced: u64,
    /// Units of evaluation work: intermediate rows above joins, pattern
    /// lookups, term lookups and term decodes. Bounds CPU time and, since
    /// every row an operator keeps passed through a step, memory.
    pub max_steps: u64,
    /// Bytes of terms built by expressions (`CONCAT`, `STR`, aggregates…).
    pub max_computed_bytes: u64,
    /// Polled every 256 steps and every 256 scanned quads; returning a limit ends evaluation with it:
    /// [`Limit::Deadline`] when the host's clock says the time is up,
    /// [`Limit::Cpu`] when its runtime says the request nears its CPU time
    /// limit. The core has no clock: the host brings one.
    pub should_stop: Option<Arc<dyn Fn() -> Option<Limit> + Send + Sync>>,
}

impl Budget {
    /// No limits at all (the CLI's default).
    pub fn unlimited() -> Self {
        Self { max_quads_scanned: u64::MAX, max_rows_produced: u64::MAX, max_steps: u64::MAX, max_computed_bytes: u64::MAX, should_stop: None }
    }

    /// Whether no limit is set, so evaluation needs no step hooks.
    pub fn is_unlimited(&self) -> bool {
        self.max_quads_scanned == u64::MAX && self.max_rows_produced == u64::MAX && self.max_steps == u64::MAX && self.max_computed_bytes == u64::MAX && self.should_stop.is_none()
    }
}

impl Default for Budget {
    fn default() -> Self {
        Self::unlimited()
    }
}

impl std::fmt::Debug for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budget")
            .field("max_quads_scanned", &self.max_quads_scanned)
            .field("max_rows_produced", &self.max_rows_produced)
            .field("max_steps", &self.max_steps)
            .field("max_computed_bytes", &self.max_computed_bytes)
            .field("should_stop", &self.should_stop.is_some())
            .finish()
    }
}

/// What an evaluation has used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Quads read from the store.
    pub quads_scanned: u64,
    /// Solutions or triples produced.
    pub rows_produced: u64,
    /// Evaluation steps.
    pub steps: u64,
    /// Bytes of computed terms.
    pub computed_bytes: u64,
}

/// How often (in steps, and in scanned quads) `should_stop` is polled.
const POLL_EVERY: u64 = 256;

/// Counters shared by the dataset, the step hooks and the result iterators.
/// The first failure is kept as the cause: spareval drops some errors (in
/// `FILTER`, `EXISTS`, `MINUS`), so results are only trusted while no cause
/// is set, and the cause is what the caller gets.
///
/// One evaluation runs on one thread; the fields are atomics only because
/// spareval's custom functions (the step hooks) must be `Sync`. So counters
/// are bumped with a relaxed load and store, never a read-modify-write, and
/// steps and quads, counted per row and per quad, take a slow path only
/// every [`POLL_EVERY`] counts, at their limit, or once stopped.
pub(crate) struct Meter {
    budget: Budget,
    quads_scanned: Countdown,
    rows_produced: AtomicU64,
    steps: Countdown,
    computed_bytes: AtomicU64,
    stopped: AtomicBool,
    cause: Mutex<Option<QueryError>>,
    /// Set when a read found a block missing: the run goes on to list what
    /// it needs, but its answer is incomplete.
    missed: AtomicBool,
    missing: Mutex<BTreeSet<ByteRange>>,
}

/// A count and the count at which to look closer: the next poll of
/// `should_stop` or the limit, whichever comes first; 0 once stopped.
struct Countdown {
    used: AtomicU64,
    check_at: AtomicU64,
}

impl Countdown {
    fn new(max: u64, polled: bool) -> Self {
        Self { used: AtomicU64::new(0), check_at: AtomicU64::new(Self::next_check(0, max, polled)) }
    }

    fn next_check(used: u64, max: u64, polled: bool) -> u64 {
        let limit = max.saturating_add(1);
        if polled { limit.min(used.saturating_add(POLL_EVERY)) } else { limit }
    }

    /// Counts one; `true` when no closer look is due.
    #[inline]
    fn count(&self) -> bool {
        let used = self.used.load(Ordering::Relaxed).saturating_add(1);
        self.used.store(used, Ordering::Relaxed);
        used < self.check_at.load(Ordering::Relaxed)
    }

    fn get(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
}

/// The ranges a `Missing` error lists at most (the store has them all).
const MAX_MISSING_RANGES: usize = 4096;

impl Meter {
    pub(crate) fn new(budget: Budget) -> Self {
        Self {
            quads_scanned: Countdown::new(budget.max_quads_scanned, budget.should_stop.is_some()),
            rows_produced: AtomicU64::new(0),
            steps: Countdown::new(budget.max_steps, budget.should_stop.is_some()),
            computed_bytes: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            cause: Mutex::new(None),
            missed: AtomicBool::new(false),
            missing: Mutex::new(BTreeSet::new()),
            budget,
        }
    }

    /// Records a read the source could not answer yet.
    pub(crate) fn note_missing(&self, ranges: &[ByteRange]) {
        self.missed.store(true, Ordering::Relaxed);
        if let Ok(mut missing) = self.missing.lock() {
            for range in ranges {
                if missing.len() >= MAX_MISSING_RANGES {
                    break;
                }
                missing.insert(*range);
            }
        }
    }

    /// Whether some read of this run found its bytes missing.
    pub(crate) fn has_missed(&self) -> bool {
        self.missed.load(Ordering::Relaxed)
    }

    /// The error ending a run that missed reads.
    pub(crate) fn missing_error(&self) -> QueryError {
        let ranges = self.missing.lock().map(|m| m.iter().copied().collect()).unwrap_or_default();
        QueryError::Read(ReadError::Missing(ranges))
    }

    pub(crate) fn usage(&self) -> Usage {
        Usage {
            quads_scanned: self.quads_scanned.get(),
            rows_produced: self.rows_produced.load(Ordering::Relaxed),
            steps: self.steps.get(),
            computed_bytes: self.computed_bytes.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// Stops evaluation; the first cause wins.
    pub(crate) fn stop(&self, cause: QueryError) {
        if let Ok(mut slot) = self.cause.lock() {
            slot.get_or_insert(cause);
        }
        self.stopped.store(true, Ordering::Relaxed);
        self.steps.check_at.store(0, Ordering::Relaxed);
        self.quads_scanned.check_at.store(0, Ordering::Relaxed);
    }

    /// The cause of the stop, once (later calls get `None`).
    pub(crate) fn take_cause(&self) -> Option<QueryError> {
        if !self.is_stopped() {
            return None;
        }
        self.cause.lock().ok()?.take()
    }

    /// Counts one quad read; `false` once a limit is reached.
    #[inline]
    pub(crate) fn scan(&self) -> bool {
        self.quads_scanned.count() || self.look_closer(&self.quads_scanned, self.budget.max_quads_scanned, Limit::QuadsScanned)
    }

    /// Counts one step; `false` once a limit is reached.
    #[inline]
    pub(crate) fn step(&self) -> bool {
        self.steps.count() || self.look_closer(&self.steps, self.budget.max_steps, Limit::Steps)
    }

    /// Counts one row handed to the caller.
    pub(crate) fn produce(&self) -> bool {
        self.add(&self.rows_produced, 1, self.budget.max_rows_produced, Limit::RowsProduced)
    }

    /// Counts the bytes of a computed term.
    pub(crate) fn compute(&self, bytes: u64) -> bool {
        self.add(&self.computed_bytes, bytes, self.budget.max_computed_bytes, Limit::ComputedBytes)
    }

    fn add(&self, counter: &AtomicU64, amount: u64, max: u64, limit: Limit) -> bool {
        if self.is_stopped() {
            return false;
        }
        let used = counter.load(Ordering::Relaxed).saturating_add(amount);
        counter.store(used, Ordering::Relaxed);
        if used > max {
            self.stop(QueryError::Budget { limit, max });
            return false;
        }
        true
    }

    /// A countdown's slow path: stopped already (the count is taken back),
    /// past its limit, or time to poll `should_stop`.
    #[cold]
    #[inline(never)]
    fn look_closer(&self, countdown: &Countdown, max: u64, limit: Limit) -> bool {
        let used = countdown.get();
        if self.is_stopped() {
            countdown.used.store(used - 1, Ordering::Relaxed);
            return false;
        }
        if used > max {
            self.stop(QueryError::Budget { limit, max });
            return false;
        }
        if let Some(should_stop) = &self.budget.should_stop {
            if let Some(limit) = should_stop() {
                self.stop(QueryError::Budget { limit, max: 0 });
                return false;
            }
        }
        countdown.check_at.store(Countdown::next_check(used, max, self.budget.should_stop.is_some()), Ordering::Relaxed);
        true
    }
}

/// The marker function of the step hooks (not a URL anyone serves).
pub(crate) const STEP_FUNCTION: &str = "urn:x-rete:step";

/// Optimizes `pattern` as spareval would (when `planned`: a query past
/// `MAX_PLANNED_PATTERNS` keeps its written order, since the optimizer's
/// cost grows with the cube of its size before any budget can stop it) and
/// puts a step hook above every join, left join and lateral join, and inside
/// `EXISTS`. The result goes back to spargebra's algebra: spareval optimizes
/// it again, but each hook is a `BIND` the optimizer neither moves nor
/// reorders across, so the join order found here stands; spareval then
/// evaluates no `BIND` there but counts the rows of the join under it.
pub(crate) fn with_step_hooks(pattern: &spargebra::algebra::GraphPattern, planned: bool) -> spargebra::algebra::GraphPattern {
    let pattern = if planned { sparopt::Optimizer::optimize_graph_pattern(pattern.into()) } else { pattern.into() };
    let mut hooks = 0;
    spargebra::algebra::GraphPattern::from(&hook_pattern(pattern, &mut hooks))
}

fn hook_pattern(pattern: GraphPattern, hooks: &mut usize) -> GraphPattern {
    match pattern {
        GraphPattern::Join { left, right, algorithm } => {
            let join = GraphPattern::Join { left: Box::new(hook_pattern(*left, hooks)), right: Box::new(hook_pattern(*right, hooks)), algorithm };
            step_after(join, hooks)
        }
        GraphPattern::LeftJoin { left, right, expression, algorithm } => {
            // A left join on the empty row is the body of a for-loop left
            // join; spareval recognises it by shape, so it stays unwrapped.
            let for_loop_body = left.is_empty_singleton();
            let left_join =
                GraphPattern::LeftJoin { left: Box::new(hook_pattern(*left, hooks)), right: Box::new(hook_pattern(*right, hooks)), expression: hook_expression(expression, hooks), algorithm };
            if for_loop_body { left_join } else { step_after(left_join, hooks) }
        }
        GraphPattern::Lateral { left, right } => {
            let lateral = GraphPattern::Lateral { left: Box::new(hook_pattern(*left, hooks)), right: Box::new(hook_pattern(*right, hooks)) };
            step_after(lateral, hooks)
        }
        GraphPattern::Filter { expression, inner } => GraphPattern::Filter { expression: hook_expression(expression, hooks), inner: Box::new(hook_pattern(*inner, hooks)) },
        GraphPattern::Union { inner } => GraphPattern::Union { inner: inner.into_iter().map(|p| hook_pattern(p, hooks)).collect() },
        GraphPattern::Extend { inner, variable, expression } => GraphPattern::Extend { inner: Box::new(hook_pattern(*inner, hooks)), variable, expression: hook_expression(expression, hooks) },
        GraphPattern::Minus { left, right, algorithm } => GraphPattern::Minus { left: Box::new(hook_pattern(*left, hooks)), right: Box::new(hook_pattern(*right, hooks)), algorithm },
        GraphPattern::OrderBy { inner, expression } => GraphPattern::OrderBy {
            inner: Box::new(hook_pattern(*inner, hooks)),
            expression: expression
                .into_iter()
                .map(|e| match e {
                    OrderExpression::Asc(e) => OrderExpression::Asc(hook_expression(e, hooks)),
                    OrderExpression::Desc(e) => OrderExpression::Desc(hook_expression(e, hooks)),
                })
                .collect(),
        },
        GraphPattern::Project { inner, variables } => GraphPattern::Project { inner: Box::new(hook_pattern(*inner, hooks)), variables },
        GraphPattern::Distinct { inner } => GraphPattern::Distinct { inner: Box::new(hook_pattern(*inner, hooks)) },
        GraphPattern::Reduced { inner } => GraphPattern::Reduced { inner: Box::new(hook_pattern(*inner, hooks)) },
        GraphPattern::Slice { inner, start, length } => GraphPattern::Slice { inner: Box::new(hook_pattern(*inner, hooks)), start, length },
        GraphPattern::Group { inner, variables, aggregates } => GraphPattern::Group {
            inner: Box::new(hook_pattern(*inner, hooks)),
            variables,
            aggregates: aggregates
                .into_iter()
                .map(|(variable, aggregate)| {
                    let aggregate = match aggregate {
                        AggregateExpression::FunctionCall { name, expr, distinct } => AggregateExpression::FunctionCall { name, expr: hook_expression(expr, hooks), distinct },
                        count @ AggregateExpression::CountSolutions { .. } => count,
                    };
                    (variable, aggregate)
                })
                .collect(),
        },
        leaf @ (GraphPattern::QuadPattern { .. } | GraphPattern::Path { .. } | GraphPattern::Graph { .. } | GraphPattern::Values { .. } | GraphPattern::Service { .. }) => leaf,
    }
}

/// `BIND(<urn:x-rete:step>() AS ?…)` with a variable SPARQL text cannot
/// name, one per hook so that no two hooks share a variable (a shared one
/// would stop the optimizer from using for-loop joins). The vendored spareval,
/// told the marker (`QueryEvaluator::with_step_marker`), binds nothing there
/// and has the join below count its rows through the dataset
/// (vendor/README.md, spareval change 29).
fn step_after(pattern: GraphPattern, hooks: &mut usize) -> GraphPattern {
    *hooks += 1;
    GraphPattern::Extend {
        inner: Box::new(pattern),
        variable: Variable::new_unchecked(format!("rete-step-{hooks}")),
        expression: Expression::FunctionCall(Function::Custom(NamedNode::new_unchecked(STEP_FUNCTION)), Vec::new()),
    }
}

fn hook_expression(expression: Expression, hooks: &mut usize) -> Expression {
    let all = |list: Vec<Expression>, hooks: &mut usize| list.into_iter().map(|e| hook_expression(e, hooks)).collect::<Vec<_>>();
    let two = |a: Box<Expression>, b: Box<Expression>, hooks: &mut usize| (Box::new(hook_expression(*a, hooks)), Box::new(hook_expression(*b, hooks)));
    match expression {
        Expression::Exists(pattern) => Expression::Exists(Box::new(hook_pattern(*pattern, hooks))),
        Expression::Or(list) => Expression::Or(all(list, hooks)),
        Expression::And(list) => Expression::And(all(list, hooks)),
        Expression::Coalesce(list) => Expression::Coalesce(all(list, hooks)),
        Expression::FunctionCall(name, list) => Expression::FunctionCall(name, all(list, hooks)),
        Expression::Equal(a, b) => {
            let (a, b) = two(a, b, hooks);
            Expression::Equal(a, b)
        }
        Expression::SameTerm(a, b) => {
            let (a, b) = two(a, b, hooks);
            Expression::SameTerm(a, b)
        }
        Expression::Greater(a, b) => {
            let (a, b) = two(a, b, hooks);
            Expression::Greater(a, b)
        }
        Expression::GreaterOrEqual(a, b) => {
            let (a, b) = two(a, b, hooks);
            Expression::GreaterOrEqual(a, b)
        }
        Expression::Less(a, b) => {
            let (a, b) = two(a, b, hooks);
            Expression::Less(a, b)
        }
        Expression::LessOrEqual(a, b) => {
            let (a, b) = two(a, b, hooks);
            Expression::LessOrEqual(a, b)
        }
        Expression::Add(a, b) => {
            let (a, b) = two(a, b, hooks);
            Expression::Add(a, b)
        }
        Expression::Subtract(a, b) => {
            let (a, b) = two(a, b, hooks);
            Expression::Subtract(a, b)
        }
        Expression::Multiply(a, b) => {
            let (a, b) = two(a, b, hooks);
            Expression::Multiply(a, b)
        }
        Expression::Divide(a, b) => {
            let (a, b) = two(a, b, hooks);
            Expression::Divide(a, b)
        }
        Expression::UnaryPlus(e) => Expression::UnaryPlus(Box::new(hook_expression(*e, hooks))),
        Expression::UnaryMinus(e) => Expression::UnaryMinus(Box::new(hook_expression(*e, hooks))),
        Expression::Not(e) => Expression::Not(Box::new(hook_expression(*e, hooks))),
        Expression::If(a, b, c) => Expression::If(Box::new(hook_expression(*a, hooks)), Box::new(hook_expression(*b, hooks)), Box::new(hook_expression(*c, hooks))),
        leaf @ (Expression::NamedNode(_) | Expression::Literal(_) | Expression::Variable(_) | Expression::Bound(_)) => leaf,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn steps_and_quads_trip_one_past_their_limit() {
        let meter = Meter::new(Budget { max_steps: 300, max_quads_scanned: 5, ..Budget::unlimited() });
        assert!((0..300).all(|_| meter.step()));
        assert!((0..5).all(|_| meter.scan()));
        assert!(!meter.step());
        assert!(matches!(meter.take_cause(), Some(QueryError::Budget { limit: Limit::Steps, max: 300 })));
        assert!(!meter.scan(), "a stop by one limit stops every counter");
        assert_eq!(meter.usage(), Usage { quads_scanned: 5, rows_produced: 0, steps: 301, computed_bytes: 0 });
    }

    #[test]
    fn should_stop_is_polled_every_256_steps_and_every_256_quads() {
        let polls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&polls);
        let meter = Meter::new(Budget {
            should_stop: Some(Arc::new(move || (counted.fetch_add(1, Ordering::Relaxed) >= 3).then_some(Limit::Deadline))),
            ..Budget::unlimited()
        });
        assert!((0..255).all(|_| meter.step()) && (0..255).all(|_| meter.scan()));
        assert_eq!(polls.load(Ordering::Relaxed), 0);
        assert!(meter.step() && meter.scan());
        assert_eq!(polls.load(Ordering::Relaxed), 2);
        assert!((0..256).all(|_| meter.step()));
        assert_eq!(polls.load(Ordering::Relaxed), 3);
        assert!((0..255).all(|_| meter.step()));
        assert!(!meter.step(), "the fourth poll says stop");
        assert!(matches!(meter.take_cause(), Some(QueryError::Budget { limit: Limit::Deadline, .. })));
        assert!(!meter.step() && !meter.scan());
    }

    #[test]
    fn a_row_or_byte_limit_stops_steps_and_quads() {
        let meter = Meter::new(Budget { max_rows_produced: 1, ..Budget::unlimited() });
        assert!(meter.step() && meter.scan() && meter.produce());
        assert!(!meter.produce());
        assert!(!meter.step() && !meter.scan());
        assert_eq!(meter.usage(), Usage { quads_scanned: 1, rows_produced: 2, steps: 1, computed_bytes: 0 });
    }
}
