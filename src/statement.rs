//! What a statement of the library's own transactions may be: exactly one statement, and not
//! one that ends (or begins) a transaction. The library's transactions (the C ABI's
//! `mysqlleader_txn`, and every binding's `Transaction` over it) send the caller's text as it
//! is; a server session that accepts several statements per query would otherwise run
//! `INSERT ...; COMMIT; INSERT ...` as three, and everything after the `COMMIT` outside the
//! transaction and its fence, with the error (if any) only after the fact.
//!
//! The check is lexical and cheap: it skips quoted strings, quoted identifiers and comments
//! (running the code inside MySQL's executable comments `/*! ... */`), splits the text at the
//! remaining `;`, and looks at the first words of the one statement. What it cannot tell
//! cheaply (a `CALL` of a procedure that commits) is caught after the fact by the fenced
//! transaction's `@@in_transaction` check (`src/ffi/txn.rs`).

use crate::error::{Error, Result};

/// The first word of a statement that ends or begins a transaction explicitly.
const ENDS_TRANSACTION: &[&str] = &["COMMIT", "ROLLBACK", "BEGIN", "START", "XA"];

/// The first word of a statement that commits implicitly (MySQL and MariaDB: "Statements That
/// Cause an Implicit Commit"). `CREATE TEMPORARY` and `DROP TEMPORARY` are let through: they do
/// not commit.
const COMMITS_IMPLICITLY: &[&str] = &[
    "ALTER", "CREATE", "DROP", "RENAME", "TRUNCATE", "GRANT", "REVOKE", "LOCK", "UNLOCK", "FLUSH", "ANALYZE",
    "OPTIMIZE", "REPAIR", "CHECK", "CACHE", "RESET", "INSTALL", "UNINSTALL", "CHANGE", "STOP", "PURGE",
];

/// Checks `sql`, the parameter `parameter`, as one statement of the library's own transaction:
/// a [`Error::Usage`] naming `parameter` for text with more than one statement, or for a
/// statement that ends the transaction (COMMIT, ROLLBACK, START TRANSACTION, BEGIN,
/// SET autocommit, XA); in a `fenced` transaction also for DDL and the other statements that
/// commit implicitly. (In a plain transaction such a statement commits what came before it, as
/// with any driver; the examples create their tables that way.)
pub fn check_transaction_statement(parameter: &str, sql: &str, fenced: bool) -> Result<()> {
    let statements = split(sql);
    let mut real = statements.iter().filter(|words| !words.is_empty());
    let Some(words) = real.next() else {
        return Err(Error::usage_of(parameter, format!("mysqlleader: {parameter} holds no statement")));
    };
    if real.next().is_some() {
        return Err(Error::usage_of(
            parameter,
            format!(
                "mysqlleader: {parameter} holds more than one statement (text after a `;`): a transaction of the library \
                 runs one statement per call, so that none can end it and run the rest outside it (and its fence); \
                 make one call per statement"
            ),
        ));
    }
    let first = words[0].to_ascii_uppercase();
    let second = words.get(1).map(|w| w.to_ascii_uppercase()).unwrap_or_default();
    let temporary = matches!(first.as_str(), "CREATE" | "DROP") && second == "TEMPORARY";
    let load_index = first == "LOAD" && second == "INDEX";
    let autocommit = first == "SET"
        && words.iter().any(|w| w.trim_start_matches('@').rsplit('.').next().is_some_and(|v| v.eq_ignore_ascii_case("autocommit")));
    let implicit = (COMMITS_IMPLICITLY.contains(&first.as_str()) && !temporary) || load_index;
    if ENDS_TRANSACTION.contains(&first.as_str()) || (fenced && implicit) || autocommit {
        let what = if autocommit { "SET autocommit".to_string() } else { first };
        return Err(Error::usage_of(
            parameter,
            format!(
                "mysqlleader: {parameter} is a {what} statement, which ends the transaction (explicitly or by an implicit \
                 commit): the statements after it would run outside the transaction and its fence; end a transaction \
                 of the library with its own commit or rollback, and run such statements outside it"
            ),
        ));
    }
    Ok(())
}

/// The statements of `sql`, each as its words outside strings, quoted identifiers and comments.
fn split(sql: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = sql.chars().collect();
    let mut statements = vec![Vec::new()];
    let mut word = String::new();
    let mut i = 0;
    // Adds a token to the statement being read (the last one; the list starts with one).
    fn push(statements: &mut [Vec<String>], token: String) {
        if let Some(current) = statements.last_mut() {
            current.push(token);
        }
    }
    let end_word = |word: &mut String, statements: &mut Vec<Vec<String>>| {
        if !word.is_empty() {
            push(statements, std::mem::take(word));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\'' | '"' | '`' => {
                end_word(&mut word, &mut statements);
                // A quoted string or identifier: a quote doubled, or (strings) a backslash, escapes.
                push(&mut statements, c.to_string());
                i += 1;
                while i < chars.len() {
                    if chars[i] == '\\' && c != '`' {
                        i += 2;
                    } else if chars[i] == c && chars.get(i + 1) == Some(&c) {
                        i += 2;
                    } else if chars[i] == c {
                        break;
                    } else {
                        i += 1;
                    }
                }
            }
            '#' => {
                end_word(&mut word, &mut statements);
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '-' if next == Some('-') && chars.get(i + 2).is_none_or(|c| c.is_whitespace()) => {
                end_word(&mut word, &mut statements);
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                end_word(&mut word, &mut statements);
                let executable = matches!(chars.get(i + 2), Some('!')) || (chars.get(i + 2) == Some(&'M') && chars.get(i + 3) == Some(&'!'));
                if executable {
                    // `/*!50100 code */`, `/*M!100100 code */`: the code runs; skip only the marker.
                    i += 2;
                    while i < chars.len() && (chars[i] == '!' || chars[i] == 'M' || chars[i].is_ascii_digit()) {
                        i += 1;
                    }
                    continue;
                }
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 1;
            }
            '*' if next == Some('/') => {
                // The end of an executable comment.
                end_word(&mut word, &mut statements);
                i += 1;
            }
            ';' => {
                end_word(&mut word, &mut statements);
                statements.push(Vec::new());
            }
            c if c.is_alphanumeric() || matches!(c, '_' | '@' | '.' | '$') => word.push(c),
            _ => {
                end_word(&mut word, &mut statements);
                if !c.is_whitespace() {
                    push(&mut statements, c.to_string());
                }
            }
        }
        i += 1;
    }
    end_word(&mut word, &mut statements);
    statements
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn refused(sql: &str) -> bool {
        let plain = check_transaction_statement("sql", sql, false).is_err();
        let fenced = match check_transaction_statement("sql", sql, true) {
            Ok(()) => false,
            Err(e) => {
                assert_eq!((e.kind(), e.parameter(), e.is_transient()), (ErrorKind::Usage, Some("sql"), false), "{sql}: {e}");
                true
            }
        };
        // A plain transaction refuses the same, except DDL.
        assert_eq!(plain, fenced && !is_ddl(sql), "{sql}: plain {plain}, fenced {fenced}");
        fenced
    }

    fn is_ddl(sql: &str) -> bool {
        let first = split(sql).into_iter().flatten().next().unwrap_or_default().to_ascii_uppercase();
        COMMITS_IMPLICITLY.contains(&first.as_str())
    }

    #[test]
    fn a_plain_transaction_may_run_ddl_a_fenced_one_may_not() {
        assert!(check_transaction_statement("sql", "CREATE TABLE IF NOT EXISTS t (a INT)", false).is_ok());
        assert!(check_transaction_statement("sql", "CREATE TABLE IF NOT EXISTS t (a INT)", true).is_err());
        assert!(check_transaction_statement("sql", "CREATE TABLE t (a INT); INSERT INTO t VALUES (1)", false).is_err());
        assert!(check_transaction_statement("sql", "COMMIT", false).is_err());
    }

    #[test]
    fn one_statement_that_keeps_the_transaction_open_passes() {
        for sql in [
            "INSERT INTO t VALUES (1)",
            "INSERT INTO t VALUES (1);",
            "INSERT INTO t VALUES (1); -- done",
            "UPDATE t SET a = 'x; COMMIT; y' WHERE b = \"; DROP TABLE t\"",
            "UPDATE `we;ird` SET a = 1 /* ; COMMIT */",
            "INSERT INTO t VALUES ('it''s; fine'), ('back\\'slash; too')",
            "SELECT 1 # ; COMMIT",
            "DO SLEEP(0.1)",
            "CREATE TEMPORARY TABLE tmp (a INT)",
            "drop temporary table tmp",
            "SET @x = 1",
            "SET SESSION sql_mode = 'autocommit'",
            "CALL assert_leader('s', 'n', 1)",
            "  \n insert into t values (1)  ;  \n ",
        ] {
            assert!(!refused(sql), "refused: {sql}");
        }
    }

    #[test]
    fn several_statements_and_statements_that_end_the_transaction_are_refused() {
        for sql in [
            "INSERT INTO t VALUES (100); COMMIT; DO SLEEP(1.5); INSERT INTO t VALUES (101)",
            "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)",
            "INSERT INTO t VALUES (1);INSERT INTO t VALUES (2);",
            "COMMIT",
            "commit work",
            "ROLLBACK",
            "START TRANSACTION",
            "BEGIN",
            "SET autocommit = 1",
            "SET @@autocommit = 1",
            "set session autocommit=1",
            "SET @@session.autocommit = 0",
            "SET @x = 1, autocommit = 1",
            "CREATE TABLE t2 (a INT)",
            "ALTER TABLE t ADD COLUMN b INT",
            "DROP TABLE t",
            "TRUNCATE TABLE t",
            "LOCK TABLES t WRITE",
            "RENAME TABLE t TO t3",
            "GRANT SELECT ON db.* TO x",
            "/* note */ COMMIT",
            "/*!50000 COMMIT */",
            "INSERT INTO t VALUES (1) /*!; COMMIT */",
            "XA START 'x'",
            "",
            "  ;  ",
        ] {
            assert!(refused(sql), "passed: {sql:?}");
        }
    }
}
