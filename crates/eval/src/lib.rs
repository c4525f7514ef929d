//! Scoring: the criteria language (`docs/criteria.md`, data model in
//! [`phonebench_tasks::criteria`]) evaluated over a recorded [`phonebench_env::Trajectory`], and
//! the SPHINX import ([`sphinx`]) that turns upstream evaluator files and trajectory directories
//! into the same criteria and trajectories.
//!
//! Evaluation uses SPHINX's interleaved trace model, `[(screen0, activity0), (screen0, action0),
//! …, (screenN, activityN), (screenN, STOP)]`, with upstream's index arithmetic, so imported SPHINX
//! evaluators score exactly as upstream under [`Semantics::Upstream`]; [`Semantics::AnyMatch`]
//! fixes upstream's first-match searches.

mod answer;
mod evaluate;
mod moment;
mod rules;
pub mod sphinx;
mod sql_check;
mod state;
mod trace;

pub use evaluate::{CriterionVerdict, EvalContext, Semantics, Verdict, evaluate};
pub use sphinx::{
    SphinxError, SphinxEvaluatorError, SphinxImport, criteria_from_sphinx_json, import_sphinx_json,
    load_groundtruth, stop_after,
};
pub use sql_check::{SqlProblem, sql_problems};
