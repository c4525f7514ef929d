//! Checking a task's `state` and `changes` SQL before any agent runs, through the very path
//! evaluation takes ([`crate::state`]): the same sandboxed, read-only connection, the same
//! parameter binding, the same limits. A query that cannot run (a typo, a missing table, an
//! unbound parameter, a statement the sandbox refuses) would otherwise only show up as a failed
//! criterion in every episode; checked up front, it is reported with the file and line.

use phonebench_env::Trajectory;
use phonebench_tasks::Criterion;
use phonebench_tasks::criteria::{CriterionKind, SqlParams};

use crate::state;

/// A `state` or `changes` check that cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlProblem {
    /// Index of the top-level criterion it is in.
    pub criterion: usize,
    /// Its place among that criterion's `state` / `changes` checks, in pre-order
    /// ([`Criterion::sql_leaves`]), which is how `TaskLines::criterion_sql` finds its line.
    pub leaf: usize,
    /// The check's label ([`Criterion::label`]).
    pub label: String,
    /// Why it cannot be evaluated, as evaluation would say it.
    pub message: String,
}

/// Runs every `state` query and `changes` comparison in `criteria` (combinators' children
/// included) on `trajectory`'s databases, and returns those that cannot be evaluated. Whether a
/// check passes does not matter here, only whether it can run. Use a trajectory whose databases
/// are the apps' state after setup (initial and last alike).
pub fn sql_problems(criteria: &[Criterion], trajectory: &Trajectory, params: &SqlParams) -> Vec<SqlProblem> {
    let mut out = Vec::new();
    for (i, top) in criteria.iter().enumerate() {
        for (leaf, c) in top.sql_leaves().into_iter().enumerate() {
            let result = match &c.kind {
                CriterionKind::State(s) => state::state(s, trajectory, params),
                CriterionKind::Changes(ch) => state::changes(ch, trajectory),
                _ => continue,
            };
            if let Err(message) = result {
                out.push(SqlProblem { criterion: i, leaf, label: c.label(), message });
            }
        }
    }
    out
}
