//! The one-shot subcommands: each opens the database, makes its call(s) through the public
//! API (`mysqlleader::procedures`, `mysqlleader::migrate`), and prints a sentence, a table,
//! or one JSON object whose keys are the result columns of the procedure.

use std::time::Duration;

use mysql_async::Pool;
use mysqlleader::procedures::{self, Account, ServiceStatus, TermRecord};
use serde_json::json;

use crate::args::EventAction;
use crate::say;
use crate::errors::{CliError, Target};
use crate::output::{flag, human, print_json, time_of_day_utc, utc_text, Table};

/// How long the first contact with the server may take before the tool gives up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many terms `status SERVICE` lists.
const RECENT_TERMS: u32 = 10;
/// How often `watch` asks who leads.
const WATCH_POLL: Duration = Duration::from_millis(200);
/// How long `watch` waits for one answer before it says the server does not answer.
const WATCH_CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Exit status 0 (success, or "leads"), 1 ("does not lead").
pub type Status = u8;

/// The `--url` of the command line (or `MYSQLLEADER_URL`).
pub struct Ctx {
    pub url: Option<String>,
}

/// `url` with `password` put in, percent-encoded, when its user part has none
/// (`mysql://user@host/db` → `mysql://user:PASSWORD@host/db`); else `url` unchanged.
fn with_password(url: &str, password: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else { return url.to_string() };
    let user = &rest[..at];
    if user.contains(':') {
        return url.to_string();
    }
    let encoded: String = password
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    format!("{scheme}://{user}:{encoded}{}", &rest[at..])
}

/// An open connection pool and where it points (for messages).
pub struct Db {
    pub pool: Pool,
    pub target: Target,
}

impl Ctx {
    /// The URL to connect with, and where it points. When the URL has no password and
    /// `MYSQLLEADER_PASSWORD` is set, that password is used (so it need not appear in `ps` or
    /// a shell's history).
    pub fn url(&self) -> Result<(String, Target), CliError> {
        let url = self.url.as_deref().filter(|u| !u.trim().is_empty()).ok_or_else(|| {
            CliError::new(
                "no database URL: pass --url mysql://user:password@host:port/database or set MYSQLLEADER_URL",
            )
        })?;
        let url = match std::env::var("MYSQLLEADER_PASSWORD") {
            Ok(password) if !password.is_empty() => with_password(url, &password),
            _ => url.to_string(),
        };
        let target = Target::from_url(&url)?;
        Ok((url, target))
    }

    /// Opens the database and checks that the server answers and accepts the login, so that
    /// those two mistakes are reported as such, before anything else is tried.
    pub async fn connect(&self) -> Result<Db, CliError> {
        let (url, target) = self.url()?;
        let pool = mysqlleader::pool_from_url(&url).map_err(|e| target.explain(e))?;
        match tokio::time::timeout(CONNECT_TIMEOUT, procedures::server_info(&pool)).await {
            Ok(Ok(_)) => Ok(Db { pool, target }),
            Ok(Err(e)) => Err(target.explain(e)),
            Err(_) => Err(target.explain(mysqlleader::Error::Connection {
                message: format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
            })),
        }
    }
}

impl Db {
    pub fn explain(&self, e: mysqlleader::Error) -> CliError {
        self.target.explain(e)
    }

    fn db(&self) -> &str {
        self.target.database.as_deref().unwrap_or("")
    }

    /// Closes the connections cleanly (the server would log aborted connections otherwise).
    pub async fn close(self) {
        let _ = self.pool.disconnect().await;
    }
}

/// Runs `f` on the database and closes it afterwards, whatever the outcome.
pub(crate) async fn with_db<F>(ctx: &Ctx, f: F) -> Result<Status, CliError>
where
    F: AsyncFnOnce(&Db) -> Result<Status, CliError>,
{
    let db = ctx.connect().await?;
    let outcome = f(&db).await;
    db.close().await;
    outcome
}

// ---- migrate, sql, grant ----

pub async fn migrate(ctx: &Ctx) -> Result<Status, CliError> {
    with_db(ctx, async |db| {
        // A wait for a lock that an open transaction holds is said as it happens (the installer
        // waits 1 s at a time, up to its budget, so that the election's calls never queue long).
        let on_wait: mysqlleader::OnLockWait = std::sync::Arc::new(|sentence: &str| eprintln!("mysqlleader: migrate: {sentence}"));
        let installed = mysqlleader::install_within(&db.pool, mysqlleader::DEFAULT_LOCK_BUDGET, Some(on_wait))
            .await
            .map_err(|e| db.explain(e))?;
        for m in &installed.migrations {
            say!("applied migration V{}__{}", m.version, m.name);
        }
        if !installed.routines.is_empty() {
            say!("applied routines: {}", installed.routines.join(", "));
        }
        if let Some(gaps) = installed.history_gaps.as_ref().filter(|g| g.services > 0) {
            eprintln!("mysqlleader: migrate: warning: {gaps}");
        }
        for caution in &installed.cautions {
            eprintln!("mysqlleader: migrate: warning: {caution}");
        }
        if installed.migrations.is_empty() && installed.routines.is_empty() {
            say!("the mysqlleader schema in database '{}' is up to date: nothing to apply", db.db());
        } else {
            say!(
                "the mysqlleader schema is installed in database '{}' on {}:{}",
                db.db(),
                db.target.host,
                db.target.port
            );
        }
        Ok(0)
    })
    .await
}

/// What `migrate --dry-run` and `migrate --verify` do with the plan.
pub enum PlanUse {
    /// Print what an install would do; exit 0.
    DryRun,
    /// Print what differs from this release (the grants included); exit 1 when anything does,
    /// 2 when nothing else does but the grants could not be read.
    Verify,
}

/// `migrate --dry-run` / `migrate --verify`: reads only.
pub async fn migrate_plan(ctx: &Ctx, how: PlanUse) -> Result<Status, CliError> {
    with_db(ctx, async |db| {
        let plan = mysqlleader::install_plan(&db.pool).await.map_err(|e| db.explain(e))?;
        let server = plan.server.name();
        let (verb, mend) = match how {
            PlanUse::DryRun => ("would apply", ""),
            PlanUse::Verify => ("differs:", " (mend: mysqlleader migrate)"),
        };
        if let Some(newer) = plan.newer_message() {
            say!("{} {}", if matches!(how, PlanUse::DryRun) { "would refuse:" } else { "differs:" }, newer);
        }
        for m in &plan.migrations {
            let locks = if m.alters.is_empty() {
                String::new()
            } else {
                format!(
                    "; alters {}: each ALTER waits for the open transactions on its table, at most 1 s an attempt, \
                     and the election's calls on that table wait behind it meanwhile",
                    m.alters.join(", ")
                )
            };
            match how {
                PlanUse::DryRun => say!("would apply migration V{}__{}{locks}", m.version, m.name),
                PlanUse::Verify => say!("differs: migration V{}__{} is not applied{mend}", m.version, m.name),
            }
        }
        for r in &plan.routines {
            let how_replaced = match (r.kind, plan.server) {
                ("trigger", mysqlleader::Server::MySql) => "; replaced under LOCK TABLES on the election's tables: their calls wait meanwhile",
                ("procedure", mysqlleader::Server::MySql) => "; dropped, created and granted again: a call in between fails for a moment (1305, 1370)",
                _ => "; replaced in place",
            };
            match how {
                PlanUse::DryRun => say!("{verb} {} {}: {}{how_replaced}", r.kind, r.name, r.why),
                PlanUse::Verify => say!("{verb} {} {}: {}{mend}", r.kind, r.name, r.why),
            }
        }
        if let Some(gaps) = plan.history_gaps.as_ref().filter(|g| g.services > 0) {
            say!("{} {gaps}", if matches!(how, PlanUse::DryRun) { "note:" } else { "differs:" });
        }
        // The server's settings: said, never a difference of the schema (no exit status of its own).
        for caution in &plan.cautions {
            eprintln!("mysqlleader: migrate: warning: {caution}");
        }
        // --verify: the grants of every recorded account, and every table grant on the election.
        let mut grants_differ = false;
        let mut grants_unchecked = None;
        if matches!(how, PlanUse::Verify) {
            match procedures::grant_differences(&db.pool).await.map_err(|e| db.explain(e))? {
                procedures::GrantCheck::Checked(differences) => {
                    for d in &differences {
                        let role = d.role.map(|r| format!(" (role {})", r.name())).unwrap_or_default();
                        say!("differs: account {}{role}: {} (mend: {})", d.account.quoted(), d.what, d.mend);
                    }
                    grants_differ = !differences.is_empty();
                }
                procedures::GrantCheck::NotChecked(why) => {
                    say!("could not check grants: {why}");
                    grants_unchecked = Some(why);
                }
            }
        }
        let differs = !plan.is_current() || (matches!(how, PlanUse::Verify) && (plan.history_has_gaps() || grants_differ));
        if !differs {
            if let Some(why) = grants_unchecked {
                // Not "no difference": what was not read may differ.
                return Err(CliError::new(format!(
                    "migrate --verify: the schema in database '{}' ({server}) is as this release installs it, but its \
                     grants were not checked: {why}",
                    db.db()
                )));
            }
            say!(
                "the mysqlleader schema in database '{}' ({server}) is as this release installs it: {}",
                db.db(),
                if matches!(how, PlanUse::DryRun) { "nothing to apply" } else { "no difference" }
            );
            return Ok(0);
        }
        Ok(if matches!(how, PlanUse::Verify) { 1 } else { 0 })
    })
    .await
}

pub fn sql(server: crate::args::ServerKind) -> Result<Status, CliError> {
    let server = match server {
        crate::args::ServerKind::Mariadb => mysqlleader::Server::MariaDb,
        crate::args::ServerKind::Mysql => mysqlleader::Server::MySql,
    };
    print!("{}", mysqlleader::install_sql_for(server));
    Ok(0)
}

pub async fn grant(
    ctx: &Ctx,
    account: &str,
    role: &str,
    patterns: &[String],
    exact: &[String],
    apply: bool,
    database: Option<&str>,
) -> Result<Status, CliError> {
    let account = Account::parse(account).map_err(crate::errors::offline)?;
    let role = procedures::Role::parse(role).map_err(crate::errors::offline)?;
    // One list of LIKE patterns: the exact names escaped.
    let mut services: Vec<String> = patterns.to_vec();
    for name in exact {
        services.push(procedures::exact_service_pattern(name).map_err(crate::errors::offline)?);
    }
    let services = services.as_slice();
    // What the account may do: `limit` is the user's per-service patterns in effect, or None
    // when they were not read (the printed form without --service).
    let describe = |database: &str, limit: Option<&[String]>| {
        let mut text = format!(
            "-- role {} for {} in `{database}`: may call {}",
            role.name(),
            account.quoted(),
            role.procedures().join(", ")
        );
        match limit {
            Some([]) => text.push_str("; on every service (no per-service limit)"),
            Some(patterns) => text.push_str(&format!(
                "; only on the services matching {} (others: SQLSTATE 45002)",
                patterns.iter().map(|p| format!("'{p}'")).collect::<Vec<_>>().join(", ")
            )),
            None => text.push_str(&format!(
                "; these statements set no per-service limit: one set earlier for user '{}' stays \
                 (--service '%' lifts it)",
                account.user
            )),
        }
        text.push_str(". Nothing else in the schema from these statements: no other routine, no table it may write. \
                       The EXECUTE grants are recorded in leader_election_grants, from which an upgrade that must \
                       re-create a procedure (MySQL) grants them again.");
        text
    };
    if !apply {
        // Printed only: nothing connects (no server, login or password needed), so the database
        // comes from --database, else from the URL's path.
        let database = printed_grant_database(ctx, database)?;
        let statements = procedures::grant_sql(&account, &database, role, services).map_err(crate::errors::offline)?;
        let limit = (!services.is_empty()).then_some(services);
        say!("{}", describe(&database, limit));
        say!("-- Create the account first if it does not exist:");
        say!("--   CREATE USER IF NOT EXISTS {} IDENTIFIED BY '<password>';", account.quoted());
        for sql in statements {
            say!("{sql}");
        }
        return Ok(0);
    }
    with_db(ctx, async |db| {
        match procedures::grant(&db.pool, &account, role, services).await {
            Ok(statements) => {
                for sql in statements {
                    say!("{sql}");
                }
                // Privileges on the election's tables, which no role needs (an older release
                // granted SELECT to operators and observers), are revoked: as read, or, where
                // this account may not read them, SELECT tried on each table.
                let before = procedures::account_access(&db.pool, &account, role).await;
                let known = before.as_ref().ok().and_then(|a| a.beyond_role.clone());
                let mut revoked_any = false;
                match procedures::revoke_table_grants(&db.pool, &account, known.as_deref()).await {
                    Ok(revokes) => {
                        for sql in &revokes.revoked {
                            say!("{sql}");
                        }
                        revoked_any = !revokes.revoked.is_empty();
                        for (sql, e) in revokes.refused {
                            eprintln!("mysqlleader: warning: could not revoke a privilege on the election's tables: {sql} ({})", db.explain(e));
                        }
                    }
                    Err(e) => eprintln!(
                        "mysqlleader: note: could not revoke the privileges of {} on the election's tables: {}",
                        account.quoted(),
                        db.explain(e)
                    ),
                }
                // Read back what is in effect: the limit (set now or earlier) and any grant
                // beyond the role (an older `EXECUTE ON db.*` still opens every routine).
                // The grants are in place whatever this read says: a failure here is a note.
                let access = if revoked_any { procedures::account_access(&db.pool, &account, role).await } else { before };
                match access {
                    Ok(access) => {
                        say!("granted: {}", describe(db.db(), Some(&access.service_patterns)).trim_start_matches("-- "));
                        warn_beyond_role(&account, role, access.beyond_role.as_deref());
                    }
                    Err(e) => {
                        let limit = (!services.is_empty()).then_some(services);
                        say!("granted: {}", describe(db.db(), limit).trim_start_matches("-- "));
                        eprintln!("mysqlleader: note: could not read back what {} holds now: {}", account.quoted(), db.explain(e));
                    }
                }
                Ok(0)
            }
            Err(mysqlleader::Error::Server { code: 1133 | 1410, .. }) => Err(CliError::new(format!(
                "account {} does not exist: create it first (CREATE USER {} IDENTIFIED BY '<password>'), then run this again",
                account.quoted(),
                account.quoted()
            ))),
            Err(e) => Err(db.explain(e)),
        }
    })
    .await
}

/// The database the printed GRANT statements name: `--database`, else the one the URL names
/// (the URL is only parsed, never connected to).
fn printed_grant_database(ctx: &Ctx, database: Option<&str>) -> Result<String, CliError> {
    if let Some(name) = database {
        if name.trim().is_empty() {
            return Err(CliError::new("invalid --database: it is empty; name the database that holds the election schema"));
        }
        return Ok(name.to_string());
    }
    let Some(url) = ctx.url.as_deref().filter(|u| !u.trim().is_empty()) else {
        return Err(CliError::new(
            "grant prints statements for the database that holds the election schema: pass --database NAME \
             (or a --url / MYSQLLEADER_URL that names the database; without --apply nothing connects to it)",
        ));
    };
    let target = crate::errors::Target::from_url(url)
        .map_err(|e| CliError::new(format!("{e}; or pass --database NAME (grant without --apply needs only the database name)")))?;
    match target.database.filter(|d| !d.is_empty()) {
        Some(name) => Ok(name),
        None => Err(CliError::new(
            "the URL names no database (mysql://user:password@host:port/DATABASE): add it, or pass --database NAME",
        )),
    }
}

/// Says on standard error what the account holds beyond its role in the schema (grants that
/// still apply, with the REVOKE for each), or that it could not be checked.
fn warn_beyond_role(account: &procedures::Account, role: procedures::Role, beyond: Option<&[String]>) {
    match beyond {
        Some([]) => {}
        Some(grants) => {
            // Say why only for what is there: a schema-wide EXECUTE opens every routine; a
            // privilege on an election table lets a session lock a seat.
            let why = if grants.iter().any(|g| g.contains(".*") && (g.contains("EXECUTE") || g.contains("ALL"))) {
                " (EXECUTE on the whole schema opens every routine, force_leader and the application's own included)"
            } else if grants.iter().any(|g| !g.contains(" PROCEDURE ")) {
                " (a privilege on the election's tables lets a session read or lock a seat: SELECT ... FOR UPDATE stops every renew)"
            } else {
                ""
            };
            eprintln!(
                "mysqlleader: warning: {} also holds privileges beyond role {} on the election's routines or tables, and \
                 they still apply{why}. Revoke what it should not have:",
                account.quoted(),
                role.name()
            );
            for grant in grants {
                eprintln!("  {};", grant.replacen("GRANT ", "REVOKE ", 1) + " FROM " + &account.quoted());
            }
        }
        None => eprintln!(
            "mysqlleader: note: could not check the other privileges of {} (SHOW GRANTS for another account needs \
             SELECT on the mysql schema; SELECT on the election's tables was revoked where it was held): look with \
             SHOW GRANTS FOR {}; for any other beyond role {}",
            account.quoted(),
            account.quoted(),
            role.name()
        ),
    }
}

// ---- status ----

fn status_json(s: &ServiceStatus) -> serde_json::Value {
    let ms = |d: Option<Duration>| d.map(|d| d.as_millis() as u64);
    let leading = s.leader_id.is_some();
    json!({
        "service_id": s.service_id,
        "leader_id": s.leader_id,
        "term": s.term,
        "lease_remaining_ms": s.lease_remaining.as_millis() as u64,
        "lease_ms": ms(s.lease),
        "term_started_at": s.term_started_at,
        "began_how": s.began_how,
        "last_leader_id": s.last_leader_id,
        "ended_at": s.ended_at,
        "ended_how": s.ended_how,
        "leading_for_ms": if leading { ms(s.for_how_long) } else { None },
        "vacant_for_ms": if leading { None } else { ms(s.for_how_long) },
        "handover_to": s.handover.as_ref().map(|h| h.to_node.clone()),
        "handover_remaining_ms": s.handover.as_ref().map(|h| h.remaining.as_millis() as u64),
        "handover_by": s.handover.as_ref().and_then(|h| h.asked_by.clone()),
    })
}

fn term_json(t: &TermRecord) -> serde_json::Value {
    json!({
        "term": t.term,
        "leader_id": t.leader_id,
        "lease_ms": t.lease.as_millis() as u64,
        "began_at": t.began_at,
        "began_how": t.began_how,
        "ended_at": t.ended_at,
        "ended_how": t.ended_how,
        "began_by": t.began_by,
        "ended_by": t.ended_by,
        "lasted_ms": t.lasted.as_millis() as u64,
    })
}

/// How a vacant seat's last term ended, in words.
fn ended_words(s: &ServiceStatus) -> String {
    let who = s.last_leader_id.as_deref().unwrap_or("the leader");
    let ended = match s.ended_how.as_deref() {
        Some("expired") => format!("the lease of {who} expired"),
        Some("resigned") => format!("{who} resigned"),
        Some("reelected") => format!("reelect ended {who}'s lease"),
        Some("forced_out") => format!("{who} was forced out"),
        Some("handed_over") => format!("{who} handed over"),
        _ => "ended".to_string(),
    };
    match &s.handover {
        Some(h) => format!("{ended}; reserved for {} ({} left)", h.to_node, human(h.remaining)),
        None => ended,
    }
}

fn status_row(s: &ServiceStatus) -> Vec<String> {
    match (&s.leader_id, s.term) {
        (_, 0) => vec![s.service_id.clone(), "-".into(), "0".into(), "-".into(), "-".into(), "nobody has led yet".into()],
        (Some(leader), _) => vec![
            s.service_id.clone(),
            leader.clone(),
            s.term.to_string(),
            human(s.lease_remaining),
            s.term_started_at.as_deref().map(utc_text).unwrap_or_default(),
            format!(
                "leading for {} ({})",
                s.for_how_long.map(human).unwrap_or_default(),
                s.began_how.as_deref().unwrap_or("elected")
            ),
        ],
        (None, _) => vec![
            s.service_id.clone(),
            "(vacant)".into(),
            s.term.to_string(),
            "-".into(),
            s.ended_at.as_deref().map(utc_text).unwrap_or_default(),
            format!("vacant for {}: {}", s.for_how_long.map(human).unwrap_or_default(), ended_words(s)),
        ],
    }
}

/// Which services `status` (of every service) lists: `--leader`, `--node NODE`, `--vacant`.
/// "Led" means a valid lease now, as the LEADER column shows it; a seat whose lease has run out
/// is vacant even before a campaign or the expiry event closes its term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusFilter {
    All,
    /// `--leader`: the services that have a leader.
    Led,
    /// `--node NODE`: the services NODE leads.
    LedBy(String),
    /// `--vacant`: the services without a leader (vacant, expired, or never led).
    Vacant,
}

impl StatusFilter {
    fn keeps(&self, s: &ServiceStatus) -> bool {
        match self {
            StatusFilter::All => true,
            StatusFilter::Led => s.leader_id.is_some(),
            StatusFilter::LedBy(node) => s.leader_id.as_deref() == Some(node.as_str()),
            StatusFilter::Vacant => s.leader_id.is_none(),
        }
    }

    /// What a service the filter keeps is, for the sentence when it keeps none.
    fn words(&self) -> String {
        match self {
            StatusFilter::All => "exists".into(),
            StatusFilter::Led => "has a leader".into(),
            StatusFilter::LedBy(node) => format!("is led by {node}"),
            StatusFilter::Vacant => "is without a leader".into(),
        }
    }
}

/// The line under `status`'s table: how many services, how many led and by how many nodes, how
/// many without a leader (a fleet's table is thousands of lines). With a filter, `of` is the
/// number of all services, and the line says `N of M services`.
fn status_summary(shown: &[&ServiceStatus], of: Option<usize>) -> String {
    let leaders: std::collections::BTreeSet<&str> = shown.iter().filter_map(|s| s.leader_id.as_deref()).collect();
    let led = shown.iter().filter(|s| s.leader_id.is_some()).count();
    let plural = |n: usize, one: &str, many: &str| if n == 1 { format!("{n} {one}") } else { format!("{n} {many}") };
    let services = match of {
        Some(all) => format!("{} of {}", shown.len(), plural(all, "service", "services")),
        None => plural(shown.len(), "service", "services"),
    };
    format!(
        "{services}: {} led by {}, {} without a leader",
        led,
        plural(leaders.len(), "node", "nodes"),
        shown.len() - led
    )
}

pub async fn status(ctx: &Ctx, service: Option<&str>, filter: &StatusFilter, as_json: bool) -> Result<Status, CliError> {
    if let StatusFilter::LedBy(node) = filter {
        // `--node ''` or a 200-character name is a mistake, said before connecting.
        mysqlleader::config::check_id("--node", node).map_err(crate::errors::offline)?;
    }
    with_db(ctx, async |db| {
        let Some(service) = service else {
            let all = procedures::service_statuses(&db.pool, None).await.map_err(|e| db.explain(e))?;
            let shown: Vec<&ServiceStatus> = all.iter().filter(|s| filter.keeps(s)).collect();
            if as_json {
                // The same object as without a filter: only fewer services in the array.
                print_json(&json!({ "services": shown.iter().map(|s| status_json(s)).collect::<Vec<_>>() }));
            } else if all.is_empty() {
                say!("no services yet: nobody has campaigned in database '{}'", db.db());
            } else if shown.is_empty() {
                let everything: Vec<&ServiceStatus> = all.iter().collect();
                say!("no service {} ({})", filter.words(), status_summary(&everything, None));
            } else {
                let mut table = Table::new(&["SERVICE", "LEADER", "TERM", "LEASE LEFT", "SINCE (UTC)", ""]);
                for s in &shown {
                    table.row(status_row(s));
                }
                print!("{}", table.render());
                let of = (*filter != StatusFilter::All).then_some(all.len());
                say!("{}", status_summary(&shown, of));
            }
            return Ok(0);
        };
        mysqlleader::config::check_id("service_id", service).map_err(|e| db.explain(e))?;
        let found = procedures::service_statuses(&db.pool, Some(service)).await.map_err(|e| db.explain(e))?;
        let Some(s) = found.into_iter().next() else {
            return Err(unknown_service(db, service).await);
        };
        let terms = procedures::recent_terms(&db.pool, service, RECENT_TERMS).await.map_err(|e| db.explain(e))?;
        if as_json {
            let mut value = status_json(&s);
            value["terms"] = terms.iter().map(term_json).collect();
            print_json(&value);
            return Ok(0);
        }
        match &s.leader_id {
            Some(leader) => say!(
                "service {}: {leader} leads at term {} ({}), lease {} left; leading for {} since {} UTC",
                s.service_id,
                s.term,
                s.began_how.as_deref().unwrap_or("elected"),
                human(s.lease_remaining),
                s.for_how_long.map(human).unwrap_or_default(),
                s.term_started_at.as_deref().map(utc_text).unwrap_or_default()
            ),
            None if s.term == 0 => match &s.handover {
                Some(h) => say!("service {}: nobody has led yet; reserved for {} ({} left)", s.service_id, h.to_node, human(h.remaining)),
                None => say!("service {}: nobody has led yet", s.service_id),
            },
            None => say!(
                "service {}: no leader; the seat has been vacant for {} since {} UTC ({} at term {}); {}",
                s.service_id,
                s.for_how_long.map(human).unwrap_or_default(),
                s.ended_at.as_deref().map(utc_text).unwrap_or_default(),
                ended_words(&s),
                s.term,
                match &s.handover {
                    Some(h) => format!("only {} may take it until the reservation lapses", h.to_node),
                    None => "the next campaign takes it".to_string(),
                }
            ),
        }
        if !terms.is_empty() {
            say!();
            say!("recent terms, newest first (times in UTC, on the database's clock):");
            let mut table = Table::new(&["TERM", "LEADER", "BEGAN", "HOW", "BY", "ENDED", "HOW", "BY", "LASTED", "LEASE"]);
            for t in &terms {
                table.row(vec![
                    t.term.to_string(),
                    t.leader_id.clone(),
                    utc_text(&t.began_at),
                    t.began_how.clone(),
                    t.began_by.clone().unwrap_or_else(|| "-".into()),
                    t.ended_at.as_deref().map(utc_text).unwrap_or_else(|| "-".into()),
                    t.ended_how.clone().unwrap_or_else(|| "(current)".into()),
                    t.ended_by.clone().unwrap_or_else(|| "-".into()),
                    human(t.lasted),
                    human(t.lease),
                ]);
            }
            print!("{}", table.render());
        }
        Ok(0)
    })
    .await
}

/// The error for a service that has no row, naming the services there are (when this account
/// may read them).
pub(crate) async fn unknown_service(db: &Db, service: &str) -> CliError {
    let known = procedures::service_statuses(&db.pool, None).await.unwrap_or_default();
    let mut names: Vec<String> = known.iter().take(10).map(|s| format!("'{}'", s.service_id)).collect();
    if known.len() > 10 {
        names.push("...".into());
    }
    let hint = if names.is_empty() {
        format!("no service has campaigned in database '{}' yet", db.db())
    } else {
        format!("known services: {}", names.join(", "))
    };
    CliError::new(format!(
        "unknown service '{service}': no node has ever led it in database '{}' ({hint}); check the name",
        db.db()
    ))
}

/// `e`, saying that the call changed nothing.
pub(crate) fn changed_nothing(e: CliError) -> CliError {
    CliError::new(format!("{e}; nothing was changed"))
}

// ---- one call each: campaign, am-i-leader, force, reelect, resign ----

pub async fn campaign(ctx: &Ctx, service: &str, node: &str, lease: Duration, as_json: bool) -> Result<Status, CliError> {
    with_db(ctx, async |db| {
        let c = procedures::retry_conflicts(|| procedures::campaign(&db.pool, service, node, lease)).await.map_err(|e| db.explain(e))?;
        if as_json {
            print_json(&json!({
                "is_leader": flag(c.is_leader),
                "leader_id": c.leader_id,
                "term": c.term,
                "lease_remaining_ms": c.lease_remaining.as_millis() as u64,
            }));
        } else if c.is_leader {
            say!("{node} leads {service} at term {} (lease {} left)", c.term, human(c.lease_remaining));
        } else if let Some(leader) = &c.leader_id {
            say!("{node} does not lead {service}: {leader} leads at term {} (lease {} left)", c.term, human(c.lease_remaining));
        } else {
            // Campaign takes any vacant seat but one a handover reserved for another node.
            say!("{node} does not lead {service}: the seat is vacant but reserved for another node by a handover (term {})", c.term);
        }
        Ok(if c.is_leader { 0 } else { 1 })
    })
    .await
}

pub async fn am_i_leader(ctx: &Ctx, service: &str, node: &str, as_json: bool) -> Result<Status, CliError> {
    with_db(ctx, async |db| {
        let c = procedures::am_i_leader(&db.pool, service, node).await.map_err(|e| db.explain(e))?;
        if as_json {
            print_json(&json!({
                "is_leader": flag(c.is_leader),
                "term": c.term,
                "lease_remaining_ms": c.lease_remaining.as_millis() as u64,
            }));
        } else if c.is_leader {
            say!("yes: {node} leads {service} at term {} (lease {} left)", c.term, human(c.lease_remaining));
        } else if c.lease_remaining.is_zero() {
            say!("no: {node} does not lead {service}; nobody does (last term {})", c.term);
        } else {
            say!("no: {node} does not lead {service}; another node leads at term {}", c.term);
        }
        Ok(if c.is_leader { 0 } else { 1 })
    })
    .await
}

pub async fn force(ctx: &Ctx, service: &str, node: &str, lease: Duration, as_json: bool) -> Result<Status, CliError> {
    with_db(ctx, async |db| {
        let c = procedures::retry_conflicts(|| procedures::force_leader(&db.pool, service, node, lease)).await.map_err(|e| db.explain(e))?;
        if as_json {
            print_json(&json!({
                "is_leader": flag(c.is_leader),
                "leader_id": c.leader_id,
                "term": c.term,
                "lease_remaining_ms": c.lease_remaining.as_millis() as u64,
            }));
        } else {
            say!(
                "{node} now leads {service} at term {} (forced; lease {}); the previous leader steps down at its next renew",
                c.term,
                human(c.lease_remaining)
            );
        }
        Ok(0)
    })
    .await
}

pub async fn reelect(ctx: &Ctx, service: &str, as_json: bool) -> Result<Status, CliError> {
    with_db(ctx, async |db| {
        let r = procedures::retry_conflicts(|| procedures::reelect(&db.pool, service)).await.map_err(|e| db.explain(e))?;
        // Term 0: no node has ever led the service (a mistyped name, most likely); the call
        // changed nothing.
        if r.term == 0 {
            return Err(changed_nothing(unknown_service(db, service).await));
        }
        if as_json {
            print_json(&json!({ "previous_leader_id": r.previous_leader_id, "term": r.term }));
        } else {
            match &r.previous_leader_id {
                Some(previous) => say!(
                    "ended the lease of {previous} on {service} (term {}); the next campaign of any node wins",
                    r.term
                ),
                None => say!("nobody led {service} (term {}): nothing to end; the next campaign wins", r.term),
            }
        }
        Ok(0)
    })
    .await
}

pub async fn resign(ctx: &Ctx, service: &str, node: &str, as_json: bool) -> Result<Status, CliError> {
    with_db(ctx, async |db| {
        let r = procedures::retry_conflicts(|| procedures::resign(&db.pool, service, node)).await.map_err(|e| db.explain(e))?;
        if r.term == 0 {
            return Err(changed_nothing(unknown_service(db, service).await));
        }
        if as_json {
            print_json(&json!({ "resigned": flag(r.resigned), "term": r.term }));
        } else if r.resigned {
            say!("{node} resigned from {service} (term {}); the next campaign of any node wins", r.term);
        } else {
            say!("{node} did not lead {service} (term {}): nothing changed", r.term);
        }
        Ok(0)
    })
    .await
}

// ---- event ----

const SCHEDULER_OFF: &str = "the server's event scheduler is not ON, so the event does not run: \
     SET GLOBAL event_scheduler = ON (and event_scheduler=ON in the server's configuration)";

pub async fn event(ctx: &Ctx, action: EventAction, as_json: bool) -> Result<Status, CliError> {
    with_db(ctx, async |db| {
        if action != EventAction::Status {
            let enabled = procedures::set_expiry_event(&db.pool, action == EventAction::On)
                .await
                .map_err(|e| db.explain(e))?;
            if as_json {
                print_json(&json!({ "event_enabled": flag(enabled) }));
                return Ok(0);
            }
            if enabled {
                say!("the expiry event is on: expired terms are closed and their seats vacated every second");
                let scheduler = procedures::expiry_event_status(&db.pool).await.map(|s| s.event_scheduler);
                if scheduler.is_ok_and(|s| !s.eq_ignore_ascii_case("ON")) {
                    eprintln!("mysqlleader: warning: {SCHEDULER_OFF}");
                }
            } else {
                say!("the expiry event is off: an expired term stays open until the next campaign takes the seat");
            }
            return Ok(0);
        }
        let s = procedures::expiry_event_status(&db.pool).await.map_err(|e| db.explain(e))?;
        if !s.installed {
            return Err(CliError::new(format!(
                "the expiry event leader_election_expire is not in database '{}' (or this account may not see \
                 events): run `mysqlleader migrate`",
                db.db()
            )));
        }
        let runs = s.enabled && s.event_scheduler.eq_ignore_ascii_case("ON");
        if as_json {
            print_json(&json!({
                "event_enabled": flag(s.enabled),
                "event_scheduler": s.event_scheduler,
                "running": flag(runs),
                "last_executed": s.last_executed,
            }));
            return Ok(0);
        }
        say!("expiry event leader_election_expire: {}", if s.enabled { "on" } else { "off" });
        say!("server event scheduler (@@event_scheduler): {}", s.event_scheduler);
        if let Some(last) = &s.last_executed {
            say!("last run: {} UTC", utc_text(last));
        }
        if runs {
            say!("=> expired terms are closed and their seats vacated every second");
        } else if s.enabled {
            say!("=> the event is on but does not run: {SCHEDULER_OFF}");
        } else {
            say!("=> expired terms stay open until the next campaign takes the seat (switch on: mysqlleader event on)");
        }
        Ok(0)
    })
    .await
}

// ---- watch ----

/// How the last term of a vacant seat ended (`handed_over`, `resigned`, ...), when the account
/// may read the history (operator, observer); `None` otherwise or when it is still open.
async fn last_end(db: &Db, service: &str) -> Option<String> {
    let terms = procedures::recent_terms(&db.pool, service, 1).await.ok()?;
    terms.into_iter().next()?.ended_how
}

fn watch_line(service: &str, c: &procedures::CurrentLeader, ended_how: Option<&str>, as_json: bool) {
    if as_json {
        let mut line = json!({
            "service_id": service,
            "leader_id": c.leader_id,
            "term": c.term,
            "lease_remaining_ms": c.lease_remaining.as_millis() as u64,
            "observed_at": crate::output::now_rfc3339_utc(),
        });
        if let Some(how) = ended_how {
            line["ended_how"] = json!(how);
        }
        print_json(&line);
    } else if let (None, Some(how)) = (&c.leader_id, ended_how) {
        say!("{}  {service}: no leader (term {} ended: {how}); the seat is vacant", time_of_day_utc(), c.term);
    } else {
        match &c.leader_id {
            Some(leader) => say!(
                "{}  {service}: {leader} leads at term {} (lease {} left)",
                time_of_day_utc(),
                c.term,
                human(c.lease_remaining)
            ),
            None => say!("{}  {service}: no leader (term {} ended); the seat is vacant", time_of_day_utc(), c.term),
        }
    }
}

pub async fn watch(ctx: &Ctx, service: &str, as_json: bool) -> Result<Status, CliError> {
    use tokio::signal::unix::{signal, SignalKind};
    // Handlers first: a SIGINT or SIGTERM from the moment the first line is out ends watch
    // with status 0, never by the signal's default action.
    let mut sigint = signal(SignalKind::interrupt()).map_err(|e| CliError::new(format!("signal handler: {e}")))?;
    let mut sigterm = signal(SignalKind::terminate()).map_err(|e| CliError::new(format!("signal handler: {e}")))?;
    let db = ctx.connect().await?;
    // `current_leader` is a procedure: an EXECUTE-only account may watch too.
    // A service nobody has led yet (term 0): wait for its first leader, so that a watcher can
    // be started before the service is deployed (as etcd's Observe waits).
    let first = match procedures::current_leader(&db.pool, service).await {
        Ok(c) => Ok(c),
        Err(e) => Err(db.explain(e)),
    };
    let mut last = match first {
        Ok(c) => c,
        Err(e) => {
            db.close().await;
            return Err(e);
        }
    };
    if last.term == 0 {
        eprintln!("mysqlleader: nobody has led {service} yet: waiting for its first leader");
    } else {
        let how = if last.leader_id.is_none() { last_end(&db, service).await } else { None };
        watch_line(service, &last, how.as_deref(), as_json);
    }
    let mut failing = false;
    loop {
        tokio::select! {
            _ = sigint.recv() => break,
            _ = sigterm.recv() => break,
            _ = tokio::time::sleep(WATCH_POLL) => {}
        }
        // A server that hangs must not make watch silent: a call that has no answer within
        // WATCH_CALL_TIMEOUT counts as failed (and says so once), and the next poll tries again.
        let answer = match tokio::time::timeout(WATCH_CALL_TIMEOUT, procedures::current_leader(&db.pool, service)).await {
            Ok(answer) => answer,
            Err(_) => Err(mysqlleader::Error::Timeout { after: WATCH_CALL_TIMEOUT }),
        };
        match answer {
            Ok(c) => {
                if failing {
                    eprintln!("mysqlleader: in contact with the server again");
                    failing = false;
                }
                if c.leader_id != last.leader_id || c.term != last.term {
                    // A vacant seat: say how its term ended (a handover, a resign, ...) where the
                    // account may read the history.
                    let how = if c.leader_id.is_none() { last_end(&db, service).await } else { None };
                    watch_line(service, &c, how.as_deref(), as_json);
                }
                last = c;
            }
            Err(e) => {
                if !failing {
                    eprintln!("mysqlleader: {}; still trying", db.explain(e));
                    failing = true;
                }
            }
        }
    }
    db.close().await;
    Ok(0)
}
