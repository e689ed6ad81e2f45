//! A session's log: one line per incident, with the number of seats it affects, not one line per
//! seat (issue "Fleets", logs per incident). A server restart under 1,000 seats logged about
//! 1,000 warnings per node ("election call failed", "stopped leading") and as many lines again
//! when it came back, so that an alert on warnings always fired and the one line that mattered
//! was lost among them.
//!
//! The session's electors report here instead of logging themselves: each failed call, each
//! call that succeeds, each term started or stopped. Once a second (and once more when the
//! session shuts down) [`Incidents::flush`] writes what that second brought:
//!
//! 1. Calls: when calls failed in that second and the session was not failing already (or now
//!    fails for another reason), one warning (an error when retrying cannot fix it) with the
//!    first error and the number of failed calls; while the same failure goes on, nothing more.
//!    A second in which any call failed as before goes on with that failure, whatever else
//!    failed beside it (a few calls timing out on a loaded machine while every call is refused
//!    is not a new incident).
//!    When the session was failing and that second brought successes and no failure, one line
//!    saying calls succeed again, after how long, and how many failed meanwhile.
//! 2. Terms stopped: one line per reason, with the number of services and up to three of them
//!    (a warning for a lost deadline or a failure, as an elector's own log says).
//! 3. Terms started: one line with the number of services and up to three of them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::time::Instant;

use crate::elector::StopReason;
use crate::error::{Error, ErrorKind};

/// How often what the electors reported is written.
const PERIOD: Duration = Duration::from_secs(1);
/// How many service ids a line names as examples.
const SAMPLE: usize = 3;

/// A kind of failure: two failures with the same one are the same incident.
type Condition = (ErrorKind, Option<u16>);

/// What a session's electors reported and the log has not written yet, and the failure going on.
#[derive(Default)]
struct Window {
    failed: u64,
    succeeded: u64,
    first_error: Option<Error>,
    /// The kinds of failure seen in this window (a few at most).
    conditions: Vec<Condition>,
    stopped: BTreeMap<&'static str, Tally>,
    started: Tally,
    /// The failure going on: its kind, since when, how many calls failed in it.
    failing: Option<(Condition, Instant, u64)>,
}

/// A count of services and the first few of them.
#[derive(Default)]
struct Tally {
    count: u64,
    sample: Vec<String>,
    warn: bool,
}

impl Tally {
    fn add(&mut self, service: &str) {
        self.count += 1;
        if self.sample.len() < SAMPLE {
            self.sample.push(service.to_string());
        }
    }

    fn services(&self) -> String {
        let more = if self.count as usize > self.sample.len() { ", ..." } else { "" };
        format!("{} service{} ({}{more})", self.count, if self.count == 1 { "" } else { "s" }, self.sample.join(", "))
    }
}

/// One line the log writes: its level and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    Error(String),
    Warn(String),
    Info(String),
}

/// The log of one session (one node id).
pub(crate) struct Incidents {
    node_id: String,
    window: Mutex<Window>,
}

impl Incidents {
    /// The log of the session of `node_id`, written once a second by a task of its own on the
    /// current runtime, until the log is dropped.
    pub(crate) fn start(node_id: &str) -> Arc<Incidents> {
        let incidents = Arc::new(Incidents { node_id: node_id.to_string(), window: Mutex::default() });
        let weak: Weak<Incidents> = Arc::downgrade(&incidents);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(PERIOD).await;
                let Some(incidents) = weak.upgrade() else { return };
                incidents.write();
            }
        });
        incidents
    }

    fn window(&self) -> std::sync::MutexGuard<'_, Window> {
        self.window.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn call_failed(&self, error: &Error) {
        let mut w = self.window();
        w.failed += 1;
        w.first_error.get_or_insert_with(|| error.clone());
        let condition = (error.kind(), error.server_code());
        if !w.conditions.contains(&condition) {
            w.conditions.push(condition);
        }
    }

    pub(crate) fn call_succeeded(&self) {
        self.window().succeeded += 1;
    }

    pub(crate) fn started_leading(&self, service_id: &str) {
        self.window().started.add(service_id);
    }

    pub(crate) fn stopped_leading(&self, service_id: &str, reason: StopReason) {
        let mut w = self.window();
        let tally = w.stopped.entry(reason.name()).or_default();
        tally.warn = matches!(reason, StopReason::DeadlinePassed | StopReason::Failed);
        tally.add(service_id);
    }

    /// Writes what the electors reported since the last time, as [`Incidents::flush`] words it.
    pub(crate) fn write(&self) {
        for line in self.flush(Instant::now()) {
            match line {
                Line::Error(text) => tracing::error!(node = %self.node_id, "{text}"),
                Line::Warn(text) => tracing::warn!(node = %self.node_id, "{text}"),
                Line::Info(text) => tracing::info!(node = %self.node_id, "{text}"),
            }
        }
    }

    /// The lines for what the electors reported since the last flush, at `now` (the module
    /// documentation's steps), and a new window.
    pub(crate) fn flush(&self, now: Instant) -> Vec<Line> {
        let mut w = self.window();
        let mut lines = Vec::new();
        // 1.
        let failed = w.failed;
        // Every failed call leaves its error (`failed` > 0 has one); no error, no line.
        if let Some(error) = w.first_error.take().filter(|_| failed > 0) {
            let condition = (error.kind(), error.server_code());
            let conditions = std::mem::take(&mut w.conditions);
            match &mut w.failing {
                Some((going_on, _, calls)) if conditions.contains(going_on) => *calls += failed,
                _ => {
                    let text = format!("election calls fail: {error} ({failed} calls failed in the last second)");
                    lines.push(if error.is_permanent() {
                        Line::Error(format!("{text}; retrying cannot fix it: this node cannot lead until the set-up is mended"))
                    } else {
                        Line::Warn(text)
                    });
                    w.failing = Some((condition, now, failed));
                }
            }
        } else if w.succeeded > 0 {
            if let Some((_, since, calls)) = w.failing.take() {
                lines.push(Line::Info(format!("election calls succeed again after {:.1} s ({calls} calls failed meanwhile)",
                                              now.saturating_duration_since(since).as_secs_f64())));
            }
        }
        // 2.
        for (reason, tally) in std::mem::take(&mut w.stopped) {
            let text = format!("stopped leading {}: {reason}", tally.services());
            lines.push(if tally.warn { Line::Warn(text) } else { Line::Info(text) });
        }
        // 3.
        let started = std::mem::take(&mut w.started);
        if started.count > 0 {
            lines.push(Line::Info(format!("started leading {}", started.services())));
        }
        w.failed = 0;
        w.succeeded = 0;
        w.first_error = None;
        w.conditions.clear();
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreachable() -> Error {
        Error::Connection { message: "connection refused".into() }
    }

    /// Calls refused for good (1370) with a few timing out beside them, on a loaded machine: one
    /// incident, one line, whichever failed first in a second. (Before, a second whose first
    /// failure was a timeout wrote a new warning, and the next second's refusal a new error.)
    #[tokio::test(start_paused = true)]
    async fn timeouts_beside_an_ongoing_refusal_are_the_same_incident() {
        let log = Incidents { node_id: "n1".into(), window: Mutex::default() };
        let denied = Error::from_server(1370, "42000", "execute command denied to user 'app'@'%' for routine 'db.campaign'");
        let timeout = Error::Timeout { after: Duration::from_millis(42) };
        let mut lines = Vec::new();
        for second in 0..4 {
            if second % 2 == 1 {
                log.call_failed(&timeout);
            }
            for _ in 0..30 {
                log.call_failed(&denied);
            }
            tokio::time::advance(PERIOD).await;
            lines.extend(log.flush(Instant::now()));
        }
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!(matches!(&lines[0], Line::Error(text) if text.contains("1370")), "{lines:#?}");
        // A second with nothing but timeouts is a change of condition: a line says so.
        log.call_failed(&timeout);
        tokio::time::advance(PERIOD).await;
        let changed = log.flush(Instant::now());
        assert!(matches!(&changed[..], [Line::Warn(text)] if text.contains("no answer")), "{changed:#?}");
    }

    /// A server restart under 1,000 seats: every renew fails for four seconds, every seat's term
    /// ends for lack of a renew, then calls succeed and every seat is taken again. Seven lines.
    #[tokio::test(start_paused = true)]
    async fn a_server_restart_under_a_thousand_seats_is_a_few_lines() {
        let log = Incidents { node_id: "n1".into(), window: Mutex::default() };
        let services: Vec<String> = (0..1000).map(|i| format!("svc-{i:04}")).collect();
        let t0 = Instant::now();
        let mut lines = Vec::new();
        for second in 0..4 {
            for s in &services {
                log.call_failed(&unreachable());
                if second == 2 {
                    log.stopped_leading(s, StopReason::DeadlinePassed);
                }
            }
            lines.extend(log.flush(t0 + Duration::from_secs(second + 1)));
        }
        for s in &services {
            log.call_succeeded();
            log.started_leading(s);
        }
        lines.extend(log.flush(t0 + Duration::from_secs(5)));
        lines.extend(log.flush(t0 + Duration::from_secs(6)));
        assert_eq!(lines, [
            Line::Warn("election calls fail: connection: connection refused (1000 calls failed in the last second)".into()),
            Line::Warn("stopped leading 1000 services (svc-0000, svc-0001, svc-0002, ...): deadline_passed".into()),
            Line::Info("election calls succeed again after 4.0 s (4000 calls failed meanwhile)".into()),
            Line::Info("started leading 1000 services (svc-0000, svc-0001, svc-0002, ...)".into()),
        ]);
    }

    /// Another kind of failure is another incident; a permanent one is an error; a second with
    /// both failures and successes is not yet the end of the incident.
    #[tokio::test(start_paused = true)]
    async fn each_new_condition_is_said_once() {
        let log = Incidents { node_id: "n1".into(), window: Mutex::default() };
        let t0 = Instant::now();
        log.call_failed(&unreachable());
        assert_eq!(log.flush(t0).len(), 1);
        log.call_failed(&unreachable());
        log.call_succeeded();
        assert_eq!(log.flush(t0), [], "the same failure, still going on");
        let denied = Error::AccessDenied { message: "EXECUTE command denied".into() };
        log.call_failed(&denied);
        let lines = log.flush(t0);
        assert!(matches!(&lines[..], [Line::Error(text)] if text.contains("EXECUTE command denied") && text.contains("cannot fix")), "{lines:?}");
        log.stopped_leading("a", StopReason::Resigned);
        log.call_succeeded();
        assert_eq!(log.flush(t0), [
            Line::Info("election calls succeed again after 0.0 s (1 calls failed meanwhile)".into()),
            Line::Info("stopped leading 1 service (a): resigned".into()),
        ]);
        assert_eq!(log.flush(t0), [], "nothing new");
    }
}
