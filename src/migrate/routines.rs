//! The repeatable objects: every routine, trigger and view as its one current definition, one
//! file each under `sql/routines/`, `sql/triggers/` and `sql/views/` (Flyway's repeatable
//! migrations; Refinery has none).
//!
//! The installer applies them after the versioned migrations, each one whose SHA-256 differs
//! from the checksum recorded in `mysqlleader_routines` (migration V9), and records it. How a
//! routine is replaced depends on the server ([`Server`]):
//! * MariaDB: `CREATE OR REPLACE PROCEDURE`, one atomic statement that keeps every grant on the
//!   routine: a call made meanwhile runs the old or the new definition, never fails.
//! * MySQL (no `OR REPLACE` for routines): `DROP PROCEDURE IF EXISTS`, `CREATE PROCEDURE`, then
//!   `CALL leader_election_regrant(name)`, which grants EXECUTE again to every account that
//!   `leader_election_grants` lists for it (DROP revoked them), all three in one round trip.
//!   A call that lands between the DROP and the CREATE fails with 1305 (does not exist), one
//!   between the CREATE and the re-grant with 1370 (access denied); it never runs an older
//!   definition. Before the DROP the same re-grant runs once, so that an installer that may not
//!   grant fails before it has revoked anything.
//! * A trigger: `CREATE OR REPLACE TRIGGER` on MariaDB; on MySQL `DROP TRIGGER IF EXISTS` and
//!   `CREATE TRIGGER` between `LOCK TABLES ... WRITE` and `UNLOCK TABLES`, so that no write to
//!   the table runs between the two, after a trial trigger created and dropped under the same
//!   lock, so that an installer refused triggers (1419) stops before the DROP. A trigger keeps
//!   the history of the seat's own writes (migration V13), so it is applied before every
//!   procedure: a procedure that relies on it never runs without it.
//!
//! The versioned migrations V2-V8 still hold the routine definitions of their day (an applied
//! migration is never edited: its checksum is stored in every database it ran on). Those are
//! history: [`versioned_statements`] leaves them out when a versioned migration runs, so no
//! install path ever creates an older definition, not even for a moment.

use sha2::{Digest, Sha256};

use super::script::{split_statements, Chunk};

/// Which server a statement list is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    MariaDb,
    MySql,
}

impl Server {
    /// The server of a `VERSION()` text.
    pub fn from_version(version: &str) -> Server {
        if version.contains("MariaDB") {
            Server::MariaDb
        } else {
            Server::MySql
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Server::MariaDb => "MariaDB",
            Server::MySql => "MySQL",
        }
    }
}

/// What kind of object a repeatable file creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Procedure,
    Trigger,
    View,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Procedure => "procedure",
            Kind::Trigger => "trigger",
            Kind::View => "view",
        }
    }

    /// The directory of `sql/` that holds the files of this kind.
    pub fn dir(self) -> &'static str {
        match self {
            Kind::Procedure => "routines",
            Kind::Trigger => "triggers",
            Kind::View => "views",
        }
    }
}

/// One repeatable object: its name, kind, and the `CREATE` statement of its file.
#[derive(Debug, Clone)]
pub struct Routine {
    pub name: &'static str,
    pub kind: Kind,
    /// The file as written: comment lines, then one `CREATE PROCEDURE name(...) ... END;`,
    /// `CREATE TRIGGER name ... END;` or `CREATE SQL SECURITY INVOKER VIEW name AS ...;`,
    /// which may include fragments ([`Routine::text`]).
    pub file: &'static str,
}

/// The pieces of text that routine files include, each a file of `sql/fragments/`: its comment
/// lines first (what it is, for whom), then the text it stands for.
const FRAGMENTS: &[(&str, &str)] = &[
    ("own_transaction", include_str!("../../sql/fragments/own_transaction.sql")),
    ("whole_lists", include_str!("../../sql/fragments/whole_lists.sql")),
    ("server_clock", include_str!("../../sql/fragments/server_clock.sql")),
    ("walk_by_index", include_str!("../../sql/fragments/walk_by_index.sql")),
];

/// What a line of a routine file says to include: `-- @include NAME ARG`, alone on its line.
const INCLUDE: &str = "-- @include ";

macro_rules! repeatables {
    ($($kind:ident $dir:literal $name:literal),* $(,)?) => {
        &[$(Routine { name: $name, kind: Kind::$kind,
                      file: include_str!(concat!("../../sql/", $dir, "/", $name, ".sql")) }),*]
    };
}

/// Every repeatable object, in the order the installer applies them: the re-grant first (on
/// MySQL every later routine calls it), then the trigger (the procedures rely on it), then the
/// term locks' helpers (new in this release: a routine that calls them must find them), the others
/// by name (a routine's body is resolved when it runs, not when it is created, so the order is
/// otherwise free), the view last.
pub const ROUTINES: &[Routine] = repeatables![
    Procedure "routines" "leader_election_regrant",
    Trigger "triggers" "leader_election_record_term",
    // The seats as the routines read them, new in this release (sql/V15__node_leases.sql): before
    // every routine that reads it, so that a call during an upgrade finds it.
    View "views" "leader_election_seats",
    // Before the routines that call them: a call during an upgrade finds them.
    Procedure "routines" "leader_election_try_term",
    Procedure "routines" "leader_election_lock_seat",
    Procedure "routines" "leader_election_need_term",
    Procedure "routines" "leader_election_need_seat",
    // The shared end of a term, new in this release: resign, resign_to, force_leader, handover,
    // handover_seats and reelect call it. After the helpers it calls (create_seat and reserve_seat were there).
    Procedure "routines" "leader_election_end_term",
    // campaign's body: campaign calls it.
    Procedure "routines" "leader_election_campaign",
    // The node leases' helpers and campaign_seats' body, new in this release: before the
    // procedures that call them.
    Procedure "routines" "leader_election_renew_lease",
    Procedure "routines" "leader_election_take_seats",
    Procedure "routines" "am_i_leader",
    Procedure "routines" "assert_leader",
    Procedure "routines" "campaign",
    Procedure "routines" "campaign_seats",
    Procedure "routines" "current_leader",
    Procedure "routines" "force_leader",
    Procedure "routines" "grant_lease",
    Procedure "routines" "handover",
    Procedure "routines" "handover_seats",
    Procedure "routines" "leader_election_account_patterns",
    Procedure "routines" "leader_election_begin",
    Procedure "routines" "leader_election_bound_idle_tx",
    Procedure "routines" "leader_election_check_access",
    Procedure "routines" "leader_election_check_id",
    Procedure "routines" "leader_election_check_ids",
    Procedure "routines" "leader_election_check_lease",
    Procedure "routines" "leader_election_check_number",
    Procedure "routines" "leader_election_compile_access",
    Procedure "routines" "leader_election_create_seat",
    Procedure "routines" "leader_election_deny",
    Procedure "routines" "leader_election_event_status",
    Procedure "routines" "leader_election_expire_stale",
    Procedure "routines" "leader_election_flush_access",
    Procedure "routines" "leader_election_flush_copies",
    Procedure "routines" "leader_election_node_wakeup_name",
    Procedure "routines" "leader_election_probe_in_tx",
    Procedure "routines" "leader_election_probe_wsrep",
    Procedure "routines" "leader_election_prune_history",
    Procedure "routines" "leader_election_probe_xa",
    Procedure "routines" "leader_election_recent_terms",
    Procedure "routines" "leader_election_refuse_limited",
    Procedure "routines" "leader_election_refuse_snapshot",
    Procedure "routines" "leader_election_refuse_xa",
    Procedure "routines" "leader_election_reserve_seat",
    Procedure "routines" "leader_election_status",
    Procedure "routines" "leader_election_wakeup_name",
    Procedure "routines" "reelect",
    Procedure "routines" "renew_lease",
    Procedure "routines" "release_lease",
    Procedure "routines" "renew_seats",
    Procedure "routines" "resign",
    Procedure "routines" "resign_seats",
    Procedure "routines" "resign_to",
    Procedure "routines" "set_expiry_event",
    Procedure "routines" "take_seats",
    // After every routine that counts a seat off a lease in moved (the trigger, renew_lease,
    // resign_seats: sql/V16__lease_moves.sql): the upgrade that adds it lets no follower read a
    // lease's count while a routine that does not keep it may still run.
    Procedure "routines" "watch_leases",
    View "views" "leader_election_terms",
];

impl Routine {
    /// The `CREATE` statement of the file for `server`, without the comment lines before it and
    /// without the final `;`. A line that ends with the tag `-- [mysql]` or `-- [mariadb]` is
    /// kept, without its tag, only for that kind of server ([`server_line`]): the few places
    /// where the two servers need different text (a locking clause, a probe) are written side by
    /// side in the one file, and every other line is the same for both.
    pub fn create(&self, server: Server) -> String {
        let file = self.text();
        // The first line that begins with CREATE (comment lines begin with `--`).
        let start = if file.starts_with("CREATE ") { 0 } else { file.find("\nCREATE ").map_or(0, |at| at + 1) };
        let text = file[start..].trim_end().trim_end_matches(';');
        text.lines().filter_map(|line| server_line(line, server)).collect::<Vec<_>>().join("\n")
    }

    /// The file with each line `-- @include NAME ARG` (after the line's indentation) replaced
    /// by the text of fragment NAME ([`FRAGMENTS`]), every line of it indented as the include
    /// line was and `{arg}` in it replaced by ARG: the text every other method reads, so the
    /// checksum, the install and the DBA script all cover what the server gets. A name that is
    /// no fragment is a fault of the file (a unit test includes every file).
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.file.len() + 256);
        for line in self.file.split_inclusive('\n') {
            let indent = &line[..line.len() - line.trim_start().len()];
            let Some(include) = line.trim().strip_prefix(INCLUDE) else {
                out.push_str(line);
                continue;
            };
            let (name, arg) = include.split_once(' ').unwrap_or((include, ""));
            let fragment = FRAGMENTS.iter().find(|(n, _)| *n == name).map(|(_, text)| fragment_text(text))
                .unwrap_or_else(|| panic!("{}: no fragment {name:?} in sql/fragments", self.name));
            for piece in fragment.lines() {
                if !piece.is_empty() {
                    out.push_str(indent);
                    out.push_str(&piece.replace("{arg}", arg.trim()));
                }
                out.push('\n');
            }
        }
        out
    }

    /// SHA-256 of [`Routine::create`] for `server`, lower-case hex: what `mysqlleader_routines`
    /// records. The same for both servers where the file has no tagged line.
    pub fn checksum(&self, server: Server) -> String {
        Sha256::digest(self.create(server).as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The statements that put this definition in place on `server` (each without its final
    /// `;`); see the module documentation for what a caller can see meanwhile.
    pub fn apply_statements(&self, server: Server) -> Vec<String> {
        let create = self.create(server);
        let replace = format!("CREATE OR REPLACE {}", &create["CREATE ".len()..]);
        match (self.kind, server) {
            (Kind::View, _) | (Kind::Procedure, Server::MariaDb) => vec![replace],
            (Kind::Trigger, Server::MariaDb) => vec![replace, CLEAR_PENDING_CHANGES.to_string()],
            // The table's writers wait for the lock: none runs between the DROP and the CREATE.
            // The trigger writes to the history and the node leases, locked too (LOCK TABLES opens only
            // what it names).
            // A trial trigger first: where the account may not create one (binary logging on,
            // no SUPER: 1419) the statements stop there, before the DROP, and the old trigger
            // stays in place (tests/sql_mysql.rs).
            (Kind::Trigger, Server::MySql) => vec![
                format!("LOCK TABLES `{TRIGGER_TABLE}` WRITE, `leader_election_history` WRITE, `leader_election_lease` WRITE"),
                format!("CREATE TRIGGER `{TRIAL_TRIGGER}` BEFORE UPDATE ON `{TRIGGER_TABLE}` FOR EACH ROW\nBEGIN\nEND"),
                format!("DROP TRIGGER `{TRIAL_TRIGGER}`"),
                format!("DROP TRIGGER IF EXISTS `{}`", self.name),
                create,
                CLEAR_PENDING_CHANGES.to_string(),
                "UNLOCK TABLES".to_string(),
            ],
            // The re-grant itself is granted to nobody, and the first install on MySQL creates
            // it before any routine needs it: no call of it around its own re-creation.
            (Kind::Procedure, Server::MySql) if self.name == REGRANT => {
                vec![format!("DROP PROCEDURE IF EXISTS `{}`", self.name), create]
            }
            (Kind::Procedure, Server::MySql) => vec![
                crate::procedures::regrant_sql(self.name),
                format!("DROP PROCEDURE IF EXISTS `{}`", self.name),
                create,
                crate::procedures::regrant_sql(self.name),
            ],
        }
    }
}

/// A fragment's text without its comment lines (those before its first line of code).
fn fragment_text(file: &str) -> &str {
    let mut rest = file;
    while rest.starts_with("--") {
        rest = rest.split_once('\n').map_or("", |(_, after)| after);
    }
    rest
}

/// A line of a repeatable file as `server` gets it: an untagged line as it is; a line tagged
/// `-- [mysql]` or `-- [mariadb]` (at its end, after the code) without the tag for that server,
/// and not at all for the other.
fn server_line(line: &str, server: Server) -> Option<&str> {
    for (tag, only) in [("-- [mysql]", Server::MySql), ("-- [mariadb]", Server::MariaDb)] {
        if let Some(code) = line.trim_end().strip_suffix(tag) {
            return (only == server).then(|| code.trim_end());
        }
    }
    Some(line)
}

/// The routine that grants EXECUTE again after MySQL re-created a procedure; applied first.
const REGRANT: &str = "leader_election_regrant";

/// The trigger MySQL's installer creates and drops again before it replaces a real one.
const TRIAL_TRIGGER: &str = "leader_election_trial_trigger";

/// The table every trigger of `sql/triggers/` is on.
const TRIGGER_TABLE: &str = "leader_election";

/// Run right after the trigger is (re-)created: a seat written while the trigger was missing
/// (dropped by hand) still holds the `change_how` its writer set, which the trigger clears at
/// every write; left there, the trigger would read it again at the seat's next renew. With the
/// columns NULL the statement's own firing of the trigger writes nothing.
const CLEAR_PENDING_CHANGES: &str =
    "UPDATE `leader_election` SET change_how = NULL, change_at = NULL WHERE change_how IS NOT NULL";

/// The repeatable object named `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Routine> {
    ROUTINES.iter().find(|r| r.name == name)
}

/// A versioned migration as the installer runs it: `run`, its statements without those that
/// create, drop or replace a repeatable object (see the module documentation), and
/// `deferred`, its `CALL`s of repeatable routines, which run after the routines are applied
/// (V8 calls the flush of access, a routine). Both without comment lines.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Versioned {
    pub run: Vec<String>,
    pub deferred: Vec<String>,
}

pub fn versioned_statements(sql: &str) -> Versioned {
    let mut out = Versioned::default();
    for chunk in split_statements(sql) {
        let text = match chunk {
            Chunk::Comment(_) => continue,
            Chunk::Simple(text) | Chunk::Compound(text) => text,
        };
        let upper = text.trim_start().to_ascii_uppercase();
        let named = |prefix: &str| -> Option<&'static Routine> {
            upper.strip_prefix(prefix).and_then(|rest| {
                let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                find(&name.to_ascii_lowercase())
            })
        };
        if named("DROP PROCEDURE IF EXISTS ").is_some()
            || named("CREATE PROCEDURE ").is_some()
            || named("CREATE OR REPLACE SQL SECURITY INVOKER VIEW ").is_some()
        {
            continue;
        }
        if named("CALL ").is_some() {
            out.deferred.push(text);
        } else {
            out.run.push(text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_the_directories() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/sql");
        let mut on_disk: Vec<String> = ["routines", "triggers", "views"]
            .iter()
            .flat_map(|dir| std::fs::read_dir(format!("{root}/{dir}")).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().trim_end_matches(".sql").to_string())
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = ROUTINES.iter().map(|r| r.name.to_string()).collect();
        listed.sort();
        assert_eq!(listed, on_disk, "every file of sql/routines and sql/views is in ROUTINES, and only those");
    }

    #[test]
    fn every_fragment_is_a_file_and_included() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sql/fragments");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir).unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().trim_end_matches(".sql").to_string())
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = FRAGMENTS.iter().map(|(name, _)| name.to_string()).collect();
        listed.sort();
        assert_eq!(listed, on_disk, "every file of sql/fragments is in FRAGMENTS, and only those");
        for (name, text) in FRAGMENTS {
            assert!(!fragment_text(text).trim().is_empty() && !fragment_text(text).contains(INCLUDE), "{name}: text, no include");
            let include = format!("{INCLUDE}{name}");
            assert!(ROUTINES.iter().any(|r| r.file.lines().any(|l| l.trim() == include || l.trim().starts_with(&format!("{include} ")))),
                    "{name}: included by a routine");
        }
    }

    /// sql/fragments/server_clock.sql runs once a call, at the entry: every routine that opens a
    /// transaction of its own (calls leader_election_begin) or reads the clock includes it
    /// before its first such line, except leader_election_begin itself (run again after each
    /// COMMIT) and the internal routines listed here, each called only by routines that include it.
    #[test]
    fn every_entry_routine_checks_the_session_clock_once() {
        const CHECKED_BY_CALLER: [&str; 4] = ["leader_election_create_seat", "leader_election_lock_seat",
                                               "leader_election_end_term", "leader_election_compile_access"];
        let include = format!("{INCLUDE}server_clock");
        let code = |l: &&str| !l.trim_start().starts_with("--");
        for r in ROUTINES.iter().filter(|r| r.kind == Kind::Procedure) {
            let lines: Vec<&str> = r.file.lines().collect();
            let first_use = lines.iter().position(|l| code(l) && (l.contains("CALL leader_election_begin(")
                                                                  || l.contains("UTC_TIMESTAMP") || l.contains("SYSDATE")));
            let includes: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| l.trim() == include).map(|(i, _)| i).collect();
            if r.name == "leader_election_begin" || CHECKED_BY_CALLER.contains(&r.name) {
                assert!(includes.is_empty(), "{}: no clock check of its own", r.name);
                if r.name != "leader_election_begin" {
                    for caller in ROUTINES.iter().filter(|c| c.file.contains(&format!("CALL {}(", r.name))) {
                        assert!(caller.file.lines().any(|l| l.trim() == include) || CHECKED_BY_CALLER.contains(&caller.name),
                                "{}: called by {}, which checks (or whose callers do)", r.name, caller.name);
                    }
                }
            } else if let Some(first) = first_use {
                assert_eq!(includes.len(), 1, "{}: one clock check a call", r.name);
                assert!(includes[0] < first, "{}: the check comes before line {}", r.name, first + 1);
            }
        }
    }

    #[test]
    fn an_include_is_its_fragment_indented_with_its_argument() {
        let r = Routine { name: "t", kind: Kind::Procedure,
                          file: "-- t\nCREATE PROCEDURE t()\nBEGIN\n    -- @include own_transaction t_name\n    SELECT 1;\nEND;\n" };
        assert_eq!(r.text(), "-- t\nCREATE PROCEDURE t()\nBEGIN\n    BEGIN\n        \
                              DECLARE EXIT HANDLER FOR 1399 CALL leader_election_refuse_xa('t_name');\n        COMMIT;\n    END;\n    \
                              SET v_own = TRUE;\n    SELECT 1;\nEND;\n");
        assert_eq!(find("campaign").unwrap().text(), find("campaign").unwrap().file, "a file with no include is its text");
    }

    #[test]
    fn each_file_creates_exactly_its_own_object_once() {
        for r in ROUTINES {
            let head = match r.kind {
                Kind::Procedure => format!("CREATE PROCEDURE {}(", r.name),
                Kind::Trigger => format!("CREATE TRIGGER {} BEFORE UPDATE ON {TRIGGER_TABLE} FOR EACH ROW\n", r.name),
                Kind::View => format!("CREATE SQL SECURITY INVOKER VIEW {} AS", r.name),
            };
            for server in [Server::MariaDb, Server::MySql] {
                assert!(r.create(server).starts_with(&head), "{}: the statement begins {head:?}", r.name);
                if r.kind != Kind::View {
                    assert!(r.create(server).ends_with("\nEND"), "{}: ends with END;", r.name);
                }
                assert_eq!(r.checksum(server).len(), 64);
                assert!(!r.create(server).contains("-- ["), "{}: no tag is left in the text for {server:?}", r.name);
            }
            let text = r.text();
            assert!(!text.contains(INCLUDE), "{}: every include is expanded", r.name);
            let creates = text.lines().filter(|l| l.trim_start().to_ascii_uppercase().starts_with("CREATE ")).count();
            assert_eq!(creates, 1, "{}: one CREATE statement", r.name);
            assert!(!text.lines().any(|l| l.trim_start().to_ascii_uppercase().starts_with("DROP ")), "{}: no DROP in a routine file", r.name);
        }
    }

    #[test]
    fn mysql_re_grants_every_procedure_it_re_creates_and_mariadb_replaces_in_place() {
        assert_eq!(ROUTINES[0].name, REGRANT, "the re-grant is in place before any routine needs it");
        assert_eq!(ROUTINES[0].apply_statements(Server::MySql),
                   vec![format!("DROP PROCEDURE IF EXISTS `{REGRANT}`"), ROUTINES[0].create(Server::MySql)]);
        for r in ROUTINES.iter().filter(|r| r.kind == Kind::Procedure && r.name != REGRANT) {
            let mariadb = r.apply_statements(Server::MariaDb);
            assert_eq!(mariadb.len(), 1);
            assert!(mariadb[0].starts_with(&format!("CREATE OR REPLACE PROCEDURE {}(", r.name)));
            let mysql = r.apply_statements(Server::MySql);
            let regrant = format!("CALL leader_election_regrant('{}')", r.name);
            assert_eq!(mysql, vec![regrant.clone(), format!("DROP PROCEDURE IF EXISTS `{}`", r.name),
                                   r.create(Server::MySql), regrant], "{}", r.name);
        }
        let trigger = find("leader_election_record_term").unwrap();
        assert_eq!(trigger.kind, Kind::Trigger);
        assert_eq!(ROUTINES[1].name, trigger.name, "the trigger is in place before any procedure relies on it");
        assert_eq!(trigger.apply_statements(Server::MariaDb),
                   vec![format!("CREATE OR REPLACE {}", &trigger.create(Server::MariaDb)["CREATE ".len()..]), CLEAR_PENDING_CHANGES.to_string()]);
        assert_eq!(trigger.apply_statements(Server::MySql),
                   vec!["LOCK TABLES `leader_election` WRITE, `leader_election_history` WRITE, `leader_election_lease` WRITE".to_string(),
                        "CREATE TRIGGER `leader_election_trial_trigger` BEFORE UPDATE ON `leader_election` FOR EACH ROW\nBEGIN\nEND".to_string(),
                        "DROP TRIGGER `leader_election_trial_trigger`".to_string(),
                        "DROP TRIGGER IF EXISTS `leader_election_record_term`".to_string(),
                        trigger.create(Server::MySql), CLEAR_PENDING_CHANGES.to_string(), "UNLOCK TABLES".to_string()]);
        let view = find("leader_election_terms").unwrap();
        for server in [Server::MariaDb, Server::MySql] {
            assert_eq!(view.apply_statements(server),
                       vec![format!("CREATE OR REPLACE {}", &view.create(server)["CREATE ".len()..])]);
        }
    }

    #[test]
    fn versioned_migrations_run_no_repeatable_definition() {
        let sql = "CREATE TABLE t (a INT);\nDROP PROCEDURE IF EXISTS campaign;\nCREATE PROCEDURE campaign()\nBEGIN\n  SELECT 1;\nEND;\n\
                   DROP PROCEDURE IF EXISTS v9_tmp;\nCREATE PROCEDURE v9_tmp()\nBEGIN\nEND;\nCALL v9_tmp();\n\
                   CALL leader_election_flush_copies(@a, @b);\n\
                   CREATE OR REPLACE SQL SECURITY INVOKER VIEW leader_election_terms AS\nSELECT 1;\n";
        let v = versioned_statements(sql);
        assert_eq!(v.run, vec!["CREATE TABLE t (a INT);", "DROP PROCEDURE IF EXISTS v9_tmp;",
                               "CREATE PROCEDURE v9_tmp()\nBEGIN\nEND;", "CALL v9_tmp();"]);
        assert_eq!(v.deferred, vec!["CALL leader_election_flush_copies(@a, @b);"]);
    }

    /// The routine text with its comments and string literals blanked out.
    fn code_only(text: &str) -> String {
        let mut out = String::new();
        for line in text.lines() {
            let line = line.split(" -- ").next().unwrap_or("");
            if line.trim_start().starts_with("--") {
                continue;
            }
            let mut in_string = false;
            for c in line.chars() {
                if c == '\'' {
                    in_string = !in_string;
                    out.push(c);
                } else if !in_string {
                    out.push(c);
                }
            }
            out.push('\n');
        }
        out
    }

    /// MySQL 8.0/8.4 accepts what the routines say, by construction: SIGNAL texts written as
    /// literals fit its 128 characters, MariaDB-only variables are named only inside strings
    /// (prepared, and their failure handled), and no MariaDB-only or deprecated syntax is used.
    #[test]
    fn routines_are_portable_to_mysql_by_construction() {
        for r in ROUTINES {
            let text = r.text();
            for (at, _) in text.match_indices("MESSAGE_TEXT =") {
                let rest = text[at + "MESSAGE_TEXT =".len()..].trim_start();
                if let Some(literal) = rest.strip_prefix('\'') {
                    let text = literal.split("';").next().unwrap().replace("''", "'");
                    assert!(text.chars().count() <= 128, "{}: a SIGNAL text of {} characters", r.name, text.chars().count());
                }
            }
            let code = code_only(&r.create(Server::MySql)).to_ascii_uppercase();
            for token in ["@@IN_TRANSACTION", "@@WSREP", "@@SESSION.WSREP", "IDLE_TRANSACTION_TIMEOUT", "CREATE OR REPLACE", "SET STATEMENT",
                          "RETURNING", "FOR SHARE", "NEXTVAL", "%TYPE", "ROW TYPE OF", " EXCEPT ", " INTERSECT ",
                          "VALUES(", " AS NEW", "IF NOT EXISTS", " WAIT ", "NOWAIT"] {
                assert!(!code.contains(token), "{}: {token} is MariaDB-only or differs on MySQL", r.name);
            }
            // The BINARY operator is deprecated on MySQL 8.0.27+: CAST(x AS BINARY) instead.
            for (at, _) in code.match_indices("BINARY ") {
                let before = code[..at].trim_end();
                assert!(before.ends_with(" AS") || before.ends_with("VAR") , "{}: the BINARY operator at {}", r.name,
                        &code[at.saturating_sub(30)..at + 10]);
            }
            // And what MariaDB 10.11 lacks stays out of its text: a locking clause naming its
            // table, MySQL's name of the isolation variable, XA statements outside a prepared one.
            let mariadb = code_only(&r.create(Server::MariaDb)).to_ascii_uppercase();
            for token in ["FOR UPDATE OF", "TRANSACTION_ISOLATION", "\n        XA ", "PERFORMANCE_SCHEMA"] {
                assert!(!mariadb.contains(token), "{}: {token:?} is MySQL-only", r.name);
            }
        }
    }

    #[test]
    fn a_tagged_line_is_kept_for_its_server_only_and_without_its_tag() {
        let both = "    SELECT 1;";
        assert_eq!(server_line(both, Server::MySql), Some(both));
        assert_eq!(server_line(both, Server::MariaDb), Some(both));
        let mysql = "    FOR UPDATE OF e SKIP LOCKED;   -- [mysql]";
        assert_eq!(server_line(mysql, Server::MySql), Some("    FOR UPDATE OF e SKIP LOCKED;"));
        assert_eq!(server_line(mysql, Server::MariaDb), None);
        let mariadb = "    FOR UPDATE SKIP LOCKED; -- [mariadb]  ";
        assert_eq!(server_line(mariadb, Server::MariaDb), Some("    FOR UPDATE SKIP LOCKED;"));
        assert_eq!(server_line(mariadb, Server::MySql), None);
        // A comment that merely mentions a server is no tag.
        let comment = "    -- MySQL [mysql] has no such variable";
        assert_eq!(server_line(comment, Server::MariaDb), Some(comment));
    }
}
