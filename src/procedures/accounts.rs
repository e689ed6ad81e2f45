//! Accounts, roles and grants: the statements of `mysqlleader grant` and running them, what an
//! account holds beyond its role, and the check of every granted account (`migrate --verify`).

use mysql_async::prelude::{Query, WithParams};

use crate::error::{Error, Result};

use super::status::server_info;

/// An account as MySQL names it: `'user'@'host'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user: String,
    pub host: String,
}

impl Account {
    /// Reads `user`, `user@host` or `'user'@'host'` (the host defaults to `%`, any host).
    ///
    /// Only plain names are accepted — printable characters other than quotes, backticks and
    /// backslashes, 1 to 80 characters for the user and at most 255 for the host — so that the
    /// quoted name means the same under every `sql_mode` (with or without
    /// `NO_BACKSLASH_ESCAPES`) and no input can end the quoted string early.
    pub fn parse(text: &str) -> Result<Account> {
        let text = text.trim();
        let unquote = |part: &str| -> String {
            let p = part.trim();
            match (p.strip_prefix('\''), p.strip_prefix('"'), p.strip_prefix('`')) {
                (Some(rest), _, _) => rest.strip_suffix('\'').unwrap_or(rest).to_string(),
                (_, Some(rest), _) => rest.strip_suffix('"').unwrap_or(rest).to_string(),
                (_, _, Some(rest)) => rest.strip_suffix('`').unwrap_or(rest).to_string(),
                _ => p.to_string(),
            }
        };
        let (user, host) = match text.rfind('@') {
            Some(at) => (unquote(&text[..at]), unquote(&text[at + 1..])),
            None => (unquote(text), "%".to_string()),
        };
        let check = |what: &str, value: &str, max: usize, allow_empty: bool| -> Result<()> {
            if value.is_empty() && !allow_empty {
                return Err(Error::invalid("account", format!("the {what} name must not be empty")));
            }
            if value.chars().count() > max {
                return Err(Error::invalid("account", format!("the {what} name must be at most {max} characters")));
            }
            if let Some(c) = value.chars().find(|c| c.is_control() || matches!(c, '\'' | '"' | '`' | '\\')) {
                return Err(Error::invalid("account", format!(
                    "the {what} name must not contain {c:?} (quotes, backticks, backslashes and control characters are refused)")));
            }
            Ok(())
        };
        check("user", &user, 80, false)?;
        check("host", &host, 255, false)?;
        Ok(Account { user, host })
    }

    /// `'user'@'host'`, safe to put into a statement (see [`Account::parse`]).
    pub fn quoted(&self) -> String {
        format!("'{}'@'{}'", self.user, self.host)
    }
}

/// `database` quoted as an identifier (backticks doubled).
fn quote_identifier(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// What an account may do with the election (the contract's roles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// An application node: campaign, am_i_leader, current_leader, resign, assert_leader.
    App,
    /// An operator: everything `App` may, plus force_leader, reelect, set_expiry_event, and
    /// the routines that read for `mysqlleader status` and `event status`.
    Operator,
    /// A watcher: current_leader, and the routines that read for `status` and `event status`.
    Observer,
}

impl Role {
    pub fn parse(text: &str) -> Result<Role> {
        match text {
            "app" => Ok(Role::App),
            "operator" => Ok(Role::Operator),
            "observer" => Ok(Role::Observer),
            other => Err(Error::invalid("role", format!("role must be app, operator or observer (got {other:?})"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Role::App => "app",
            Role::Operator => "operator",
            Role::Observer => "observer",
        }
    }

    /// The procedures the role may call: the contract's, and for the roles that read
    /// (`status`, `watch`, `event status`) the three definer routines that read for them. No
    /// role gets SELECT on a table: SELECT would also allow SELECT ... FOR UPDATE, and one open
    /// transaction holding that lock would stop every renew.
    pub fn procedures(self) -> &'static [&'static str] {
        match self {
            Role::App => &["campaign", "am_i_leader", "current_leader", "resign", "assert_leader", "resign_to", "renew_seats",
                           "campaign_seats", "resign_seats", "grant_lease", "renew_lease", "take_seats", "release_lease", "watch_leases", "leader_election_wakeup_name", "leader_election_node_wakeup_name", "leader_election_campaign"],
            Role::Operator => &["campaign", "am_i_leader", "current_leader", "resign", "assert_leader", "resign_to", "renew_seats",
                                "campaign_seats", "resign_seats", "grant_lease", "renew_lease", "take_seats", "release_lease", "watch_leases", "leader_election_wakeup_name", "leader_election_node_wakeup_name", "leader_election_campaign", "force_leader", "reelect", "handover", "handover_seats", "set_expiry_event", "leader_election_prune_history",
                                "leader_election_status", "leader_election_recent_terms", "leader_election_event_status"],
            Role::Observer => &["current_leader", "leader_election_status", "leader_election_recent_terms",
                                "leader_election_event_status"],
        }
    }
}

/// Rejects a service pattern that is not a well-formed SQL `LIKE` pattern of 1 to 128
/// characters: no control characters, and a backslash only as the escape of `%`, `_` or `\`
/// (so `billing\_eu` matches `billing_eu` only). `%` and `_` are the wildcards. Patterns are
/// written into statements as hexadecimal literals, so quotes are harmless.
pub fn check_service_pattern(pattern: &str) -> Result<()> {
    crate::config::check_id("service", pattern)?;
    if let Some(c) = pattern.chars().find(|c| c.is_control()) {
        return Err(Error::invalid("service", format!("a service pattern must not contain {c:?} (control characters are refused)")));
    }
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\' && !matches!(chars.next(), Some('%' | '_' | '\\')) {
            return Err(Error::invalid("service", format!(
                "a backslash in a service pattern must escape %, _ or \\ (got {pattern:?}); for a literal name use --service-exact")));
        }
    }
    Ok(())
}

/// The `LIKE` pattern that matches exactly the service `name` and nothing else: `%`, `_` and
/// `\` escaped with `\` (`grant --service-exact`).
pub fn exact_service_pattern(name: &str) -> Result<String> {
    crate::config::check_id("service", name)?;
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    check_service_pattern(&out)?;
    Ok(out)
}

/// `X'...'`: text as a hexadecimal literal, safe in a statement whatever it holds and whatever
/// the session's sql_mode (NO_BACKSLASH_ESCAPES included).
fn hex_literal(text: &str) -> String {
    hex_bytes(text.as_bytes())
}

/// `X'...'`: bytes as a hexadecimal literal (a service id or a pattern read back as stored).
fn hex_bytes(bytes: &[u8]) -> String {
    format!("X'{}'", bytes.iter().map(|b| format!("{b:02X}")).collect::<String>())
}

/// `text` inside a `/* */` comment, for a reader of the statement (`*/` cannot end it early).
fn comment(text: &str) -> String {
    format!("/* {} */", text.replace("*/", "* /"))
}

/// The statements that give `account` exactly what `role` needs in `database`, and nothing
/// else, in an order that never leaves the account with more than it should have:
/// 1. with service patterns, the account's rows of `leader_election_access` (replacing any it
///    had) and its row of `leader_election_account`, which calls read (migration V14), in one
///    transaction that touches no seat: the limit is in effect before the role can be used, and
///    of two concurrent grants of one account the last to commit is the limit in effect;
/// 2. `GRANT EXECUTE ON PROCEDURE` per procedure of the role (never `EXECUTE ON db.*`, which
///    would also open the application's own routines; the roles that read get the routines
///    that read for them, never SELECT on a table);
/// 3. the record of those grants in `leader_election_grants`, from which an upgrade that has
///    to re-create a procedure (MySQL) grants them again.
/// The limit applies to the user name, whatever the host. Names and patterns go in as
/// hexadecimal literals, each followed by its text in a comment.
pub fn grant_sql(account: &Account, database: &str, role: Role, services: &[String]) -> Result<Vec<String>> {
    if database.is_empty() {
        return Err(Error::invalid("database", "the URL names no database (mysql://user:pass@host:port/DATABASE)"));
    }
    for pattern in services {
        check_service_pattern(pattern)?;
    }
    let db = quote_identifier(database);
    let user = format!("{} {}", hex_literal(&account.user), comment(&account.user));
    let mut out: Vec<String> = Vec::new();
    if !services.is_empty() {
        out.push("START TRANSACTION;".into());
        // The account's row first, locked (created empty when new; the call below writes it):
        // two grants of one account take turns here instead of deadlocking on the gaps of
        // leader_election_access.
        out.push(format!("INSERT INTO {db}.`leader_election_account` (account, patterns, changed_at, changed_by) \
                          VALUES ({user}, '[]', UTC_TIMESTAMP(6), USER()) ON DUPLICATE KEY UPDATE account = account;"));
        out.push(format!("DELETE FROM {db}.`leader_election_access` WHERE account = {user};"));
        for pattern in services {
            out.push(format!("INSERT INTO {db}.`leader_election_access` (account, service_pattern) VALUES ({user}, {} {});",
                             hex_literal(pattern), comment(pattern)));
        }
        out.push(format!("CALL {db}.`leader_election_compile_access`({user}, @mysqlleader_changed);"));
        out.push("COMMIT;".into());
    }
    out.extend(role_grants(database, role).iter().map(|g| format!("{g} TO {};", account.quoted())));
    let rows: Vec<String> = role
        .procedures()
        .iter()
        .map(|p| format!("({user}, {} {}, '{p}', UTC_TIMESTAMP(6), USER())", hex_literal(&account.host), comment(&account.host)))
        .collect();
    out.push(format!(
        "INSERT INTO {db}.`leader_election_grants` (user_name, host, routine, granted_at, granted_by) VALUES {} \
         ON DUPLICATE KEY UPDATE granted_at = UTC_TIMESTAMP(6), granted_by = USER();",
        rows.join(", ")
    ));
    Ok(out)
}

/// The role's grants in `database`, each `GRANT PRIVILEGE ON OBJECT` as SHOW GRANTS prints it
/// (without ` TO account`): EXECUTE per procedure.
fn role_grants(database: &str, role: Role) -> Vec<String> {
    let db = quote_identifier(database);
    role.procedures().iter().map(|p| format!("GRANT EXECUTE ON PROCEDURE {db}.{}", quote_identifier(p))).collect()
}

/// What an account holds in a schema besides its role's grants, read back after [`grant`] so
/// that `mysqlleader grant` says what is really in effect, not only what it just added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountAccess {
    /// The user's per-service patterns now in `leader_election_access` (empty: not limited).
    /// They belong to the user name, whatever the host, and stay until replaced by
    /// `grant --service` (`--service '%'` matches every service).
    pub service_patterns: Vec<String>,
    /// The account's grants that reach the schema beyond the role, each written
    /// `GRANT PRIVILEGES ON OBJECT` (without the account or any password hash): global
    /// privileges other than USAGE, privileges on the whole schema (`EXECUTE ON db.*` opens every
    /// routine, `force_leader` and the application's own included), and grants on the schema's
    /// objects that the role does not hold. MariaDB roles granted to the account are not
    /// expanded. `None` when this session may not read them (SHOW GRANTS for another account
    /// needs SELECT on the `mysql` schema).
    pub beyond_role: Option<Vec<String>>,
}

/// Reads [`AccountAccess`] of `account` in the connection's database, for `role`.
pub async fn account_access(pool: &mysql_async::Pool, account: &Account, role: Role) -> Result<AccountAccess> {
    let info = server_info(pool).await?;
    let database = info.database.unwrap_or_default();
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    // Names compared byte for byte, as the procedures compare them (V8).
    let service_patterns: Vec<String> = "SELECT service_pattern FROM leader_election_access \
         WHERE account = CAST(? AS BINARY) ORDER BY service_pattern"
        .with((account.user.as_str(),))
        .map(&mut conn, |pattern: String| pattern)
        .await
        .map_err(Error::from_mysql)?;
    // The account's name is checked by Account::parse (no quote can end the string early).
    let show = format!("SHOW GRANTS FOR {}", account.quoted());
    let beyond_role = match show.as_str().fetch::<String, _>(&mut conn).await {
        Ok(lines) => Some(grants_beyond_role(&lines, &database, role)),
        // 1044/1142: no SELECT on the mysql schema; 1227: a missing global privilege.
        Err(mysql_async::Error::Server(e)) if matches!(e.code, 1044 | 1142 | 1227) => None,
        Err(e) => return Err(Error::from_mysql(e)),
    };
    Ok(AccountAccess { service_patterns, beyond_role })
}

/// The lines of SHOW GRANTS that reach `database` beyond what [`grant_sql`] gives `role`, each
/// cut to `GRANT PRIVILEGES ON OBJECT` (see [`AccountAccess::beyond_role`]).
fn grants_beyond_role(lines: &[String], database: &str, role: Role) -> Vec<String> {
    let in_schema = format!("{}.", quote_identifier(database));
    let ours = role_grants(database, role);
    let mut out = Vec::new();
    for line in lines {
        // "GRANT <privileges> ON <object> TO <account> [IDENTIFIED BY ...] [WITH ...]"; lines
        // without " ON " grant a role or a proxy, not a privilege on an object.
        let Some(head) = line.find(" TO ").map(|to| &line[..to]) else { continue };
        let Some((privileges, object)) = head.strip_prefix("GRANT ").and_then(|h| h.split_once(" ON ")) else { continue };
        // A schema name may be printed with its wildcards escaped (`app\_db`).
        let object_name = object.replace('\\', "");
        // What reaches the election: a global privilege, one on the whole schema, one on an
        // election table, or EXECUTE on one of its routines. The application's own tables and
        // routines in the same schema are its business, not the role's.
        let name_in_schema = |o: &str| o.strip_prefix(in_schema.as_str()).map(|n| n.trim_matches('`').to_string());
        let reaches = match object_name.as_str() {
            "*.*" => privileges != "USAGE",
            o => match o.strip_prefix("PROCEDURE ").or_else(|| o.strip_prefix("FUNCTION ")) {
                Some(routine) => name_in_schema(routine)
                    .is_some_and(|n| crate::migrate::routines::ROUTINES.iter().any(|r| r.name == n)),
                None => name_in_schema(o).is_some_and(|n| {
                    n == "*" || n.starts_with("leader_election") || n.starts_with("mysqlleader_")
                }),
            },
        };
        if reaches && !ours.iter().any(|g| g == head) {
            out.push(head.to_string());
        }
    }
    out
}

/// One way a granted account differs from what its role gets from this release, and the
/// statement that mends it (`mysqlleader migrate --verify`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantDifference {
    pub account: Account,
    /// The role its EXECUTE grants make it (recorded ones first), when it has any.
    pub role: Option<Role>,
    /// What differs, in words.
    pub what: String,
    /// The statement, or the `mysqlleader grant` command, that mends it.
    pub mend: String,
}

/// What [`grant_differences`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantCheck {
    /// The grants were read: every difference (none: the grants are as this release gives them).
    Checked(Vec<GrantDifference>),
    /// The grants could not be read by this session, and why (with what would let it).
    NotChecked(String),
}

/// The role that `routines` (an account's EXECUTE grants, recorded or held) were granted for:
/// operator when any is the operator's alone (`force_leader`, ...), else app when any is an
/// application's call that an observer lacks, else observer when any is the observer's; `None`
/// when none is any role's.
pub fn role_of(routines: &[&str]) -> Option<Role> {
    let only = |role: Role, not_in: &[Role]| {
        routines.iter().any(|r| role.procedures().contains(r) && !not_in.iter().any(|o| o.procedures().contains(r)))
    };
    if only(Role::Operator, &[Role::App, Role::Observer]) {
        Some(Role::Operator)
    } else if only(Role::App, &[Role::Observer]) {
        Some(Role::App)
    } else if routines.iter().any(|r| Role::Observer.procedures().contains(r)) {
        Some(Role::Observer)
    } else {
        None
    }
}

/// The election's tables and views, by name (`leader_election...`, `mysqlleader_...`).
fn is_election_table(name: &str) -> bool {
    name.starts_with("leader_election") || name.starts_with("mysqlleader_")
}

/// A privilege of `mysql.tables_priv`'s `Table_priv` as GRANT and REVOKE write it.
fn privilege_word(set_value: &str) -> String {
    match set_value.to_ascii_uppercase().as_str() {
        "GRANT" => "GRANT OPTION".to_string(),
        "DELETE VERSIONING ROWS" => "DELETE HISTORY".to_string(),
        other => other.to_string(),
    }
}

/// Compares what every account the tool recorded (`leader_election_grants`), and every account
/// holding a grant on the election's procedures or tables, holds in the connection's database
/// with what its role gets from this release:
/// * EXECUTE on a procedure of its role that it lacks, or that is not recorded (an upgrade on
///   MySQL grants again only what is recorded): mended by `mysqlleader grant ... --apply`;
/// * EXECUTE on one of the election's procedures beyond its role, and a recorded one beyond it:
///   mended by the REVOKE (and the DELETE of the record);
/// * any table-level privilege on the election's tables and views (no role needs one; an older
///   release granted SELECT to operators and observers, and `SELECT ... FOR UPDATE` by such an
///   account stops every renew of the seats it reads): mended by the REVOKE;
/// * a recorded account that does not exist any more: mended by the DELETE of its record.
///
/// Reads `mysql.user`, `mysql.procs_priv` and `mysql.tables_priv`, which needs `SELECT` on the
/// `mysql` schema (the installer's privileges on the database alone do not allow it: then
/// [`GrantCheck::NotChecked`] says so). MariaDB roles granted to an account are not expanded.
pub async fn grant_differences(pool: &mysql_async::Pool) -> Result<GrantCheck> {
    use std::collections::{BTreeMap, BTreeSet};
    let info = server_info(pool).await?;
    let database = info.database.unwrap_or_default();
    let db = quote_identifier(&database);
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    let recorded: Vec<(String, String, String)> = match "SELECT CONVERT(user_name USING utf8mb4), CONVERT(host USING utf8mb4), routine \
         FROM leader_election_grants"
        .fetch(&mut conn)
        .await
    {
        Ok(rows) => rows,
        // Not installed yet (or a release before V9): nothing recorded.
        Err(mysql_async::Error::Server(e)) if e.code == 1146 => Vec::new(),
        Err(mysql_async::Error::Server(e)) if matches!(e.code, 1044 | 1142) => {
            return Ok(GrantCheck::NotChecked(format!("leader_election_grants cannot be read (error {}: {})", e.code, e.message)));
        }
        Err(e) => return Err(Error::from_mysql(e)),
    };
    // The server's grant tables: readable with SELECT on the mysql schema only.
    let grant_tables = async {
        let users: Vec<(String, String)> = "SELECT CONVERT(User USING utf8mb4), CONVERT(Host USING utf8mb4) FROM mysql.user"
            .fetch(&mut conn)
            .await?;
        let executes: Vec<(String, String, String)> = "SELECT CONVERT(User USING utf8mb4), CONVERT(Host USING utf8mb4), \
                    CONVERT(Routine_name USING utf8mb4) FROM mysql.procs_priv \
              WHERE Db = DATABASE() AND Routine_type = 'PROCEDURE' AND FIND_IN_SET('Execute', Proc_priv) > 0"
            .fetch(&mut conn)
            .await?;
        let tables: Vec<(String, String, String, String)> = "SELECT CONVERT(User USING utf8mb4), CONVERT(Host USING utf8mb4), \
                    CONVERT(Table_name USING utf8mb4), CAST(Table_priv AS CHAR) FROM mysql.tables_priv \
              WHERE Db = DATABASE() AND Table_priv <> ''"
            .fetch(&mut conn)
            .await?;
        Ok::<_, mysql_async::Error>((users, executes, tables))
    };
    let (users, executes, tables) = match grant_tables.await {
        Ok(read) => read,
        Err(mysql_async::Error::Server(e)) if matches!(e.code, 1044 | 1142 | 1227) => {
            return Ok(GrantCheck::NotChecked(format!(
                "reading other accounts' grants needs SELECT on the mysql schema, which this account lacks (error {}: {}); \
                 run it as an account that has it, or compare SHOW GRANTS FOR each account of leader_election_grants \
                 with `mysqlleader grant ACCOUNT --role ROLE` by hand",
                e.code, e.message
            )));
        }
        Err(e) => return Err(Error::from_mysql(e)),
    };

    // Per account (user byte for byte, host in any case, as the server compares them): what is
    // recorded, what is held, which table grants.
    #[derive(Default)]
    struct Holds {
        host: String,
        recorded: BTreeSet<String>,
        held: BTreeSet<String>,
        tables: Vec<(String, String)>,
    }
    let key = |user: &str, host: &str| (user.to_string(), host.to_lowercase());
    let mut accounts: BTreeMap<(String, String), Holds> = BTreeMap::new();
    let election_procedure = |name: &str| {
        crate::migrate::routines::ROUTINES.iter().any(|r| r.kind == crate::migrate::routines::Kind::Procedure && r.name.eq_ignore_ascii_case(name))
    };
    for (user, host, routine) in recorded {
        let entry = accounts.entry(key(&user, &host)).or_default();
        entry.host = host;
        entry.recorded.insert(routine.to_lowercase());
    }
    for (user, host, routine) in executes.into_iter().filter(|(_, _, r)| election_procedure(r)) {
        let entry = accounts.entry(key(&user, &host)).or_default();
        if entry.host.is_empty() {
            entry.host = host;
        }
        entry.held.insert(routine.to_lowercase());
    }
    for (user, host, table, privileges) in tables.into_iter().filter(|(_, _, t, _)| is_election_table(t)) {
        let entry = accounts.entry(key(&user, &host)).or_default();
        if entry.host.is_empty() {
            entry.host = host;
        }
        let words: Vec<String> = privileges.split(',').filter(|p| !p.is_empty()).map(privilege_word).collect();
        entry.tables.push((table, words.join(", ")));
    }
    let existing: BTreeSet<(String, String)> = users.iter().map(|(u, h)| key(u, h)).collect();

    let mut out = Vec::new();
    for ((user, _), holds) in accounts {
        let account = Account { user: user.clone(), host: holds.host.clone() };
        let quoted = account.quoted();
        let record_of = |routine: Option<&str>| {
            format!(
                "DELETE FROM {db}.`leader_election_grants` WHERE user_name = {} AND host = {}{};",
                hex_literal(&account.user),
                hex_literal(&account.host),
                routine.map(|r| format!(" AND routine = '{r}'")).unwrap_or_default()
            )
        };
        if !existing.contains(&key(&account.user, &account.host)) {
            out.push(GrantDifference {
                what: "is recorded in leader_election_grants but does not exist".into(),
                mend: record_of(None),
                account,
                role: None,
            });
            continue;
        }
        let basis: Vec<&str> = if holds.recorded.is_empty() { &holds.held } else { &holds.recorded }.iter().map(String::as_str).collect();
        let role = role_of(&basis);
        if let Some(role) = role {
            let regrant = format!("mysqlleader grant {quoted} --role {} --apply", role.name());
            let lacks: Vec<&str> = role.procedures().iter().copied().filter(|p| !holds.held.contains(*p)).collect();
            if !lacks.is_empty() {
                out.push(GrantDifference {
                    account: account.clone(),
                    role: Some(role),
                    what: format!("lacks EXECUTE on {} (this release's role {} has them)", lacks.join(", "), role.name()),
                    mend: regrant.clone(),
                });
            }
            let unrecorded: Vec<&str> = role
                .procedures()
                .iter()
                .copied()
                .filter(|p| holds.held.contains(*p) && !holds.recorded.contains(*p))
                .collect();
            if !unrecorded.is_empty() {
                out.push(GrantDifference {
                    account: account.clone(),
                    role: Some(role),
                    what: format!(
                        "holds EXECUTE on {} unrecorded in leader_election_grants (an upgrade on MySQL would not grant it again)",
                        unrecorded.join(", ")
                    ),
                    mend: regrant.clone(),
                });
            }
        }
        let wanted: &[&str] = role.map(Role::procedures).unwrap_or(&[]);
        let beyond: BTreeSet<&String> = holds.held.iter().chain(holds.recorded.iter()).filter(|p| !wanted.contains(&p.as_str())).collect();
        for routine in beyond {
            let (held, recorded) = (holds.held.contains(routine), holds.recorded.contains(routine));
            let revoke = format!("REVOKE EXECUTE ON PROCEDURE {db}.{} FROM {quoted};", quote_identifier(routine));
            let (what, mend) = match (held, recorded) {
                (true, true) => ("holds and is recorded with", format!("{revoke} {}", record_of(Some(routine)))),
                (true, false) => ("holds", revoke),
                _ => ("is recorded (an upgrade on MySQL would grant it) with", record_of(Some(routine))),
            };
            out.push(GrantDifference {
                account: account.clone(),
                role,
                what: format!(
                    "{what} EXECUTE on {routine}, beyond {}",
                    role.map(|r| format!("role {}", r.name())).unwrap_or_else(|| "every role".into())
                ),
                mend,
            });
        }
        for (table, privileges) in &holds.tables {
            out.push(GrantDifference {
                account: account.clone(),
                role,
                what: format!(
                    "holds {privileges} on the election's table {table} (no role needs a table; a locking read on it, \
                     SELECT ... FOR UPDATE, makes renews wait)"
                ),
                mend: format!("REVOKE {privileges} ON {db}.{} FROM {quoted};", quote_identifier(table)),
            });
        }
    }
    Ok(GrantCheck::Checked(out))
}

/// What [`revoke_table_grants`] did: the REVOKE statements that took a privilege away, and
/// those the server refused, with its error.
#[derive(Debug, Default)]
pub struct TableRevokes {
    pub revoked: Vec<String>,
    pub refused: Vec<(String, Error)>,
}

/// Takes from `account` its privileges on the election's tables and views, which no role needs
/// (an older release granted `SELECT` on them to operators and observers, and `SELECT ... FOR
/// UPDATE` by such an account stops every renew of the seats it reads). `known`: the account's
/// grants beyond its role as [`account_access`] read them; each table-level one is revoked as
/// read. `None` (this session may not read another account's grants): `REVOKE SELECT` is tried
/// on each of the election's tables and views, and one the account does not hold (1147) is no
/// change. Grants on the whole schema or globally are left alone (they may serve the
/// application's own tables): [`account_access`] names them.
pub async fn revoke_table_grants(pool: &mysql_async::Pool, account: &Account, known: Option<&[String]>) -> Result<TableRevokes> {
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    let heads: Vec<String> = match known {
        Some(grants) => grants
            .iter()
            .filter(|g| {
                let object = g.split_once(" ON ").map(|(_, o)| o).unwrap_or("");
                !object.starts_with("PROCEDURE ") && !object.starts_with("FUNCTION ") && !object.ends_with(".*")
            })
            .cloned()
            .collect(),
        None => {
            let info = server_info(pool).await?;
            let db = quote_identifier(info.database.as_deref().unwrap_or(""));
            let names: Vec<String> = "SELECT CONVERT(TABLE_NAME USING utf8mb4) FROM information_schema.TABLES \
                 WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME"
                .fetch(&mut conn)
                .await
                .map_err(Error::from_mysql)?;
            names.iter().filter(|n| is_election_table(n)).map(|n| format!("GRANT SELECT ON {db}.{}", quote_identifier(n))).collect()
        }
    };
    let mut out = TableRevokes::default();
    for head in heads {
        let statement = format!("{} FROM {};", head.replacen("GRANT ", "REVOKE ", 1), account.quoted());
        match statement.trim_end_matches(';').ignore(&mut conn).await {
            Ok(()) => out.revoked.push(statement),
            // Not held (only when tried without reading the grants): nothing to take away.
            Err(mysql_async::Error::Server(e)) if known.is_none() && matches!(e.code, 1147 | 1141) => {}
            Err(e) => out.refused.push((statement, Error::from_mysql(e))),
        }
    }
    Ok(out)
}

/// Runs [`grant_sql`] for the database of the connection, in order; returns the statements run.
///
/// The limit's transaction waits at most [`GRANT_LOCK_WAIT_S`] for a lock: it locks only the
/// account's own rows, which a concurrent grant of the same account holds, or the account
/// itself inside an open transaction at SERIALIZABLE that called `assert_leader` (its read of
/// its own limit share-locks its row). Then it is rolled back whole: nothing was changed.
pub async fn grant(pool: &mysql_async::Pool, account: &Account, role: Role, services: &[String]) -> Result<Vec<String>> {
    let info = server_info(pool).await?;
    let statements = grant_sql(account, info.database.as_deref().unwrap_or(""), role, services)?;
    let mut conn = pool.get_conn().await.map_err(|e| Error::from_pool(pool, e))?;
    format!("SET SESSION innodb_lock_wait_timeout = {GRANT_LOCK_WAIT_S}")
        .ignore(&mut conn)
        .await
        .map_err(Error::from_mysql)?;
    // The account's patterns before this grant, when it replaces them (with --service): what an
    // undo puts back when the first GRANT is refused.
    let mut earlier: Option<Vec<Vec<u8>>> = None;
    let mut granted_any = false;
    // The limit's transaction (from START TRANSACTION to COMMIT) is run again from its start
    // after a deadlock (1213: two grants of one account at once), up to DEADLOCK_TRIES times.
    let (mut at, mut begun_at, mut deadlocks) = (0, 0, 0);
    while let Some(sql) = statements.get(at) {
        // Plain text statements: GRANT takes no placeholders for names; every name is checked.
        let mut result = sql.as_str().ignore(&mut conn).await.map_err(Error::from_mysql);
        if sql.starts_with("START TRANSACTION") {
            begun_at = at;
        }
        if result.is_ok() && sql.contains("INTO") && sql.contains("`leader_election_account`") {
            result = account_patterns(&mut conn, account, true).await.map(|p| earlier = Some(p));
        }
        let in_limit = earlier.is_some() && !granted_any && !sql.starts_with("GRANT ") && !sql.contains("leader_election_grants");
        if let Err(e) = &result {
            if in_limit && e.server_code() == Some(1213) && deadlocks + 1 < DEADLOCK_TRIES {
                let _ = "ROLLBACK".ignore(&mut conn).await;
                deadlocks += 1;
                at = begun_at;
                continue;
            }
        }
        if let Err(e) = result {
            // A failure inside the limit's transaction changes nothing; the connection goes back
            // to the pool with no transaction open.
            let _ = "ROLLBACK".ignore(&mut conn).await;
            // The first GRANT refused: nothing of the role was granted, so the limit this grant
            // stored goes too (when it is still the one it stored).
            let undone = match (&earlier, sql.starts_with("GRANT ") && !granted_any) {
                (Some(earlier), true) => Some(undo_limit(&mut conn, account, services, earlier).await),
                _ => None,
            };
            // 1044/1142/1227/1370/1410: the connecting account may not grant. Say what it lacks.
            let e = if sql.starts_with("GRANT ") && matches!(e.server_code(), Some(1044 | 1142 | 1227 | 1370 | 1410)) {
                e.with_context(
                    "the account this connects as may not grant: it needs GRANT OPTION (and EXECUTE) on the \
                     election's procedures, or on the schema; run grant --apply as an administrator, or print the \
                     statements without --apply and have one run them",
                )
            } else if e.server_code() == Some(1205) {
                e.with_context(&format!(
                    "the account's limit is locked (by a concurrent grant of it, or by its own open transaction \
                     at SERIALIZABLE that called assert_leader) and stayed locked for {GRANT_LOCK_WAIT_S} s"
                ))
            } else if e.server_code() == Some(1213) {
                e.with_context(&format!("a deadlock with a concurrent grant of the account, {DEADLOCK_TRIES} times"))
            } else {
                e
            };
            return Err(e.with_context(&match undone {
                Some(Ok(true)) => format!("{}: nothing was changed (the limit it had stored was put back)", stopped_at(sql)),
                Some(Ok(false)) => format!("{}; the limit was changed again meanwhile, by another grant, and is left \
                                            as that one set it", grant_stopped_at(sql)),
                Some(Err(undo)) => format!("{}; putting the earlier limit back failed too ({undo})", grant_stopped_at(sql)),
                None => grant_stopped_at(sql),
            }));
        }
        granted_any |= sql.starts_with("GRANT ");
        at += 1;
    }
    Ok(statements)
}

/// How many times [`grant`] runs the limit's transaction when it ends in a deadlock.
const DEADLOCK_TRIES: u32 = 5;

/// The patterns of `account` in `leader_election_access`, in key order; `lock`: locked until the
/// transaction ends.
async fn account_patterns(conn: &mut mysql_async::Conn, account: &Account, lock: bool) -> Result<Vec<Vec<u8>>> {
    let sql = format!(
        "SELECT service_pattern FROM leader_election_access WHERE account = CAST(? AS BINARY) ORDER BY service_pattern{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    sql.with((account.user.as_str(),)).map(&mut *conn, |pattern: Vec<u8>| pattern).await.map_err(Error::from_mysql)
}

/// Puts `earlier` back as the patterns of `account`, in one transaction, when its patterns are
/// still `services` (what the failed grant stored); Ok(false) when another grant changed them
/// meanwhile (they are left as that one set them).
async fn undo_limit(conn: &mut mysql_async::Conn, account: &Account, services: &[String], earlier: &[Vec<u8>]) -> Result<bool> {
    let undo = async {
        "START TRANSACTION".ignore(&mut *conn).await.map_err(Error::from_mysql)?;
        let mut stored: Vec<Vec<u8>> = services.iter().map(|p| p.as_bytes().to_vec()).collect();
        stored.sort();
        stored.dedup();
        if account_patterns(conn, account, true).await? != stored {
            "ROLLBACK".ignore(&mut *conn).await.map_err(Error::from_mysql)?;
            return Ok(false);
        }
        "DELETE FROM leader_election_access WHERE account = CAST(? AS BINARY)"
            .with((account.user.as_str(),))
            .ignore(&mut *conn)
            .await
            .map_err(Error::from_mysql)?;
        for pattern in earlier {
            "INSERT INTO leader_election_access (account, service_pattern) VALUES (CAST(? AS BINARY), ?)"
                .with((account.user.as_str(), pattern.as_slice()))
                .ignore(&mut *conn)
                .await
                .map_err(Error::from_mysql)?;
        }
        "CALL leader_election_compile_access(CAST(? AS BINARY), @mysqlleader_changed)"
            .with((account.user.as_str(),))
            .ignore(&mut *conn)
            .await
            .map_err(Error::from_mysql)?;
        "COMMIT".ignore(&mut *conn).await.map_err(Error::from_mysql)?;
        Ok(true)
    }
    .await;
    if undo.is_err() {
        let _ = "ROLLBACK".ignore(&mut *conn).await;
    }
    undo
}

/// How long, in seconds, [`grant`] waits for a lock on the account's own rows.
pub const GRANT_LOCK_WAIT_S: u32 = 10;

/// What is in effect when [`grant`] stopped at `failed` (the order of [`grant_sql`]).
fn grant_stopped_at(failed: &str) -> String {
    let what = if failed.starts_with("GRANT ") {
        "the limit (if any) is in effect; the role was granted only in part: run the grant again"
    } else if failed.contains("leader_election_grants") {
        "the limit and the role are in effect; the record that upgrades re-grant from (MySQL) was not \
         written: run the grant again"
    } else {
        "nothing was changed"
    };
    format!("{}: {what}", stopped_at(failed))
}

/// "grant stopped at `STATEMENT`", the statement cut to 60 characters.
fn stopped_at(failed: &str) -> String {
    format!("grant stopped at `{}`", failed.chars().take(60).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_beyond_the_role_are_those_that_reach_the_schema_and_are_not_the_roles() {
        let lines: Vec<String> = [
            "GRANT USAGE ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '*F71FF2DCE3D1E50FE93199DF2EE830DEA2BFC803'",
            "GRANT EXECUTE ON `shop`.* TO `app`@`%`",
            "GRANT SELECT, INSERT ON `shop`.`invoices` TO `app`@`%`",
            "GRANT SELECT ON `shop`.`leader_election` TO `app`@`%`",
            "GRANT EXECUTE ON PROCEDURE `shop`.`campaign` TO `app`@`%`",
            "GRANT EXECUTE ON PROCEDURE `shop`.`force_leader` TO `app`@`%`",
            "GRANT EXECUTE ON PROCEDURE `shop`.`monthly_report` TO `app`@`%`",
            "GRANT SELECT ON `other`.* TO `app`@`%`",
            "GRANT `reporting` TO `app`@`%`",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(grants_beyond_role(&lines, "shop", Role::App), vec![
            "GRANT EXECUTE ON `shop`.*".to_string(),
            "GRANT SELECT ON `shop`.`leader_election`".to_string(),
            "GRANT EXECUTE ON PROCEDURE `shop`.`force_leader`".to_string(),
        ]);
        // The application's own table and routine in the same schema are not flagged.
        // For an operator, force_leader is the role's; a global privilege reaches every schema,
        // and no password hash is ever part of what is returned.
        let admin = vec!["GRANT ALL PRIVILEGES ON *.* TO `ops`@`%` IDENTIFIED BY PASSWORD '*F71F' WITH GRANT OPTION".to_string(),
                         "GRANT EXECUTE ON PROCEDURE `shop`.`force_leader` TO `ops`@`%`".to_string(),
                         "GRANT EXECUTE ON `shop\\_db`.* TO `ops`@`%`".to_string()];
        assert_eq!(grants_beyond_role(&admin, "shop", Role::Operator), vec!["GRANT ALL PRIVILEGES ON *.*".to_string()]);
        assert_eq!(grants_beyond_role(&admin, "shop_db", Role::Operator).len(), 2, "the escaped schema name is this one");
    }

    #[test]
    fn the_role_of_an_accounts_grants_is_the_narrowest_that_explains_them() {
        assert_eq!(role_of(&["campaign", "am_i_leader", "current_leader", "resign", "assert_leader"]), Some(Role::App));
        assert_eq!(role_of(&["current_leader", "force_leader"]), Some(Role::Operator));
        assert_eq!(role_of(&["current_leader"]), Some(Role::Observer), "an older release's observer");
        assert_eq!(role_of(&["leader_election_status", "current_leader"]), Some(Role::Observer));
        assert_eq!(role_of(&["leader_election_regrant"]), None);
        assert_eq!(role_of(&[]), None);
        assert_eq!(privilege_word("Grant"), "GRANT OPTION");
        assert_eq!(privilege_word("Show view"), "SHOW VIEW");
    }
}
