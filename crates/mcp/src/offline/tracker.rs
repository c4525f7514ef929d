//! `tracker`: a code host's issues and pull requests (GitHub-like) for the phone owner's team at
//! Relecloud. The people are the Contacts (the owner is Sam Rivera, `samrivera`). Reading is
//! stateless; creating issues, commenting and closing change this server's copy only, which
//! starts from the same data for every episode.

use serde_json::{Map, Value, json};

use super::{OfflineServer, ToolDef, ToolError, find_one, fold, object_schema, required, text, with_enum};

/// The owner's login.
const OWNER: &str = "samrivera";

const REPOS: [(&str, &str); 3] = [
    ("relecloud/mobile-app", "The Relecloud travel app for Android and iOS"),
    ("relecloud/website", "relecloud.example.com, the marketing site and booking pages"),
    ("relecloud/data-pipeline", "Nightly jobs that load bookings into the warehouse"),
];

/// Repo, number, title, state, labels, author, assignee, created, body.
type IssueRow = (
    &'static str,
    u32,
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

const ISSUES: &[IssueRow] = &[
    (
        "relecloud/mobile-app",
        101,
        "App crashes when opening a booking offline",
        "open",
        &["bug", "crash"],
        "lucia",
        "samrivera",
        "2026-02-18",
        "Opening any booking with airplane mode on crashes the app on Android 15. Stack trace points at BookingRepository.load().",
    ),
    (
        "relecloud/mobile-app",
        102,
        "Dark mode: boarding pass text unreadable",
        "open",
        &["bug", "ui"],
        "wei",
        "aarav",
        "2026-02-20",
        "White text on a light card in dark mode.",
    ),
    (
        "relecloud/mobile-app",
        103,
        "Add Lisbon to the offline city guides",
        "open",
        &["feature"],
        "adebayo",
        "",
        "2026-02-21",
        "Customers flying to Lisbon ask for an offline guide.",
    ),
    (
        "relecloud/mobile-app",
        104,
        "Login loops after password reset",
        "closed",
        &["bug", "auth"],
        "samuel",
        "samrivera",
        "2026-01-30",
        "Fixed by #118.",
    ),
    (
        "relecloud/mobile-app",
        105,
        "Push notifications arrive twice",
        "open",
        &["bug", "notifications"],
        "farah",
        "lars",
        "2026-02-25",
        "Every flight update notification is shown twice on iOS.",
    ),
    (
        "relecloud/mobile-app",
        106,
        "Crash on rotating the seat map",
        "open",
        &["bug", "crash"],
        "yusuf",
        "",
        "2026-02-27",
        "Rotating the device while the seat map loads crashes the app.",
    ),
    (
        "relecloud/mobile-app",
        107,
        "Update the privacy policy link",
        "closed",
        &["chore"],
        "amara",
        "amara",
        "2026-02-02",
        "Done.",
    ),
    (
        "relecloud/mobile-app",
        108,
        "Show travel time to the airport on the trip screen",
        "open",
        &["feature"],
        "samrivera",
        "samrivera",
        "2026-02-28",
        "Use the maps service to show how long the drive to the airport takes.",
    ),
    (
        "relecloud/website",
        41,
        "Booking form rejects + in phone numbers",
        "open",
        &["bug"],
        "naomi",
        "samrivera",
        "2026-02-11",
        "International numbers like +44 are refused by the form.",
    ),
    (
        "relecloud/website",
        42,
        "Hero image is 4 MB",
        "open",
        &["performance"],
        "mateo",
        "mateo",
        "2026-02-14",
        "The home page hero should be under 300 KB.",
    ),
    (
        "relecloud/website",
        43,
        "Typo on the Zurich page",
        "closed",
        &["content"],
        "beatriz",
        "beatriz",
        "2026-01-22",
        "\"Zuerich\" should be \"Zurich\".",
    ),
    (
        "relecloud/website",
        44,
        "Cookie banner covers the footer on mobile",
        "open",
        &["bug", "ui"],
        "lucia",
        "",
        "2026-02-26",
        "On small screens the banner hides the footer links.",
    ),
    (
        "relecloud/website",
        45,
        "Add a currency selector to prices",
        "open",
        &["feature"],
        "kavya",
        "samrivera",
        "2026-03-01",
        "Show prices in EUR, GBP and CHF as well as USD.",
    ),
    (
        "relecloud/data-pipeline",
        12,
        "Nightly load fails on bookings with emoji names",
        "open",
        &["bug", "crash"],
        "wei",
        "samrivera",
        "2026-02-19",
        "UnicodeEncodeError in load_bookings.py for names with emoji.",
    ),
    (
        "relecloud/data-pipeline",
        13,
        "Move the schedule to 02:00 UTC",
        "closed",
        &["chore"],
        "lars",
        "lars",
        "2026-02-03",
        "Done in #15.",
    ),
    (
        "relecloud/data-pipeline",
        14,
        "Currency totals use stale exchange rates",
        "open",
        &["bug", "finance"],
        "kavya",
        "aarav",
        "2026-02-24",
        "Totals are converted with last month's rates.",
    ),
    (
        "relecloud/data-pipeline",
        16,
        "Document how to re-run a failed night",
        "open",
        &["docs"],
        "samuel",
        "",
        "2026-02-28",
        "The runbook has no section on re-runs.",
    ),
];

/// Repo, number, title, state, author, branch, reviewers, created.
type PullRow = (
    &'static str,
    u32,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static str,
);

const PULLS: &[PullRow] = &[
    (
        "relecloud/mobile-app",
        118,
        "Fix login loop after password reset",
        "merged",
        "samrivera",
        "fix/login-loop",
        &["lucia"],
        "2026-02-01",
    ),
    (
        "relecloud/mobile-app",
        121,
        "Cache bookings for offline use",
        "open",
        "lucia",
        "feature/offline-bookings",
        &["samrivera", "wei"],
        "2026-02-26",
    ),
    (
        "relecloud/mobile-app",
        122,
        "Dark mode colours for the boarding pass",
        "open",
        "aarav",
        "fix/dark-boarding-pass",
        &["samrivera"],
        "2026-02-27",
    ),
    (
        "relecloud/mobile-app",
        123,
        "Deduplicate push notifications",
        "closed",
        "lars",
        "fix/double-push",
        &["farah"],
        "2026-02-28",
    ),
    (
        "relecloud/website",
        47,
        "Accept international phone numbers",
        "open",
        "samrivera",
        "fix/phone-plus",
        &["naomi"],
        "2026-02-28",
    ),
    (
        "relecloud/website",
        48,
        "Compress the hero image",
        "merged",
        "mateo",
        "perf/hero",
        &["beatriz"],
        "2026-02-16",
    ),
    (
        "relecloud/data-pipeline",
        15,
        "Run the nightly load at 02:00 UTC",
        "merged",
        "lars",
        "chore/schedule",
        &["samrivera"],
        "2026-02-04",
    ),
    (
        "relecloud/data-pipeline",
        17,
        "Encode booking names as UTF-8",
        "open",
        "wei",
        "fix/utf8-names",
        &["samrivera", "kavya"],
        "2026-03-01",
    ),
];

/// Login → display name (the Contacts' names).
const PEOPLE: [(&str, &str); 14] = [
    ("samrivera", "Sam Rivera"),
    ("lucia", "Lucia Fernandez"),
    ("wei", "Wei Zhang"),
    ("aarav", "Aarav Nakamura"),
    ("adebayo", "Adebayo Farouk"),
    ("samuel", "Samuel Costa"),
    ("farah", "Farah Okafor"),
    ("yusuf", "Yusuf Yilmaz"),
    ("amara", "Amara Kaur"),
    ("lars", "Lars Patel"),
    ("naomi", "Naomi Bakshi"),
    ("mateo", "Mateo Andersen"),
    ("beatriz", "Beatriz Kuznetsov"),
    ("kavya", "Kavya Novak"),
];

fn person(login: &str) -> Value {
    match PEOPLE.iter().find(|p| p.0 == login) {
        Some((l, name)) => json!({ "login": l, "name": name }),
        None if login.is_empty() => Value::Null,
        None => json!({ "login": login, "name": login }),
    }
}

/// An issue as this server holds it (seeded ones and those created in the episode).
#[derive(Debug, Clone)]
struct Issue {
    repo: String,
    number: u32,
    title: String,
    state: String,
    labels: Vec<String>,
    author: String,
    assignee: String,
    created: String,
    body: String,
    comments: Vec<(String, String)>,
}

impl Issue {
    fn summary(&self) -> Value {
        json!({
            "number": self.number,
            "title": self.title,
            "state": self.state,
            "labels": self.labels,
            "assignee": person(&self.assignee),
            "created": self.created,
            "comments": self.comments.len(),
        })
    }

    fn full(&self) -> Value {
        let mut v = self.summary();
        v["repo"] = json!(self.repo);
        v["author"] = person(&self.author);
        v["body"] = json!(self.body);
        v["comments"] = json!(
            self.comments
                .iter()
                .map(|(who, body)| json!({ "author": person(who), "body": body }))
                .collect::<Vec<_>>()
        );
        v
    }
}

fn pull_json(p: &PullRow, full: bool) -> Value {
    let (repo, number, title, state, author, branch, reviewers, created) = *p;
    let mut v = json!({ "number": number, "title": title, "state": state, "author": person(author), "created": created });
    if full {
        v["repo"] = json!(repo);
        v["branch"] = json!(branch);
        v["reviewers"] = json!(reviewers.iter().map(|r| person(r)).collect::<Vec<_>>());
    }
    v
}

/// The tracker server; its issues change as the agent creates, comments and closes.
pub struct Tracker {
    issues: Vec<Issue>,
}

impl Tracker {
    /// A tracker holding the seeded issues.
    pub fn new() -> Tracker {
        let issues = ISSUES
            .iter()
            .map(|&(repo, number, title, state, labels, author, assignee, created, body)| Issue {
                repo: repo.into(),
                number,
                title: title.into(),
                state: state.into(),
                labels: labels.iter().map(|l| l.to_string()).collect(),
                author: author.into(),
                assignee: assignee.into(),
                created: created.into(),
                body: body.into(),
                comments: Vec::new(),
            })
            .collect();
        Tracker { issues }
    }

    fn repo(args: &Map<String, Value>) -> Result<&'static str, ToolError> {
        let wanted = required(args, "repo")?;
        find_one(&REPOS, |r| r.0, wanted, "repository").map(|r| r.0).map_err(|e| {
            let names: Vec<&str> = REPOS.iter().map(|r| r.0).collect();
            ToolError(format!("{e} (repositories: {})", names.join(", ")))
        })
    }

    fn number(args: &Map<String, Value>) -> Result<u32, ToolError> {
        args.get("number")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| ToolError("`number` must be a positive whole number".into()))
    }

    fn issue_mut(&mut self, repo: &str, number: u32) -> Result<&mut Issue, ToolError> {
        self.issues
            .iter_mut()
            .find(|i| i.repo == repo && i.number == number)
            .ok_or_else(|| ToolError(format!("{repo} has no issue #{number}")))
    }

    /// The next number in a repository (issues and pull requests share them).
    fn next_number(&self, repo: &str) -> u32 {
        let issues = self.issues.iter().filter(|i| i.repo == repo).map(|i| i.number);
        let pulls = PULLS.iter().filter(|p| p.0 == repo).map(|p| p.1);
        issues.chain(pulls).max().unwrap_or(0) + 1
    }

    fn list_issues(&self, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let repo = Self::repo(args)?;
        let state = text(args, "state").unwrap_or("open");
        let label = text(args, "label").map(fold);
        let assignee = text(args, "assignee").map(fold);
        let list: Vec<Value> = self
            .issues
            .iter()
            .filter(|i| i.repo == repo && (state == "all" || i.state == state))
            .filter(|i| label.as_ref().is_none_or(|l| i.labels.iter().any(|x| fold(x) == *l)))
            .filter(|i| {
                assignee.as_ref().is_none_or(|a| {
                    let name = PEOPLE.iter().find(|p| p.0 == i.assignee).map_or("", |p| p.1);
                    fold(&i.assignee) == *a
                        || (!name.is_empty() && fold(name) == *a)
                        || (a == "none" && i.assignee.is_empty())
                })
            })
            .map(Issue::summary)
            .collect();
        Ok(json!({ "repo": repo, "state": state, "count": list.len(), "issues": list }))
    }
}

impl OfflineServer for Tracker {
    fn name(&self) -> &'static str {
        "tracker"
    }

    fn instructions(&self) -> &'static str {
        "Relecloud's code host: repositories, issues and pull requests. You are signed in as samrivera (Sam Rivera)."
    }

    fn tools(&self) -> Vec<ToolDef> {
        let repo = ("repo", "string", "owner/name, e.g. relecloud/mobile-app");
        let number = ("number", "integer", "the number");
        vec![
            ToolDef {
                name: "list_repositories",
                description: "The repositories you can see.",
                input_schema: object_schema(&[], &[]),
            },
            ToolDef {
                name: "list_issues",
                description: "Issues of a repository, filtered by state (default open), label and assignee (a login, a name, or \"none\").",
                input_schema: with_enum(
                    object_schema(
                        &[
                            repo,
                            ("state", "string", "open, closed or all"),
                            ("label", "string", "a label"),
                            ("assignee", "string", "login or name, or none"),
                        ],
                        &["repo"],
                    ),
                    "state",
                    &["open", "closed", "all"],
                ),
            },
            ToolDef {
                name: "get_issue",
                description: "One issue with its body and comments.",
                input_schema: object_schema(&[repo, number], &["repo", "number"]),
            },
            ToolDef {
                name: "list_pull_requests",
                description: "Pull requests of a repository by state (default open).",
                input_schema: with_enum(
                    object_schema(&[repo, ("state", "string", "open, merged, closed or all")], &["repo"]),
                    "state",
                    &["open", "merged", "closed", "all"],
                ),
            },
            ToolDef {
                name: "get_pull_request",
                description: "One pull request with its branch and reviewers.",
                input_schema: object_schema(&[repo, number], &["repo", "number"]),
            },
            ToolDef {
                name: "create_issue",
                description: "Open a new issue; returns its number.",
                input_schema: object_schema(
                    &[
                        repo,
                        ("title", "string", "the title"),
                        ("body", "string", "the description"),
                        ("labels", "array", "label names"),
                        ("assignee", "string", "a login"),
                    ],
                    &["repo", "title"],
                ),
            },
            ToolDef {
                name: "add_comment",
                description: "Comment on an issue.",
                input_schema: object_schema(
                    &[repo, number, ("body", "string", "the comment")],
                    &["repo", "number", "body"],
                ),
            },
            ToolDef {
                name: "close_issue",
                description: "Close an issue.",
                input_schema: object_schema(&[repo, number], &["repo", "number"]),
            },
        ]
    }

    fn call(&mut self, tool: &str, args: &Map<String, Value>) -> Result<Value, ToolError> {
        match tool {
            "list_repositories" => Ok(json!({
                "repositories": REPOS.iter().map(|(name, d)| json!({ "name": name, "description": d })).collect::<Vec<_>>()
            })),
            "list_issues" => self.list_issues(args),
            "get_issue" => {
                let (repo, number) = (Self::repo(args)?, Self::number(args)?);
                Ok(self.issue_mut(repo, number)?.full())
            }
            "list_pull_requests" => {
                let repo = Self::repo(args)?;
                let state = text(args, "state").unwrap_or("open");
                let list: Vec<Value> = PULLS
                    .iter()
                    .filter(|p| p.0 == repo && (state == "all" || p.3 == state))
                    .map(|p| pull_json(p, false))
                    .collect();
                Ok(json!({ "repo": repo, "state": state, "count": list.len(), "pull_requests": list }))
            }
            "get_pull_request" => {
                let (repo, number) = (Self::repo(args)?, Self::number(args)?);
                PULLS
                    .iter()
                    .find(|p| p.0 == repo && p.1 == number)
                    .map(|p| pull_json(p, true))
                    .ok_or_else(|| ToolError(format!("{repo} has no pull request #{number}")))
            }
            "create_issue" => {
                let repo = Self::repo(args)?;
                let title = required(args, "title")?.trim();
                if title.is_empty() {
                    return Err(ToolError("the title is empty".into()));
                }
                let mut labels: Vec<String> = Vec::new();
                if let Some(Value::Array(given)) = args.get("labels") {
                    for l in given {
                        let Some(l) = l.as_str().map(str::trim).filter(|l| !l.is_empty()) else {
                            return Err(ToolError(format!("labels are non-empty strings, not {l}")));
                        };
                        if !labels.iter().any(|x| x == l) {
                            labels.push(l.to_string());
                        }
                    }
                }
                let assignee = text(args, "assignee").map(str::trim).unwrap_or("");
                if !assignee.is_empty() && !PEOPLE.iter().any(|p| p.0 == assignee) {
                    let logins: Vec<&str> = PEOPLE.iter().map(|p| p.0).collect();
                    return Err(ToolError(format!("no user `{assignee}` (logins: {})", logins.join(", "))));
                }
                let number = self.next_number(repo);
                let issue = Issue {
                    repo: repo.into(),
                    number,
                    title: title.into(),
                    state: "open".into(),
                    labels,
                    author: OWNER.into(),
                    assignee: assignee.into(),
                    created: "2026-03-02".into(),
                    body: text(args, "body").unwrap_or("").into(),
                    comments: Vec::new(),
                };
                let v = issue.full();
                self.issues.push(issue);
                Ok(v)
            }
            "add_comment" => {
                let (repo, number) = (Self::repo(args)?, Self::number(args)?);
                let body = required(args, "body")?.trim().to_string();
                if body.is_empty() {
                    return Err(ToolError("the comment is empty".into()));
                }
                let issue = self.issue_mut(repo, number)?;
                issue.comments.push((OWNER.into(), body));
                Ok(json!({ "repo": repo, "number": number, "comments": issue.comments.len() }))
            }
            "close_issue" => {
                let (repo, number) = (Self::repo(args)?, Self::number(args)?);
                let issue = self.issue_mut(repo, number)?;
                issue.state = "closed".into();
                Ok(json!({ "repo": repo, "number": number, "state": "closed" }))
            }
            other => Err(ToolError(format!("no tool `{other}`"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(t: &mut Tracker, tool: &str, args: Value) -> Result<Value, ToolError> {
        t.call(tool, args.as_object().unwrap())
    }

    #[test]
    fn filters_and_people() {
        let mut t = Tracker::new();
        let crashes =
            call(&mut t, "list_issues", json!({"repo": "relecloud/mobile-app", "label": "crash"})).unwrap();
        assert_eq!(crashes["count"], 2);
        let mine =
            call(&mut t, "list_issues", json!({"repo": "mobile-app", "assignee": "Sam Rivera"})).unwrap();
        assert_eq!(mine["count"], 2, "{mine}");
        let i = call(&mut t, "get_issue", json!({"repo": "relecloud/website", "number": 41})).unwrap();
        assert_eq!(i["author"]["name"], "Naomi Bakshi");
        let p = call(&mut t, "get_pull_request", json!({"repo": "relecloud/data-pipeline", "number": 17}))
            .unwrap();
        assert_eq!(p["reviewers"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn writes_change_this_copy_only() {
        let mut t = Tracker::new();
        let created =
            call(&mut t, "create_issue", json!({"repo": "relecloud/website", "title": "Broken link"}))
                .unwrap();
        assert_eq!(created["number"], 49, "after PR #48");
        call(
            &mut t,
            "add_comment",
            json!({"repo": "relecloud/website", "number": 49, "body": "seen on Safari"}),
        )
        .unwrap();
        call(&mut t, "close_issue", json!({"repo": "relecloud/website", "number": 41})).unwrap();
        let open = call(&mut t, "list_issues", json!({"repo": "relecloud/website"})).unwrap();
        assert_eq!(open["count"], 4);
        let fresh = Tracker::new();
        assert_eq!(fresh.issues.len(), ISSUES.len());
        assert!(call(&mut t, "get_issue", json!({"repo": "relecloud/website", "number": 999})).is_err());
    }
}
