//! The two databases behind one store: the embedded SQLite (one machine) and PostgreSQL (a team). Statements are
//! written once, in the SQL both accept, with `?N` placeholders (rewritten to `$N` for PostgreSQL); the schema is
//! one set of migrations (`migrations/`, run by refinery) for both.

use std::borrow::Cow;

use crate::{Result, StoreError};

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// A parameter or a column value: text or a 64-bit integer, either of which may be NULL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    Text(Option<String>),
    Int(Option<i64>),
}

impl From<&str> for Val {
    fn from(v: &str) -> Self {
        Self::Text(Some(v.to_owned()))
    }
}
impl From<String> for Val {
    fn from(v: String) -> Self {
        Self::Text(Some(v))
    }
}
impl From<&String> for Val {
    fn from(v: &String) -> Self {
        Self::Text(Some(v.clone()))
    }
}
impl From<Option<String>> for Val {
    fn from(v: Option<String>) -> Self {
        Self::Text(v)
    }
}
impl From<Option<&str>> for Val {
    fn from(v: Option<&str>) -> Self {
        Self::Text(v.map(str::to_owned))
    }
}
impl From<i64> for Val {
    fn from(v: i64) -> Self {
        Self::Int(Some(v))
    }
}

/// One row of a result, by column index.
#[derive(Debug, Clone)]
pub struct Row(Vec<Val>);

impl Row {
    pub fn text(&self, i: usize) -> Result<String> {
        self.opt_text(i)?
            .ok_or_else(|| StoreError::Database(format!("column {i} is NULL")))
    }

    pub fn opt_text(&self, i: usize) -> Result<Option<String>> {
        match self.0.get(i) {
            Some(Val::Text(t)) => Ok(t.clone()),
            Some(Val::Int(n)) => Ok(n.map(|n| n.to_string())),
            None => Err(StoreError::Database(format!("no column {i}"))),
        }
    }

    pub fn int(&self, i: usize) -> Result<i64> {
        match self.0.get(i) {
            Some(Val::Int(Some(n))) => Ok(*n),
            Some(Val::Text(Some(t))) => t
                .parse()
                .map_err(|_| StoreError::Database(format!("column {i} is not a number"))),
            _ => Err(StoreError::Database(format!("column {i} is not a number"))),
        }
    }
}

pub enum Db {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
    /// A store's connection after it went back to the pool.
    Closed,
}

/// Idle PostgreSQL connections by URL: a server opens a store per request, and a new connection costs milliseconds.
static POOL: std::sync::Mutex<Vec<(String, Box<postgres::Client>)>> = std::sync::Mutex::new(Vec::new());

/// The most idle connections kept.
const POOL_IDLE: usize = 16;

/// An idle connection to `url` that still answers, if the pool has one (a connection the server dropped while it
/// was idle, a database restart for one, is only seen by using it: an empty query, one round trip).
pub fn pooled(url: &str) -> Option<Box<postgres::Client>> {
    loop {
        let mut client = {
            let mut pool = POOL.lock().ok()?;
            let i = pool.iter().position(|(u, _)| u == url)?;
            pool.swap_remove(i).1
        };
        if !client.is_closed() && client.is_valid(std::time::Duration::from_secs(2)).is_ok() {
            return Some(client);
        }
    }
}

/// Keeps a connection for the next store of `url` (unless it broke or the pool is full).
pub fn give_back(url: &str, client: Box<postgres::Client>) {
    if client.is_closed() {
        return;
    }
    if let Ok(mut pool) = POOL.lock() {
        if pool.len() < POOL_IDLE {
            pool.push((url.to_owned(), client));
        }
    }
}

fn closed() -> StoreError {
    StoreError::Database("the store's connection was closed".into())
}

/// `?N` placeholders as PostgreSQL writes them (`$N`), outside quoted strings.
fn dialect<'a>(db: &Db, sql: &'a str) -> Cow<'a, str> {
    match db {
        Db::Sqlite(_) | Db::Closed => Cow::Borrowed(sql),
        Db::Postgres(_) => {
            let mut out = String::with_capacity(sql.len());
            let mut quoted = false;
            for c in sql.chars() {
                match c {
                    '\'' => {
                        quoted = !quoted;
                        out.push(c);
                    }
                    '?' if !quoted => out.push('$'),
                    _ => out.push(c),
                }
            }
            Cow::Owned(out)
        }
    }
}

fn pg_params(params: &[Val]) -> Vec<Box<dyn postgres::types::ToSql + Sync>> {
    params
        .iter()
        .map(|p| -> Box<dyn postgres::types::ToSql + Sync> {
            match p {
                Val::Text(t) => Box::new(t.clone()),
                Val::Int(n) => Box::new(*n),
            }
        })
        .collect()
}

fn sqlite_params(params: &[Val]) -> Vec<rusqlite::types::Value> {
    params
        .iter()
        .map(|p| match p {
            Val::Text(Some(t)) => rusqlite::types::Value::Text(t.clone()),
            Val::Int(Some(n)) => rusqlite::types::Value::Integer(*n),
            Val::Text(None) | Val::Int(None) => rusqlite::types::Value::Null,
        })
        .collect()
}

fn pg_row(row: &postgres::Row) -> Result<Row> {
    use postgres::types::Type;
    let mut out = Vec::with_capacity(row.len());
    for (i, col) in row.columns().iter().enumerate() {
        let v = match *col.type_() {
            Type::INT8 => Val::Int(row.try_get::<_, Option<i64>>(i)?),
            Type::INT4 => Val::Int(row.try_get::<_, Option<i32>>(i)?.map(i64::from)),
            Type::INT2 => Val::Int(row.try_get::<_, Option<i16>>(i)?.map(i64::from)),
            Type::BOOL => Val::Int(row.try_get::<_, Option<bool>>(i)?.map(i64::from)),
            _ => Val::Text(row.try_get::<_, Option<String>>(i)?),
        };
        out.push(v);
    }
    Ok(Row(out))
}

fn sqlite_row(row: &rusqlite::Row<'_>, n: usize) -> rusqlite::Result<Row> {
    use rusqlite::types::ValueRef;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(match row.get_ref(i)? {
            ValueRef::Null => Val::Text(None),
            ValueRef::Integer(v) => Val::Int(Some(v)),
            ValueRef::Real(v) => Val::Text(Some(v.to_string())),
            ValueRef::Text(t) | ValueRef::Blob(t) => Val::Text(Some(String::from_utf8_lossy(t).into_owned())),
        });
    }
    Ok(Row(out))
}

impl Db {
    /// Brings the schema to the newest migration.
    pub fn migrate(&mut self) -> Result<()> {
        let runner = embedded::migrations::runner();
        match self {
            Db::Sqlite(c) => runner.run(c).map(|_| ()),
            Db::Postgres(c) => runner.run(c.as_mut()).map(|_| ()),
            Db::Closed => return Err(closed()),
        }
        .map_err(|e| StoreError::Database(format!("migrating the schema: {e}")))
    }

    pub fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64> {
        let sql = dialect(self, sql).into_owned();
        match self {
            Db::Sqlite(c) => {
                let p = sqlite_params(params);
                Ok(c.execute(&sql, rusqlite::params_from_iter(p))? as u64)
            }
            Db::Postgres(c) => {
                let p = pg_params(params);
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = p.iter().map(AsRef::as_ref).collect();
                Ok(c.execute(sql.as_str(), &refs)?)
            }
            Db::Closed => Err(closed()),
        }
    }

    pub fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Row>> {
        let sql = dialect(self, sql).into_owned();
        match self {
            Db::Sqlite(c) => {
                let mut stmt = c.prepare(&sql)?;
                let n = stmt.column_count();
                let rows = stmt
                    .query_map(rusqlite::params_from_iter(sqlite_params(params)), |r| {
                        sqlite_row(r, n)
                    })?
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Ok(rows)
            }
            Db::Postgres(c) => {
                let p = pg_params(params);
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = p.iter().map(AsRef::as_ref).collect();
                c.query(sql.as_str(), &refs)?.iter().map(pg_row).collect()
            }
            Db::Closed => Err(closed()),
        }
    }

    /// The first row, if any.
    pub fn query_one(&mut self, sql: &str, params: &[Val]) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Runs statements in one transaction; the number of rows each changed.
    pub fn batch(&mut self, statements: &[(&str, Vec<Val>)]) -> Result<Vec<u64>> {
        let statements: Vec<(String, &Vec<Val>)> = statements
            .iter()
            .map(|(sql, p)| (dialect(self, sql).into_owned(), p))
            .collect();
        let mut counts = Vec::with_capacity(statements.len());
        match self {
            Db::Sqlite(c) => {
                let tx = c.transaction()?;
                for (sql, p) in &statements {
                    counts.push(tx.execute(sql, rusqlite::params_from_iter(sqlite_params(p)))? as u64);
                }
                tx.commit()?;
            }
            Db::Postgres(c) => {
                let mut tx = c.transaction()?;
                for (sql, p) in &statements {
                    let p = pg_params(p);
                    let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
                        p.iter().map(AsRef::as_ref).collect();
                    counts.push(tx.execute(sql.as_str(), &refs)?);
                }
                tx.commit()?;
            }
            Db::Closed => return Err(closed()),
        }
        Ok(counts)
    }
}
