//! `mysqlleader_rows`: the rows of one statement run by `mysqlleader_txn_query`, fetched whole
//! and kept here until `mysqlleader_rows_free`.
//!
//! Every value is kept as bytes, as the text protocol sends it (the binary protocol's typed
//! values, sent for a statement with parameters, are converted to the same text): numbers as
//! their decimal text, `DATETIME`/`TIMESTAMP` as `YYYY-MM-DD HH:MM:SS[.ffffff]` (as many
//! fractional digits as the column declares), `DATE` as `YYYY-MM-DD`, `TIME` as
//! `[-]HH:MM:SS[.ffffff]`, strings and binary data as they are. SQL NULL is kept apart from
//! the empty string. Each value is followed by a NUL byte that is not part of it, so text can be
//! used as a C string directly (binary data may hold NUL bytes of its own: use the length).

use std::ffi::{c_char, CString};

use mysql_async::consts::{ColumnType, ColumnType as T};
use mysql_async::{Column, Value};

use super::result::{boundary, boundary_void, FfiResult, Failure};
use super::strings::{arg_out, arg_ref, write_out};

/// The character set number that marks binary data (`BINARY`, `VARBINARY`, `BLOB`).
const BINARY_CHARSET: u16 = 63;

/// What a column holds, from the type the server declares for it: enough to turn a value's
/// text into the caller's type without parsing the SQL. The numbers are stable.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mysqlleader_column_kind {
    /// Character data (`CHAR`, `VARCHAR`, `TEXT`, `ENUM`, `SET`, `JSON`), in the connection's
    /// character set (utf8mb4); also a column of NULL literals.
    MYSQLLEADER_COLUMN_TEXT = 0,
    /// Bytes (`BINARY`, `VARBINARY`, `BLOB`, `BIT`, `GEOMETRY`, and text in the binary
    /// character set): any byte may occur, NUL included.
    MYSQLLEADER_COLUMN_BINARY = 1,
    /// An integer (`TINYINT` to `BIGINT`, signed or unsigned, `YEAR`): decimal text.
    MYSQLLEADER_COLUMN_INTEGER = 2,
    /// An exact decimal (`DECIMAL`): decimal text, e.g. `-12.500`.
    MYSQLLEADER_COLUMN_DECIMAL = 3,
    /// A floating-point number (`FLOAT`, `DOUBLE`): decimal text.
    MYSQLLEADER_COLUMN_FLOAT = 4,
    /// `DATETIME` or `TIMESTAMP`: `YYYY-MM-DD HH:MM:SS[.ffffff]`.
    MYSQLLEADER_COLUMN_DATETIME = 5,
    /// `DATE`: `YYYY-MM-DD`.
    MYSQLLEADER_COLUMN_DATE = 6,
    /// `TIME`: `[-]HH:MM:SS[.ffffff]` (the hours may exceed 24).
    MYSQLLEADER_COLUMN_TIME = 7,
}

use mysqlleader_column_kind::*;

/// One column: its name (with a NUL after it) and kind.
struct RowsColumn {
    name: CString,
    kind: mysqlleader_column_kind,
}

/// The rows of one statement, fetched whole; made by `mysqlleader_txn_query`, released by
/// `mysqlleader_rows_free`. Read-only: it may be read from several threads at once.
pub struct mysqlleader_rows {
    columns: Vec<RowsColumn>,
    /// Row-major: `values[row * columns.len() + column]`; `None` is SQL NULL; `Some` holds the
    /// value's bytes and one NUL after them.
    values: Vec<Option<Vec<u8>>>,
    row_count: usize,
    affected_rows: u64,
    last_insert_id: u64,
}

impl mysqlleader_rows {
    /// The result of one statement: its first result set's columns and rows (a statement without
    /// a result set has none), the rows it changed and the id it generated (0 for none).
    pub(crate) fn new(columns: &[Column], rows: Vec<Vec<Value>>, affected_rows: u64, last_insert_id: u64) -> Self {
        let kept: Vec<RowsColumn> = columns
            .iter()
            .map(|c| RowsColumn {
                // A NUL inside a name cannot be passed as a C string: it ends it there.
                name: CString::new(c.name_ref().split(|b| *b == 0).next().unwrap_or_default()).unwrap_or_default(),
                kind: column_kind(c),
            })
            .collect();
        let row_count = rows.len();
        let mut values = Vec::with_capacity(row_count * kept.len());
        for row in rows {
            for (i, value) in row.into_iter().enumerate() {
                values.push(columns.get(i).and_then(|c| value_text(c, value)).map(|mut bytes| {
                    bytes.push(0);
                    bytes
                }));
            }
        }
        mysqlleader_rows { columns: kept, values, row_count, affected_rows, last_insert_id }
    }

    fn column(&self, column: usize) -> FfiResult<&RowsColumn> {
        self.columns.get(column).ok_or_else(|| {
            Failure::invalid("column", format!("column is {column}, but the rows have {} columns", self.columns.len()))
        })
    }
}

/// The kind of a column, from its declared type and character set.
fn column_kind(column: &Column) -> mysqlleader_column_kind {
    match column.column_type() {
        T::MYSQL_TYPE_TINY | T::MYSQL_TYPE_SHORT | T::MYSQL_TYPE_INT24 | T::MYSQL_TYPE_LONG | T::MYSQL_TYPE_LONGLONG
        | T::MYSQL_TYPE_YEAR => MYSQLLEADER_COLUMN_INTEGER,
        T::MYSQL_TYPE_DECIMAL | T::MYSQL_TYPE_NEWDECIMAL => MYSQLLEADER_COLUMN_DECIMAL,
        T::MYSQL_TYPE_FLOAT | T::MYSQL_TYPE_DOUBLE => MYSQLLEADER_COLUMN_FLOAT,
        T::MYSQL_TYPE_DATETIME | T::MYSQL_TYPE_DATETIME2 | T::MYSQL_TYPE_TIMESTAMP | T::MYSQL_TYPE_TIMESTAMP2 => {
            MYSQLLEADER_COLUMN_DATETIME
        }
        T::MYSQL_TYPE_DATE | T::MYSQL_TYPE_NEWDATE => MYSQLLEADER_COLUMN_DATE,
        T::MYSQL_TYPE_TIME | T::MYSQL_TYPE_TIME2 => MYSQLLEADER_COLUMN_TIME,
        T::MYSQL_TYPE_BIT | T::MYSQL_TYPE_GEOMETRY => MYSQLLEADER_COLUMN_BINARY,
        T::MYSQL_TYPE_JSON | T::MYSQL_TYPE_NULL => MYSQLLEADER_COLUMN_TEXT,
        _ if column.character_set() == BINARY_CHARSET => MYSQLLEADER_COLUMN_BINARY,
        _ => MYSQLLEADER_COLUMN_TEXT,
    }
}

/// A value as bytes in the text protocol's form; `None` for SQL NULL.
fn value_text(column: &Column, value: Value) -> Option<Vec<u8>> {
    // Fractional digits the column declares (the text protocol prints exactly these).
    let fraction = |micros: u32| -> String {
        let digits = usize::from(column.decimals());
        if digits == 0 || digits > 6 {
            String::new()
        } else {
            format!(".{:06}", micros)[..=digits].to_string()
        }
    };
    Some(match value {
        Value::NULL => return None,
        Value::Bytes(bytes) => bytes,
        Value::Int(i) => i.to_string().into_bytes(),
        Value::UInt(u) => u.to_string().into_bytes(),
        Value::Float(f) => f.to_string().into_bytes(),
        Value::Double(d) => d.to_string().into_bytes(),
        Value::Date(y, mo, d, h, mi, s, us) => {
            if matches!(column.column_type(), ColumnType::MYSQL_TYPE_DATE | ColumnType::MYSQL_TYPE_NEWDATE) {
                format!("{y:04}-{mo:02}-{d:02}").into_bytes()
            } else {
                format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}{}", fraction(us)).into_bytes()
            }
        }
        Value::Time(negative, days, h, mi, s, us) => {
            let hours = u64::from(days) * 24 + u64::from(h);
            format!("{}{hours:02}:{mi:02}:{s:02}{}", if negative { "-" } else { "" }, fraction(us)).into_bytes()
        }
    })
}

/// How many columns the rows have (0 for a statement without a result set, such as an
/// `INSERT`).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_rows_column_count(rows: *const mysqlleader_rows, count_out: *mut usize) -> super::mysqlleader_result {
    boundary(|| {
        // SAFETY (every unsafe block of this module): pointers follow the conventions.
        let rows = unsafe { arg_ref(rows, "rows") }?;
        let count_out = arg_out(count_out, "count_out")?;
        unsafe { write_out(count_out, rows.columns.len()) };
        Ok(())
    })
}

/// How many rows there are.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_rows_row_count(rows: *const mysqlleader_rows, count_out: *mut usize) -> super::mysqlleader_result {
    boundary(|| {
        let rows = unsafe { arg_ref(rows, "rows") }?;
        let count_out = arg_out(count_out, "count_out")?;
        unsafe { write_out(count_out, rows.row_count) };
        Ok(())
    })
}

/// The name of column `column` (from 0), as the statement labels it (`AS` included):
/// `*name_out` points to a NUL-terminated UTF-8 string owned by `rows`, valid until
/// `mysqlleader_rows_free`. `MYSQLLEADER_INVALID_ARGUMENT` (parameter `column`) when out of range.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_rows_column_name(
    rows: *const mysqlleader_rows,
    column: usize,
    name_out: *mut *const c_char,
) -> super::mysqlleader_result {
    boundary(|| {
        let rows = unsafe { arg_ref(rows, "rows") }?;
        let name_out = arg_out(name_out, "name_out")?;
        let name = rows.column(column)?.name.as_ptr();
        unsafe { write_out(name_out, name) };
        Ok(())
    })
}

/// What column `column` (from 0) holds, from the type the server declares for it.
/// `MYSQLLEADER_INVALID_ARGUMENT` (parameter `column`) when out of range.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_rows_column_kind(
    rows: *const mysqlleader_rows,
    column: usize,
    kind_out: *mut mysqlleader_column_kind,
) -> super::mysqlleader_result {
    boundary(|| {
        let rows = unsafe { arg_ref(rows, "rows") }?;
        let kind_out = arg_out(kind_out, "kind_out")?;
        let kind = rows.column(column)?.kind;
        unsafe { write_out(kind_out, kind) };
        Ok(())
    })
}

/// The value at `row`, `column` (both from 0). For SQL NULL, `*is_null_out` is true,
/// `*data_out` NULL and `*len_out` 0. Otherwise `*is_null_out` is false and `*data_out` points
/// to the value's `*len_out` bytes (an empty string: a valid pointer and 0), owned by `rows` and
/// valid until `mysqlleader_rows_free`; a NUL byte follows them (not counted in `*len_out`), so
/// text may be read as a C string, but binary data may hold NUL bytes of its own. Values are
/// text as the server sends it in the text protocol (see `mysqlleader_txn_query`).
/// `MYSQLLEADER_INVALID_ARGUMENT` (parameter `row` or `column`) when out of range.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_rows_value(
    rows: *const mysqlleader_rows,
    row: usize,
    column: usize,
    data_out: *mut *const c_char,
    len_out: *mut usize,
    is_null_out: *mut bool,
) -> super::mysqlleader_result {
    boundary(|| {
        let rows = unsafe { arg_ref(rows, "rows") }?;
        let data_out = arg_out(data_out, "data_out")?;
        let len_out = arg_out(len_out, "len_out")?;
        let is_null_out = arg_out(is_null_out, "is_null_out")?;
        if row >= rows.row_count {
            return Err(Failure::invalid("row", format!("row is {row}, but there are {} rows", rows.row_count)));
        }
        rows.column(column)?;
        let (data, len, is_null) = match &rows.values[row * rows.columns.len() + column] {
            None => (std::ptr::null(), 0, true),
            Some(bytes) => (bytes.as_ptr().cast::<c_char>(), bytes.len() - 1, false),
        };
        unsafe {
            write_out(data_out, data);
            write_out(len_out, len);
            write_out(is_null_out, is_null);
        }
        Ok(())
    })
}

/// The rows the statement changed (as `mysqlleader_txn_execute` reports them; for a `SELECT`,
/// what the server reports, usually 0).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_rows_affected_rows(rows: *const mysqlleader_rows, affected_rows_out: *mut u64) -> super::mysqlleader_result {
    boundary(|| {
        let rows = unsafe { arg_ref(rows, "rows") }?;
        let out = arg_out(affected_rows_out, "affected_rows_out")?;
        unsafe { write_out(out, rows.affected_rows) };
        Ok(())
    })
}

/// The `AUTO_INCREMENT` id the statement generated (the first, for several rows), or 0 when it
/// generated none.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_rows_last_insert_id(rows: *const mysqlleader_rows, last_insert_id_out: *mut u64) -> super::mysqlleader_result {
    boundary(|| {
        let rows = unsafe { arg_ref(rows, "rows") }?;
        let out = arg_out(last_insert_id_out, "last_insert_id_out")?;
        unsafe { write_out(out, rows.last_insert_id) };
        Ok(())
    })
}

/// Releases the rows and every pointer read from them. `mysqlleader_rows_free(NULL)` does
/// nothing.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_rows_free(rows: *mut mysqlleader_rows) {
    if rows.is_null() {
        return;
    }
    boundary_void(|| {
        // SAFETY: `rows` came from `mysqlleader_txn_query` and is freed once (the conventions).
        drop(unsafe { Box::from_raw(rows) });
    });
}
