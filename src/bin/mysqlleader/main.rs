//! `mysqlleader`: the command-line tool. A thin user of the library's public API: every
//! decision is the stored procedures'; this binary only carries arguments in and results out,
//! and supervises a command in `run`.
//!
//! Modules: `args` (the command line and durations), `commands` (the one-shot subcommands),
//! `output` (tables and JSON), `errors` (messages that say what to do), `run` (the
//! supervision loop of `run`) and `guard` (the watchdog process between `run` and COMMAND).

mod args;
mod commands;
mod errors;
mod guard;
mod handover;
mod http;
mod output;
mod run;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};
use commands::Ctx;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The guard is a tiny single-threaded process: no runtime, no database.
    let command = match cli.command {
        Command::Guard(guard_args) => return guard::main(guard_args),
        command => command,
    };
    if !matches!(command, Command::Run(_)) {
        // Like any filter: `mysqlleader status | head -1` ends quietly when the reader goes.
        // (`run` and the guard keep SIGPIPE ignored: they must outlive a closed pipe.)
        // SAFETY: setting a signal's disposition to the default before any thread starts.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mysqlleader: error: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let ctx = Ctx { url: cli.url };
    let outcome = runtime.block_on(async {
        match command {
            Command::Migrate { dry_run: false, verify: false } => commands::migrate(&ctx).await,
            Command::Migrate { dry_run: _, verify } => commands::migrate_plan(&ctx, if verify { commands::PlanUse::Verify } else { commands::PlanUse::DryRun }).await,
            Command::Sql { server } => commands::sql(server),
            Command::Grant { account, role, services, services_exact, apply, database } => {
                commands::grant(&ctx, &account, &role, &services, &services_exact, apply, database.as_deref()).await
            }
            Command::Status { service, leader, node, vacant, json } => {
                let filter = match (node, leader, vacant) {
                    (Some(node), _, _) => commands::StatusFilter::LedBy(node),
                    (None, true, _) => commands::StatusFilter::Led,
                    (None, false, true) => commands::StatusFilter::Vacant,
                    (None, false, false) => commands::StatusFilter::All,
                };
                commands::status(&ctx, service.as_deref(), &filter, json).await
            }
            Command::Campaign { service, node, lease, json } => commands::campaign(&ctx, &service, &node, lease, json).await,
            Command::AmILeader { service, node, json } => commands::am_i_leader(&ctx, &service, &node, json).await,
            Command::Force { service, node, lease, json } => commands::force(&ctx, &service, &node, lease, json).await,
            Command::Reelect { service, json } => commands::reelect(&ctx, &service, json).await,
            Command::Resign { service, node, json } => commands::resign(&ctx, &service, &node, json).await,
            Command::Handover { services, from: None, to, wait, json } if services.len() == 1 => {
                handover::handover(&ctx, &services[0], &to, wait, json).await
            }
            Command::Handover { services, from, to, wait, json } => {
                handover::handover_many(&ctx, &services, from.as_deref(), &to, wait, json).await
            }
            Command::Event { action, json } => commands::event(&ctx, action, json).await,
            Command::Watch { service, json } => commands::watch(&ctx, &service, json).await,
            Command::Run(run_args) => run::run(&ctx, run_args).await,
            Command::Guard(_) => unreachable!("handled above"),
        }
    });
    // Do not wait for stray blocking tasks of the driver.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match outcome {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("mysqlleader: error: {e}");
            ExitCode::from(2)
        }
    }
}
