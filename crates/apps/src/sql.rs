//! SQLite for app state: statement splitting with line numbers, the phone's deterministic
//! functions, building the pristine database and its snapshot.

use std::path::Path;

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;

use crate::error::LoadError;
use crate::sandbox::{self, Budget, Deadline, Profile};

/// Splits SQL text into statements, each with the 1-based line it starts on.
///
/// Semicolons inside strings, quoted identifiers, comments and `CREATE TRIGGER ... END` bodies do
/// not split. We split ourselves because SQLite reports errors without a position, and a seed file
/// has hundreds of statements: the author needs the line.
pub fn split_statements(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut line = 1usize;
    let mut start_line: Option<usize> = None;
    let mut i = 0usize;
    let mut in_trigger = false;
    let mut word_start: Option<usize> = None;
    while i < bytes.len() {
        let b = bytes[i];
        let is_word = b.is_ascii_alphanumeric() || b == b'_';
        if is_word {
            word_start.get_or_insert(i);
        } else if let Some(ws) = word_start.take() {
            let word = &text[ws..i];
            if word.eq_ignore_ascii_case("TRIGGER") {
                in_trigger = true;
            } else if in_trigger && word.eq_ignore_ascii_case("END") {
                // The `;` after END closes the trigger.
                in_trigger = false;
            }
        }
        match b {
            b'\n' => line += 1,
            b'\'' | b'"' | b'`' => {
                start_line.get_or_insert(line);
                i += 1;
                while i < bytes.len() {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    if bytes[i] == b {
                        if bytes.get(i + 1) == Some(&b) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
            }
            b'[' => {
                start_line.get_or_insert(line);
                while i < bytes.len() && bytes[i] != b']' {
                    i += 1;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
                continue;
            }
            b';' if !in_trigger => {
                if let Some(l) = start_line.take() {
                    out.push((l, text[start..=i].trim()));
                }
                start = i + 1;
            }
            _ if !b.is_ascii_whitespace() && start_line.is_none() => {
                start_line = Some(line);
                start = i;
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(l) = start_line {
        let rest = text.get(start..).unwrap_or("").trim();
        if !rest.is_empty() {
            out.push((l, rest));
        }
    }
    out
}

/// Whether SQL text visibly reads the host clock or time zone (see
/// [`crate::sandbox::host_clock_in_text`], which also says why).
pub fn reads_host_clock(sql: &str) -> bool {
    crate::sandbox::host_clock_in_text(sql).is_some()
}

/// Installs the phone's deterministic functions on a connection: `random()` and `randomblob(n)`
/// from `random` instead of the OS, and `phone_now()` from `now` (ms since the epoch).
///
/// SQLite lets an application function replace a built-in of the same name and arity, which is
/// how `random()` stops reading `/dev/urandom`.
pub fn install_functions<R, N>(conn: &Connection, random: R, now: N) -> rusqlite::Result<()>
where
    R: Fn() -> i64 + Send + Sync + Clone + 'static,
    N: Fn() -> i64 + Send + Sync + 'static,
{
    let flags = FunctionFlags::SQLITE_UTF8;
    let r = random.clone();
    conn.create_scalar_function("random", 0, flags, move |_| Ok(r()))?;
    conn.create_scalar_function("randomblob", 1, flags, move |ctx| {
        let n: i64 = ctx.get(0)?;
        let n = n.clamp(1, 1 << 20) as usize;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            out.extend_from_slice(&random().to_le_bytes());
        }
        out.truncate(n);
        Ok(out)
    })?;
    conn.create_scalar_function("phone_now", 0, flags, move |_| Ok(now()))?;
    Ok(())
}

/// Runs every statement of `text` on `conn`, each with a fresh operation `budget`, naming `file`
/// and the statement's line on failure.
pub fn run_script(conn: &Connection, budget: &Budget, file: &Path, text: &str) -> Result<(), LoadError> {
    for (line, statement) in split_statements(text) {
        if let Some(reason) = sandbox::host_clock_in_text(statement) {
            return Err(LoadError::at(file, line, reason));
        }
        budget.arm();
        conn.execute_batch(statement)
            .map_err(|e| LoadError::at(file, line, format!("SQL error: {}", sandbox::explain(&e))))?;
    }
    Ok(())
}

/// The fixed clock and generator used while building a package's pristine database, so the
/// snapshot does not depend on when or where it was built.
pub const BUILD_NOW_MS: i64 = crate::CLOCK_START_MS;

/// Builds an app's pristine database from its schema and seed and returns its serialized bytes.
pub fn build_snapshot(
    schema_file: &Path,
    schema: &str,
    seed_file: &Path,
    seed: &str,
) -> Result<(Connection, Vec<u8>), LoadError> {
    let mut conn = Connection::open_in_memory()
        .map_err(|e| LoadError::file(schema_file, format!("cannot open SQLite: {e}")))?;
    let state = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0x9E37_79B9_7F4A_7C15));
    let random = move || {
        // SplitMix64 with a fixed start: build-time randomness must be the same on every machine.
        let mut z = state.fetch_add(0x9E37_79B9_7F4A_7C15, std::sync::atomic::Ordering::Relaxed);
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as i64
    };
    install_functions(&conn, random, || BUILD_NOW_MS)
        .map_err(|e| LoadError::file(schema_file, format!("cannot install functions: {e}")))?;
    let budget = sandbox::install(&mut conn, Profile::App, Deadline::default())
        .map_err(|e| LoadError::file(schema_file, format!("cannot set up the SQLite sandbox: {e}")))?;
    run_script(&conn, &budget, schema_file, schema)?;
    run_script(&conn, &budget, seed_file, seed)?;
    // The connection stays in use for the load-time checks (statements prepared against the
    // schema, the dark-theme query): each gets a fresh budget.
    budget.arm();
    let bytes = conn
        .serialize(rusqlite::MAIN_DB)
        .map_err(|e| LoadError::file(seed_file, format!("cannot snapshot the database: {e}")))?
        .to_vec();
    Ok((conn, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_with_lines_and_respects_quotes_comments_and_triggers() {
        let sql = "CREATE TABLE a (x);\n-- a; comment\nINSERT INTO a VALUES ('x;y');\n\n/* multi\n; */ INSERT INTO a\nVALUES (\"q;\");\nCREATE TRIGGER t AFTER INSERT ON a BEGIN\n  DELETE FROM a; SELECT 1;\nEND;\nSELECT 2";
        let parts = split_statements(sql);
        let lines: Vec<usize> = parts.iter().map(|p| p.0).collect();
        assert_eq!(lines, vec![1, 3, 6, 8, 11], "{parts:?}");
        assert_eq!(parts[1].1, "INSERT INTO a VALUES ('x;y');");
        assert!(parts[3].1.ends_with("END;"));
        assert_eq!(parts[4].1, "SELECT 2");
    }

    #[test]
    fn bad_seed_names_its_line() {
        let e = build_snapshot(
            Path::new("schema.sql"),
            "CREATE TABLE a (x INTEGER NOT NULL);",
            Path::new("seed.sql"),
            "INSERT INTO a VALUES (1);\n\nINSERT INTO b VALUES (2);\n",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "seed.sql:3: SQL error: no such table: b");
    }

    /// Builds a snapshot whose seed is two harmless lines and then `statement` on line 3.
    fn seed_error(statement: &str) -> String {
        let seed = format!("INSERT INTO a VALUES (1);\n\n{statement};\n");
        match build_snapshot(Path::new("schema.sql"), "CREATE TABLE a (t);", Path::new("seed.sql"), &seed) {
            Ok(_) => panic!("`{statement}` was allowed in a seed"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn seeds_cannot_reach_files_or_the_host_clock() {
        let outside = std::env::temp_dir().join("phonebench-seed-attach.sqlite");
        let path = outside.display();
        for (statement, cause) in [
            (format!("ATTACH DATABASE '{path}' AS x"), "ATTACH is not allowed"),
            (format!("ATTACH DATABASE '{path}' || '2' AS x"), "ATTACH is not allowed"),
            ("DETACH DATABASE main".to_string(), "DETACH is not allowed"),
            (format!("VACUUM INTO '{path}'"), "ATTACH is not allowed"),
            ("SELECT load_extension('/tmp/x.so')".to_string(), "load_extension() is not allowed"),
            ("INSERT INTO a VALUES (CURRENT_TIMESTAMP)".to_string(), "CURRENT_TIMESTAMP"),
            ("INSERT INTO a VALUES (date())".to_string(), "host clock"),
            ("INSERT INTO a VALUES (unixepoch())".to_string(), "host clock"),
            ("INSERT INTO a VALUES (datetime('NOW'))".to_string(), "host clock"),
            ("INSERT INTO a VALUES (datetime('n' || 'ow'))".to_string(), "host clock"),
            ("INSERT INTO a VALUES (strftime('%s', 'now'))".to_string(), "host clock"),
            ("INSERT INTO a VALUES (strftime('%s'))".to_string(), "host clock"),
            ("INSERT INTO a VALUES (datetime(0, 'unixepoch', 'localtime'))".to_string(), "time zone"),
            (
                "INSERT INTO a SELECT datetime(t, 'unixepoch', 'local' || 'time') FROM a".to_string(),
                "time zone",
            ),
            // SQLite reads a blob as text and stops at a NUL: both spell 'now' too.
            ("INSERT INTO a VALUES (datetime(x'6e6f77'))".to_string(), "host clock"),
            ("INSERT INTO a VALUES (julianday(cast('no' || 'w' AS BLOB)))".to_string(), "host clock"),
            ("INSERT INTO a VALUES (julianday(char(110, 111, 119, 0)))".to_string(), "host clock"),
            ("INSERT INTO a VALUES (unixepoch('now ' || char(0) || 'x'))".to_string(), "host clock"),
            (
                "INSERT INTO a VALUES (datetime(0, 'unixepoch', x'6c6f63616c74696d65'))".to_string(),
                "time zone",
            ),
            ("PRAGMA writable_schema = ON".to_string(), "PRAGMA writable_schema is not allowed"),
        ] {
            let e = seed_error(&statement);
            assert!(e.starts_with("seed.sql:3: "), "`{statement}`: {e}");
            assert!(e.contains(cause), "`{statement}`: expected `{cause}` in {e}");
        }
        assert!(!outside.exists(), "a seed wrote a file");
        let (_, bytes) = build_snapshot(
            Path::new("s.sql"),
            "CREATE TABLE a (t);",
            Path::new("seed.sql"),
            "INSERT INTO a VALUES (datetime(1772442000000 / 1000, 'unixepoch')), (date('2024-01-01', '+1 day'));",
        )
        .expect("explicit times are fine");
        assert!(!bytes.is_empty());
    }

    #[test]
    fn a_seed_that_recurses_without_end_stops_at_the_operation_limit() {
        let statement = "INSERT INTO a WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
        let first = seed_error(statement);
        assert!(first.starts_with("seed.sql:3: ") && first.contains("SQLite operations"), "{first}");
        assert_eq!(seed_error(statement), first, "the same error every time");
    }

    #[test]
    fn host_clock_is_refused_and_random_is_deterministic() {
        let e = build_snapshot(
            Path::new("s.sql"),
            "CREATE TABLE a (t);",
            Path::new("seed.sql"),
            "INSERT INTO a VALUES (datetime('now'));",
        )
        .unwrap_err();
        assert!(e.message.contains("phone_now"), "{e}");
        let seed = "INSERT INTO a VALUES (random()); INSERT INTO a VALUES (phone_now());";
        let (_, one) =
            build_snapshot(Path::new("s.sql"), "CREATE TABLE a (t);", Path::new("seed.sql"), seed).unwrap();
        let (_, two) =
            build_snapshot(Path::new("s.sql"), "CREATE TABLE a (t);", Path::new("seed.sql"), seed).unwrap();
        assert_eq!(one, two);
    }
}
