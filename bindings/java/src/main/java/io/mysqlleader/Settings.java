package io.mysqlleader;

/**
 * The settings an {@link Elector.Builder} and a {@link Session.Builder} share (node id, lease
 * timings, jitter, resign on close), checked where Java alone can check them and turned into the
 * C {@code mysqlleader_elector_config}. The library checks the invariants between them and names
 * the field of a violation. Internal.
 */
final class Settings {
    String nodeId;
    long leaseMs, renewMs, retryMs, requestTimeoutMs, driftMarginMs; // 0: the default
    double retryJitter;
    boolean noJitter;
    boolean resignOnClose = true;

    void lease(java.time.Duration d) { leaseMs = Args.millis(d, "lease"); }
    void renewInterval(java.time.Duration d) { renewMs = Args.millis(d, "renewInterval"); }
    void retryInterval(java.time.Duration d) { retryMs = Args.millis(d, "retryInterval"); }
    void requestTimeout(java.time.Duration d) { requestTimeoutMs = Args.millis(d, "requestTimeout"); }
    void driftMargin(java.time.Duration d) { driftMarginMs = Args.millis(d, "driftMargin"); }

    void retryJitter(double fraction) {
        retryJitter = fraction;
        noJitter = fraction == 0.0;
    }

    /** The C configuration for {@code serviceId} (null for a session's), without fallback servers. */
    Lib.ElectorConfig toNative(String serviceId) {
        Lib.ElectorConfig config = new Lib.ElectorConfig();
        config.service_id = serviceId;
        config.node_id = nodeId;
        config.lease_ms = leaseMs;
        config.renew_ms = renewMs;
        config.retry_ms = retryMs;
        config.retry_jitter = retryJitter;
        config.request_timeout_ms = requestTimeoutMs;
        config.drift_margin_ms = driftMarginMs;
        config.flags = (resignOnClose ? 0 : Lib.ELECTOR_NO_RESIGN_ON_FREE) | (noJitter ? Lib.ELECTOR_NO_JITTER : 0);
        return config;
    }
}
