//! Values between SQLite and templates, and the [`DataSource`] screens read state through.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use minijinja::Value;
use minijinja::value::{Serde, ValueKind};
use phonebench_apps::DataSource;
use phonebench_search::ContentIndex;
use rusqlite::Connection;
use rusqlite::types::{Value as SqlValue, ValueRef};

/// An app's database, shared between the phone and the templates rendering its screens.
pub type SharedDb = Arc<Mutex<Connection>>;

/// A SQLite value as a template value.
pub fn to_template(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::from(()),
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => Value::from(f),
        ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::from_bytes(b.to_vec()),
    }
}

/// A template value as a SQLite parameter. Text stays text: what an agent typed is bound as it is.
pub fn to_sql(value: &Value) -> SqlValue {
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => SqlValue::Null,
        ValueKind::Bool => SqlValue::Integer(i64::from(value.is_true())),
        ValueKind::Number => match value.as_i64() {
            Some(i) => SqlValue::Integer(i),
            None => f64::try_from(value.clone()).map(SqlValue::Real).unwrap_or(SqlValue::Null),
        },
        ValueKind::String => SqlValue::Text(value.as_str().unwrap_or_default().to_string()),
        ValueKind::Bytes => SqlValue::Blob(value.as_bytes().map(<[u8]>::to_vec).unwrap_or_default()),
        _ => SqlValue::Text(value.to_string()),
    }
}

/// A template value as JSON (for app events).
pub fn to_json(value: &Value) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// Runs a read-only query, binding `:name` parameters from `lookup`.
pub fn query_rows(
    conn: &Connection,
    sql: &str,
    lookup: &dyn Fn(&str) -> Option<Value>,
) -> Result<Vec<Value>, String> {
    let mut stmt = conn.prepare_cached(sql).map_err(|e| format!("SQL error in `{sql}`: {e}"))?;
    if !stmt.readonly() {
        return Err(format!("`{sql}` changes state: screens only read, actions change"));
    }
    bind(&mut stmt, sql, lookup)?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| format!("SQL error in `{sql}`: {e}"))? {
        let mut map = BTreeMap::new();
        for (i, name) in names.iter().enumerate() {
            let v = row.get_ref(i).map_err(|e| e.to_string())?;
            map.insert(name.clone(), to_template(v));
        }
        out.push(Value::from(map));
    }
    Ok(out)
}

/// Binds every parameter of `stmt` by name.
pub fn bind(
    stmt: &mut rusqlite::Statement<'_>,
    sql: &str,
    lookup: &dyn Fn(&str) -> Option<Value>,
) -> Result<(), String> {
    for i in 1..=stmt.parameter_count() {
        let Some(name) = stmt.parameter_name(i).map(str::to_string) else {
            return Err(format!("`{sql}` uses a positional parameter; name it (`:name`)"));
        };
        let key = name.trim_start_matches([':', '@', '$']);
        let value = lookup(key).ok_or_else(|| format!("parameter `{name}` of `{sql}` has no value here"))?;
        stmt.raw_bind_parameter(i, to_sql(&value)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// What a rendering screen reads: its app's database, the databases it may read, its indexes.
#[derive(Debug)]
pub struct ScreenData {
    /// The app's own database.
    pub own: SharedDb,
    /// Other apps' databases this app may read, by app id.
    pub reads: BTreeMap<String, SharedDb>,
    /// Content indexes by name.
    pub indexes: BTreeMap<String, Arc<ContentIndex>>,
}

impl DataSource for ScreenData {
    fn query(&self, app: Option<&str>, sql: &str, params: &[(String, Value)]) -> Result<Vec<Value>, String> {
        let db = match app {
            None => &self.own,
            Some(id) => self.reads.get(id).ok_or_else(|| {
                format!("query_app(`{id}`): this app may not read `{id}` (list it in `reads` in app.toml)")
            })?,
        };
        let conn = db.lock().map_err(|_| "database lock poisoned".to_string())?;
        let lookup = |name: &str| params.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        query_rows(&conn, sql, &lookup)
    }

    fn search(&self, index: &str, text: &str, limit: usize) -> Result<Vec<Value>, String> {
        let idx =
            self.indexes.get(index).ok_or_else(|| format!("search: there is no content index `{index}`"))?;
        Ok(idx
            .search(text, limit)
            .into_iter()
            .map(|hit| {
                let mut doc: serde_json::Map<String, serde_json::Value> = (*hit.document).clone();
                doc.insert("score".into(), serde_json::json!(hit.score));
                Value::from(Serde(doc))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_stays_text_and_numbers_stay_numbers() {
        assert_eq!(to_sql(&Value::from("007")), SqlValue::Text("007".into()));
        assert_eq!(to_sql(&Value::from(7)), SqlValue::Integer(7));
        assert_eq!(to_sql(&Value::from(1.5)), SqlValue::Real(1.5));
        assert_eq!(to_sql(&Value::from(true)), SqlValue::Integer(1));
        assert_eq!(to_sql(&Value::from(())), SqlValue::Null);
    }

    #[test]
    fn queries_bind_by_name_and_refuse_writes() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('x'), ('y');").unwrap();
        let lookup = |n: &str| (n == "a").then(|| Value::from("y"));
        let rows = query_rows(&conn, "SELECT a FROM t WHERE a = :a", &lookup).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].get_attr("a").unwrap().as_str(), Some("y"));
        let e = query_rows(&conn, "DELETE FROM t", &lookup).unwrap_err();
        assert!(e.contains("changes state"), "{e}");
        let e = query_rows(&conn, "SELECT :b", &lookup).unwrap_err();
        assert!(e.contains(":b"), "{e}");
    }
}
