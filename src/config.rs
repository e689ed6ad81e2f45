//! The elector's configuration: every value with its default and meaning, checked once, when
//! the elector is built.

use std::time::Duration;

use crate::error::{Error, Result};

/// Longest id the procedures accept, in characters.
pub const MAX_ID_CHARS: usize = 128;
/// Shortest and longest lease the procedures accept.
pub const MIN_LEASE: Duration = Duration::from_millis(1);
pub const MAX_LEASE: Duration = Duration::from_millis(86_400_000);
/// Shortest lease an elector accepts: it renews every lease/5, and each renew must fit a few
/// database round trips (about 1 ms on a LAN). Shorter leases could never be held and would only
/// load the database with calls (a 1 ms lease made ~750 calls a second and never led).
pub const MIN_ELECTOR_LEASE: Duration = Duration::from_millis(100);

/// How one node takes part in the election of one service.
///
/// | field | default | meaning |
/// | --- | --- | --- |
/// | `service_id` | (required) | the election group: 1 to 128 characters, compared byte for byte |
/// | `node_id` | `hostname:pid` | this node's name as others see it: 1 to 128 characters |
/// | `lease` | 10 s | how long a lease lasts on the database's clock after each acquisition or renew |
/// | `renew_interval` | lease / 5 | how often the leader renews; at most `(lease - drift_margin) / 3` |
/// | `retry_interval` | lease / 10 | the longest a follower waits between attempts (it also never waits past the current lease's end); at most `lease` |
/// | `retry_jitter` | 0.2 | a follower's wait is shortened by a random part of up to this fraction, so followers spread out (0 to < 1) |
/// | `request_timeout` | min(lease / 5, 2 s) | the longest one call may take before it counts as failed; less than `lease - drift_margin` |
/// | `drift_margin` | lease / 100 | subtracted from every local deadline, for clock-rate drift between this host and the database; less than `lease` |
/// | `resign_on_drop` | true | whether dropping or shutting down the elector resigns, so a rolling deploy hands over at once |
/// | `wakeup_lock` | true | the wake-up accelerator: the leader holds a named lock that followers wait on, so a resign wakes them at once (switches itself off on Galera) |
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ElectorConfig {
    pub service_id: String,
    pub node_id: String,
    pub lease: Duration,
    pub renew_interval: Duration,
    pub retry_interval: Duration,
    /// In thousandths (0 to 999), to keep the type `Eq`; see [`ElectorConfig::retry_jitter`].
    pub retry_jitter_permille: u32,
    pub request_timeout: Duration,
    pub drift_margin: Duration,
    pub resign_on_drop: bool,
    pub wakeup_lock: bool,
}

/// The lease when none is given.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);
/// The longest request timeout a default ever has.
pub const MAX_DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// The retry jitter when none is given, in thousandths.
pub const DEFAULT_RETRY_JITTER_PERMILLE: u32 = 200;

impl ElectorConfig {
    /// The defaults for `service_id`, with the default node id and lease ([`DEFAULT_LEASE`]).
    pub fn new(service_id: impl Into<String>) -> Self {
        Self::with_lease(service_id, DEFAULT_LEASE)
    }

    /// The defaults for `service_id` and `lease`: the one place defaults are derived.
    /// renew every lease/5, retry every lease/10, time out a request after min(lease/5, 2 s),
    /// drift margin lease/100.
    pub fn with_lease(service_id: impl Into<String>, lease: Duration) -> Self {
        ElectorConfig {
            service_id: service_id.into(),
            node_id: default_node_id(),
            lease,
            renew_interval: lease / 5,
            retry_interval: lease / 10,
            retry_jitter_permille: DEFAULT_RETRY_JITTER_PERMILLE,
            request_timeout: (lease / 5).min(MAX_DEFAULT_REQUEST_TIMEOUT),
            drift_margin: lease / 100,
            resign_on_drop: true,
            wakeup_lock: true,
        }
    }

    /// The jitter as a fraction (0.0 to 0.999).
    pub fn retry_jitter(&self) -> f64 {
        f64::from(self.retry_jitter_permille) / 1000.0
    }

    /// Checks every invariant; the error names the value that is wrong and why.
    pub fn validate(&self) -> Result<()> {
        check_id("service_id", &self.service_id)?;
        check_id("node_id", &self.node_id)?;
        if self.lease < MIN_LEASE || self.lease > MAX_LEASE {
            return Err(Error::invalid("lease", format!(
                "lease must be between 1 ms and 86400000 ms (one day), got {} ms", self.lease.as_millis())));
        }
        if self.lease < MIN_ELECTOR_LEASE {
            return Err(Error::invalid("lease", format!(
                "lease must be at least {} ms for an elector (got {} ms): it renews every lease/5 and each renew \
                 needs a few database round trips; the procedures alone accept shorter leases",
                MIN_ELECTOR_LEASE.as_millis(), self.lease.as_millis())));
        }
        if self.lease.subsec_nanos() % 1_000_000 != 0 {
            return Err(Error::invalid("lease", format!(
                "lease must be whole milliseconds (the database counts in ms), got {:?}", self.lease)));
        }
        if self.drift_margin >= self.lease {
            return Err(Error::invalid("drift_margin", format!(
                "drift_margin ({} ms) must be less than the lease ({} ms)",
                self.drift_margin.as_millis(), self.lease.as_millis())));
        }
        let usable = self.lease - self.drift_margin;
        if self.renew_interval.is_zero() || self.renew_interval * 3 > usable {
            return Err(Error::invalid("renew_interval", format!(
                "renew_interval ({} ms) must be above 0 and at most (lease - drift_margin) / 3 = {} ms, \
                 so that several renews fit in one lease",
                self.renew_interval.as_millis(), (usable / 3).as_millis())));
        }
        if self.retry_interval.is_zero() || self.retry_interval > self.lease {
            return Err(Error::invalid("retry_interval", format!(
                "retry_interval ({} ms) must be above 0 and at most the lease ({} ms)",
                self.retry_interval.as_millis(), self.lease.as_millis())));
        }
        if self.retry_jitter_permille >= 1000 {
            return Err(Error::invalid("retry_jitter", format!(
                "retry_jitter must be at least 0 and below 1, got {}", self.retry_jitter())));
        }
        if self.request_timeout.is_zero() || self.request_timeout >= usable {
            return Err(Error::invalid("request_timeout", format!(
                "request_timeout ({} ms) must be above 0 and below lease - drift_margin ({} ms)",
                self.request_timeout.as_millis(), usable.as_millis())));
        }
        Ok(())
    }
}

/// Rejects an id the procedures would reject, before any round trip.
pub fn check_id(name: &str, value: &str) -> Result<()> {
    let chars = value.chars().count();
    if chars == 0 {
        return Err(Error::invalid(name, format!("{name} must not be empty")));
    }
    if chars > MAX_ID_CHARS {
        return Err(Error::invalid(name, format!("{name} must be at most {MAX_ID_CHARS} characters (got {chars})")));
    }
    if value.contains('\0') {
        return Err(Error::invalid(name, format!("{name} must not contain a NUL character")));
    }
    Ok(())
}

/// `hostname:pid`, readable by humans; the host name is shortened so the id fits 128 characters.
pub fn default_node_id() -> String {
    let pid = std::process::id();
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates when it fits.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
    let host = if rc == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        String::new()
    };
    let host = if host.is_empty() { "node".to_string() } else { host };
    let suffix = format!(":{pid}");
    let room = MAX_ID_CHARS - suffix.len();
    let host: String = host.chars().take(room).collect();
    format!("{host}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> ElectorConfig {
        ElectorConfig::new("billing")
    }

    fn rejected(c: ElectorConfig) -> String {
        match c.validate() {
            Err(Error::InvalidArgument { parameter, .. }) => parameter,
            other => panic!("expected an invalid argument, got {other:?}"),
        }
    }

    #[test]
    fn defaults_are_valid() {
        ok().validate().unwrap();
        assert!(ok().node_id.contains(&format!(":{}", std::process::id())));
    }

    #[test]
    fn every_invalid_value_names_itself() {
        assert_eq!(rejected(ElectorConfig { service_id: "".into(), ..ok() }), "service_id");
        assert_eq!(rejected(ElectorConfig { service_id: "x".repeat(129), ..ok() }), "service_id");
        assert_eq!(rejected(ElectorConfig { node_id: "".into(), ..ok() }), "node_id");
        assert_eq!(rejected(ElectorConfig { node_id: "é".repeat(129), ..ok() }), "node_id");
        assert_eq!(rejected(ElectorConfig { lease: Duration::ZERO, ..ok() }), "lease");
        assert_eq!(rejected(ElectorConfig::with_lease("billing", Duration::from_millis(1))), "lease");
        ElectorConfig::with_lease("billing", MIN_ELECTOR_LEASE).validate().unwrap();
        assert_eq!(rejected(ElectorConfig { lease: Duration::from_millis(86_400_001), ..ok() }), "lease");
        assert_eq!(rejected(ElectorConfig { lease: Duration::from_micros(10_000_500), ..ok() }), "lease");
        assert_eq!(rejected(ElectorConfig { renew_interval: Duration::ZERO, ..ok() }), "renew_interval");
        assert_eq!(rejected(ElectorConfig { renew_interval: Duration::from_secs(4), ..ok() }), "renew_interval");
        assert_eq!(rejected(ElectorConfig { retry_interval: Duration::ZERO, ..ok() }), "retry_interval");
        assert_eq!(rejected(ElectorConfig { retry_interval: Duration::from_secs(11), ..ok() }), "retry_interval");
        assert_eq!(rejected(ElectorConfig { retry_jitter_permille: 1000, ..ok() }), "retry_jitter");
        assert_eq!(rejected(ElectorConfig { request_timeout: Duration::ZERO, ..ok() }), "request_timeout");
        assert_eq!(rejected(ElectorConfig { request_timeout: Duration::from_secs(10), ..ok() }), "request_timeout");
        assert_eq!(rejected(ElectorConfig { drift_margin: Duration::from_secs(10), ..ok() }), "drift_margin");
        assert!(check_id("node_id", &"é".repeat(128)).is_ok());
    }
}
