//! The command line: every subcommand and option (clap), and the duration syntax.

use std::ffi::OsString;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

const AFTER_HELP: &str = "\
Durations are written with a unit: 500ms, 10s, 2m (also 1.5s, 1h).

Exit status: 0 success; for `campaign` and `am-i-leader`, 0 when the node leads and 1 when it
does not; 2 for any error (bad input, unreachable server, refused login, schema not migrated),
with a message on standard error. `run` exits with COMMAND's status (128 + N when COMMAND was
killed by signal N, or when `run` itself was stopped by signal N).";

const HANDOVER_HELP: &str = "\
One service: CALL handover(SERVICE, NODE). Several services, or --from NODE (every service that
NODE leads now, read from the same status as `status --node NODE`): CALL handover_seats, one
call per chunk of at most 1,000 seats; a seat it could not lock within its bound (a fenced
transaction held it) is sent again while calls make progress. An unknown service among them:
exit 2 naming it, nothing changed. Output for many: one line per seat (--json: one JSON object
per line, with the keys service_id, is_leader, leader_id, term, lease_remaining_ms, and
waited_ms with --wait). With --wait the statuses are read in one call per poll until NODE leads
every seat; exit 3 naming the seats whose reservation lapsed. Exit 2 naming the seats that
could not be handed over.";

/// Leader election for services that run on MySQL or MariaDB.
#[derive(Debug, Parser)]
#[command(name = "mysqlleader", version, about, after_help = AFTER_HELP, propagate_version = true)]
pub struct Cli {
    /// The database that holds the election schema: mysql://user:pass@host:port/db.
    #[arg(long, global = true, env = "MYSQLLEADER_URL", hide_env_values = true, value_name = "URL")]
    pub url: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Install or upgrade the SQL objects (tables, procedures, event) in the database of the URL.
    Migrate {
        /// Change nothing: print what an install would do (the versioned migrations, the tables
        /// each alters, the routines it would create again and why).
        #[arg(long, conflicts_with = "verify")]
        dry_run: bool,
        /// Change nothing: compare what is live with this release (migrations applied, every
        /// routine, the trigger and the view as this release defines them, none created again
        /// by another release since) and print each difference; exit status 1 when there is one.
        #[arg(long)]
        verify: bool,
    },
    /// Print the installation script for the mysql/mariadb client (needs no server): versioned
    /// migrations, then each routine once, as the server kind needs them.
    Sql {
        /// The kind of server the script is for: MariaDB replaces routines in place (keeping
        /// their grants); MySQL drops, creates and re-grants them. The script refuses to run on
        /// the other kind.
        #[arg(long, value_enum, default_value = "mariadb")]
        server: ServerKind,
    },
    /// Access for an account by role, per procedure (never EXECUTE on the whole schema): prints
    /// the statements (no connection: the database is --database's or the URL's), or runs them
    /// with --apply.
    Grant {
        /// The account: `user` (any host), `user@host` or `'user'@'host'`.
        account: String,
        /// app: campaign, am_i_leader, current_leader, resign, assert_leader;
        /// operator: app's, plus force_leader, reelect, set_expiry_event, and the routines that
        /// read for status and event status; observer: current_leader and those routines.
        #[arg(long, value_parser = ["app", "operator", "observer"])]
        role: String,
        /// Limit the account to the services matching this SQL LIKE pattern (e.g. `billing%`;
        /// `\_`, `\%` match `_`, `%` themselves); repeat for more. Replaces the account's
        /// earlier patterns. Without it (and --service-exact), no limit is set.
        #[arg(long = "service", value_name = "PATTERN")]
        services: Vec<String>,
        /// Limit the account to exactly this service (its `_` and `%` match only themselves);
        /// repeatable, and combines with --service.
        #[arg(long = "service-exact", value_name = "NAME")]
        services_exact: Vec<String>,
        /// Run the statements instead of printing them (needs the GRANT OPTION).
        #[arg(long)]
        apply: bool,
        /// The database that holds the election schema, for the printed statements (without
        /// --apply nothing connects: the database is this, else the one the URL names).
        #[arg(long, value_name = "NAME", conflicts_with = "apply")]
        database: Option<String>,
    },
    /// Who leads every service (a table, then a line that counts them; --leader, --node or
    /// --vacant lists only some), or one service and its recent terms.
    Status {
        /// One service: its seat and its recent terms.
        service: Option<String>,
        /// Only the services that have a leader now (a valid lease).
        #[arg(long, conflicts_with_all = ["service", "vacant"])]
        leader: bool,
        /// Only the services NODE leads now (a valid lease).
        #[arg(long, value_name = "NODE", conflicts_with_all = ["service", "vacant"])]
        node: Option<String>,
        /// Only the services with no leader now: vacant, expired, or never led.
        #[arg(long, conflicts_with = "service")]
        vacant: bool,
        #[arg(long)]
        json: bool,
    },
    /// Campaign once: take a vacant or expired seat, renew a held one, else only read.
    /// Exit status 0 when the node leads afterwards, 1 when it does not.
    Campaign {
        service: String,
        node: String,
        /// Length of the lease on the database's clock.
        #[arg(long, value_name = "D", default_value = "10s", value_parser = parse_duration)]
        lease: Duration,
        #[arg(long)]
        json: bool,
    },
    /// Whether NODE holds a valid lease on SERVICE (a read). Exit status 0 when it does, 1 when not.
    AmILeader {
        service: String,
        node: String,
        #[arg(long)]
        json: bool,
    },
    /// Install NODE as the leader at once, with a new term (the displaced leader is forced out).
    Force {
        service: String,
        node: String,
        /// Length of the lease on the database's clock.
        #[arg(long, value_name = "D", default_value = "10s", value_parser = parse_duration)]
        lease: Duration,
        #[arg(long)]
        json: bool,
    },
    /// End the current lease now; the next campaign of any node wins.
    Reelect {
        service: String,
        #[arg(long)]
        json: bool,
    },
    /// End NODE's lease now, if NODE is the current leader.
    Resign {
        service: String,
        node: String,
        #[arg(long)]
        json: bool,
    },
    /// Move leadership to NODE with no overlap (operator): the current term ends now, the seat is
    /// reserved for NODE for one lease, and NODE takes it at its next campaign. Several services,
    /// or --from, hand over many seats in one call per 1,000 (handover_seats).
    #[command(after_help = HANDOVER_HELP)]
    Handover {
        /// The service(s) to hand over; several at once are checked first (an unknown one:
        /// exit 2, nothing changed).
        #[arg(value_name = "SERVICE", required_unless_present = "from", conflicts_with = "from")]
        services: Vec<String>,
        /// Every service NODE leads now (a valid lease), instead of naming them: drains NODE.
        #[arg(long = "from", value_name = "NODE")]
        from: Option<String>,
        /// The node that leads next.
        #[arg(long = "to", value_name = "NODE")]
        to: String,
        /// Return when NODE leads (exit 0), or when the reservation lapsed without it (exit 3);
        /// with many, when NODE leads every one (exit 3 naming those that lapsed).
        #[arg(long)]
        wait: bool,
        /// One JSON object; with several services (or --from), one object per line per seat,
        /// with its service_id.
        #[arg(long)]
        json: bool,
    },
    /// The optional expiry event, which closes expired terms and vacates their seats.
    Event {
        #[arg(value_enum)]
        action: EventAction,
        #[arg(long)]
        json: bool,
    },
    /// Print one line (or one JSON object) per leadership change, until interrupted.
    Watch {
        service: String,
        #[arg(long)]
        json: bool,
    },
    /// Run COMMAND only while this node leads SERVICE.
    Run(RunArgs),
    /// Internal: the watchdog process between `run` and COMMAND (see run.rs and guard.rs).
    #[command(name = "__guard", hide = true)]
    Guard(GuardArgs),
}

/// `sql --server`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServerKind {
    Mariadb,
    Mysql,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventAction {
    On,
    Off,
    Status,
}

/// `run`: campaign, and run COMMAND while leading.
#[derive(Debug, Args)]
#[command(after_help = "\
COMMAND gets MYSQLLEADER_SERVICE, MYSQLLEADER_NODE and MYSQLLEADER_TERM in its environment. It is
started only while this node leads, stopped (SIGTERM, then SIGKILL) before the leadership
deadline passes, and never outlives `run`, even when `run` is killed or frozen. When COMMAND
exits on its own, `run` resigns and exits with its status (or restarts it, with --restart).
SIGINT and SIGTERM stop COMMAND, resign, and exit with 128 + the signal number. SIGHUP, SIGQUIT,
SIGUSR1, SIGUSR2, SIGALRM and SIGWINCH are forwarded to COMMAND's process group while it runs
(before it runs they are logged and dropped), and `run` goes on. Exit status 75 when --try
passes without leadership.")]
pub struct RunArgs {
    /// The service (election group) to campaign for.
    #[arg(long, value_name = "S")]
    pub service: String,
    /// This node's name [default: hostname:pid].
    #[arg(long, value_name = "N")]
    pub node: Option<String>,
    /// Length of the lease on the database's clock: the longest failover after a crash.
    #[arg(long, value_name = "D", default_value = "10s", value_parser = parse_duration)]
    pub lease: Duration,
    /// How often the leader renews its lease [default: lease/5].
    #[arg(long, value_name = "D", value_parser = parse_duration)]
    pub renew: Option<Duration>,
    /// How long COMMAND may take to stop after SIGTERM when `run` stops it on purpose (SIGINT or
    /// SIGTERM to `run`) while still holding the lease, which it keeps renewing meanwhile; any
    /// length. When renews fail, COMMAND gets SIGTERM min(grace, lease - drift margin -
    /// 2 x renew) before the leadership deadline and SIGKILL just before it [default: lease/4].
    #[arg(long, value_name = "D", value_parser = parse_duration)]
    pub grace: Option<Duration>,
    /// Start COMMAND again when it exits on its own (while still leading), instead of resigning;
    /// with a pause that doubles after each quick exit (--restart-backoff, up to
    /// --restart-backoff-max); a pause longer than the lease is waited out of the seat (resign,
    /// campaign again after it), and after --restart-limit exits within --restart-window, resign
    /// and stay out for one lease, so that another node can take over.
    #[arg(long)]
    pub restart: bool,
    /// The first pause before a restart; it doubles with each exit of COMMAND, until COMMAND has
    /// run for a whole --restart-window.
    #[arg(long, value_name = "D", default_value = "500ms", value_parser = parse_duration)]
    pub restart_backoff: Duration,
    /// The longest pause before a restart (never below --restart-backoff). A pause longer than
    /// the lease is not spent holding the seat: `run` resigns and campaigns again after it.
    #[arg(long, value_name = "D", default_value = "30s", value_parser = parse_duration)]
    pub restart_backoff_max: Duration,
    /// How many exits of COMMAND within --restart-window make this node give up its seat.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub restart_limit: u32,
    /// The window of --restart-limit.
    #[arg(long, value_name = "D", default_value = "1m", value_parser = parse_duration)]
    pub restart_window: Duration,
    /// Give up when this node has not led within D: exit with status 75 (EX_TEMPFAIL), like
    /// `consul lock -try`. Default: wait without limit.
    #[arg(long = "try", value_name = "D", value_parser = parse_duration)]
    pub try_for: Option<Duration>,
    /// Serve /leader, /healthz and /metrics on HOST:PORT (GET, HEAD), for a load balancer's
    /// health check and Prometheus.
    #[arg(long, value_name = "HOST:PORT")]
    pub http: Option<String>,
    /// Another server of the same Galera cluster (repeat for more): when a call through the
    /// current server fails with a connection or cluster error, the next call goes to the next
    /// one. Leadership is never extended while moving.
    #[arg(long = "fallback-url", value_name = "URL")]
    pub fallback_urls: Vec<String>,
    /// Leave MYSQLLEADER_URL and MYSQLLEADER_PASSWORD in COMMAND's environment. Without it
    /// COMMAND does not see them: `run`'s credentials are not the program's.
    #[arg(long)]
    pub pass_credentials: bool,
    /// The program to run while leading, and its arguments (after `--`).
    #[arg(value_name = "COMMAND", required = true, trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
    pub command: Vec<OsString>,
}

/// The hidden `__guard` subcommand: started by `run` only.
#[derive(Debug, Args)]
pub struct GuardArgs {
    /// The pipe `run` writes deadline extensions and stop requests to.
    #[arg(long)]
    pub control_fd: i32,
    /// The pipe the guard reports COMMAND's start and end on.
    #[arg(long)]
    pub report_fd: i32,
    /// The leadership deadline, CLOCK_BOOTTIME nanoseconds.
    #[arg(long)]
    pub deadline_ns: u64,
    /// The longest wait from a requested stop's SIGTERM to SIGKILL (bounded by the deadline).
    #[arg(long)]
    pub grace_ms: u64,
    /// SIGTERM this long before the deadline when it was not extended.
    #[arg(long)]
    pub lead_ms: u64,
    /// SIGKILL at the latest this long before the deadline.
    #[arg(long)]
    pub kill_margin_ms: u64,
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
    pub command: Vec<OsString>,
}

/// Parses `500ms`, `10s`, `2m`, `1h`, `1.5s` into whole milliseconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let hint = "write a number with a unit, e.g. 500ms, 10s or 2m";
    if number.is_empty() {
        return Err(format!("bad duration {text:?}: {hint}"));
    }
    let ms_per_unit: f64 = match unit.trim() {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        "" => return Err(format!("bad duration {text:?}: the unit is missing; {hint}")),
        other => return Err(format!("bad duration {text:?}: unknown unit {other:?}; {hint}")),
    };
    let value: f64 = number.parse().map_err(|_| format!("bad duration {text:?}: {hint}"))?;
    let ms = value * ms_per_unit;
    if !ms.is_finite() || ms > 1e15 {
        return Err(format!("bad duration {text:?}: too long"));
    }
    if ms.fract() != 0.0 {
        return Err(format!("bad duration {text:?}: must be whole milliseconds"));
    }
    Ok(Duration::from_millis(ms as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("10").unwrap_err().contains("unit is missing"));
        assert!(parse_duration("10x").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("1.5ms").unwrap_err().contains("whole milliseconds"));
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
