package io.mysqlleader;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One node's part in the elections of many services ({@code mysqlleader_session}): one node id
 * and one lease configuration for every elector it makes, whose calls share one kept server
 * connection and whose renews are batched into one call ({@code CALL renew_seats}) per batch. An
 * elector from {@link #elector(String)} is an ordinary {@link Elector}: events, waits,
 * {@link Elector#fence}, {@link Elector#resign()}, {@link Elector#handover}.
 *
 * <pre>{@code
 * try (Session session = Session.builder(client).nodeId("web-3").lease(Duration.ofSeconds(10)).build()) {
 *     List<Elector> shards = new ArrayList<>();
 *     for (int i = 0; i < 1000; i++) shards.add(session.elector("shard-" + i));
 *     for (Elector e : shards) {
 *         if (e.isLeader()) { ... }                               // fence writes with e.fence(conn)
 *     }
 * }                                                               // every elector steps down and resigns
 * }</pre>
 *
 * <p>Differences from stand-alone electors: one wake-up lock per session, not per service
 * (followers of the node the session waits on are woken by its close at once; seats led by a
 * third node are looked at once per retry interval, lease / 10 by default); a session uses two
 * server connections, on its current server: the client's, or, after a transient failure (a
 * lost or refused connection, a timeout, a cluster error), the next of its
 * {@link Builder#fallbackClients fallback clients}, in turn.
 *
 * <p>Thread-safe. {@link #close()} closes every elector the session made (their own
 * {@link Elector#close()} is then a no-op and their methods throw {@link InvalidStateException}
 * as on any closed elector), resigning their seats together unless
 * {@link Builder#resignOnClose(boolean)} says not to, then frees the session; idempotent.
 */
public final class Session implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("mysqlleader.java");

    private final Handle handle;
    private final boolean resignOnClose;
    /** The electors made here and not closed yet. */
    private final Set<Elector> electors = ConcurrentHashMap.newKeySet();
    private final Thread shutdownHook;

    private Session(Builder b) {
        Lib.ElectorConfig config = b.settings.toNative(null); // each elector names its service
        // The C session takes the client's pool (and the fallbacks'): hold their handles during the call.
        Pointer session = b.client.handle.use(client -> Elector.withFallbacks(b.fallbacks, 0, new Pointer[b.fallbacks.size()], fallbacks -> {
            if (fallbacks != null) {
                config.fallback_clients = fallbacks;
                config.fallback_client_count = b.fallbacks.size();
            }
            PointerByReference out = new PointerByReference();
            int rc = Lib.C.mysqlleader_session_new(client, config, out);
            if (rc != 0) throw MysqlLeaderException.last(rc);
            return out.getValue();
        }));
        this.handle = new Handle("session", session);
        this.resignOnClose = b.settings.resignOnClose;
        if (b.resignOnShutdown) {
            shutdownHook = new Thread(this::closeOnShutdown, "mysqlleader-shutdown-session");
            Runtime.getRuntime().addShutdownHook(shutdownHook);
        } else {
            shutdownHook = null;
        }
    }

    /**
     * Starts building a session whose electors talk to {@code client}'s database (two
     * connections of it: calls, and one wake-up lock), or to its
     * {@link Builder#fallbackClients fallbacks'}.
     */
    public static Builder builder(Client client) {
        return new Builder(client);
    }

    /**
     * Starts an elector for {@code serviceId} (1 to 128 characters) in this session: it
     * campaigns at once, in the background, with the session's node id and lease, its calls
     * batched with the session's others. Close it on its own to resign that seat alone, or
     * close the session.
     *
     * @throws InvalidArgumentException {@code serviceId} is null, empty or too long, or this
     *         session runs an elector for it already; {@link InvalidArgumentException#parameter()}
     *         is {@code "service_id"}
     * @throws InvalidStateException the session is closed
     */
    public Elector elector(String serviceId) {
        return elector(serviceId, new ElectorListener[0]);
    }

    /** {@link #elector(String)} with listeners that see every event of the elector from the first one on. */
    public Elector elector(String serviceId, ElectorListener... listeners) {
        Objects.requireNonNull(listeners, "listeners");
        List<ElectorListener> list = new ArrayList<>(Arrays.asList(listeners));
        for (ElectorListener l : list) Objects.requireNonNull(l, "listener");
        if (handle.closed()) throw closed(serviceId);
        try {
            // Under the session's read lock: close() waits for this elector to be registered.
            return handle.use(session -> {
                Elector e = new Elector(serviceId, list, false, this, callback -> {
                    PointerByReference out = new PointerByReference();
                    int rc = Lib.C.mysqlleader_session_elector(session, serviceId, callback, null, out);
                    if (rc != 0) throw MysqlLeaderException.last(rc);
                    return out.getValue();
                });
                electors.add(e);
                return e;
            });
        } catch (InvalidStateException e) {
            if (handle.closed()) throw closed(serviceId); // closed meanwhile
            throw e;
        }
    }

    private static InvalidStateException closed(String serviceId) {
        return new InvalidStateException("mysqlleader: the session is closed: it starts no elector (service_id " + serviceId + ")");
    }

    /**
     * The session's metrics as one Prometheus text exposition (version 0.0.4;
     * {@code mysqlleader_session_metrics_text}), each metric's HELP and TYPE once, compact: the
     * session's own series, labelled {@code node="<node id>"}
     * ({@code mysqlleader_session_seats{state="leading|following|vacant"}}, the counters of its
     * batched calls {@code mysqlleader_session_renew_batches_total},
     * {@code _renew_batch_failures_total}, {@code _renewed_seats_total}, {@code _take_batches_total},
     * {@code _take_batch_failures_total}, {@code _taken_seats_total}, {@code _resign_batches_total}
     * and {@code _single_campaigns_total}, and the histogram
     * {@code mysqlleader_session_renew_batch_duration_seconds} of each {@code renew_seats} round
     * trip), then per service ({@code name="<service>"}) only
     * {@code leader_election_master_status}, exact at the moment of the call, and
     * {@code mysqlleader_term}: about 75 bytes plus twice the service id's length a service
     * (10,000 services of 10-byte ids: under 1 MB). {@link #metricsTextDetailed()} has every
     * elector's full series too. Serve this one for a session: the electors' own
     * {@link Elector#metricsText()} joined together repeat the HELP/TYPE lines, which a scraper
     * rejects. Never blocks on the database.
     *
     * @throws InvalidStateException once the session is closed
     */
    public String metricsText() {
        return metricsText(false);
    }

    /**
     * {@link #metricsText()} with every running elector's full series, as its own
     * {@link Elector#metricsText()} has them ({@code mysqlleader_session_metrics_text_detailed}:
     * also {@code mysqlleader_leadership_transitions_total}, {@code mysqlleader_campaign_errors_total}
     * and the histogram {@code mysqlleader_campaign_duration_seconds}, which in a session includes
     * the wait for a batch): about 1.5 KB a service.
     *
     * @throws InvalidStateException once the session is closed
     */
    public String metricsTextDetailed() {
        return metricsText(true);
    }

    private String metricsText(boolean detailed) {
        if (handle.closed()) throw new InvalidStateException("mysqlleader: the session is closed");
        return handle.use(session -> {
            byte[] buf = new byte[4096];
            com.sun.jna.ptr.LongByReference needed = new com.sun.jna.ptr.LongByReference();
            int rc = copy(session, detailed, buf, needed);
            for (int attempt = 0; attempt < 3 && rc == ErrorKind.BUFFER_TOO_SMALL.code; attempt++) {
                buf = new byte[(int) Math.max(needed.getValue(), 2L * buf.length)];
                rc = copy(session, detailed, buf, needed);
            }
            if (rc != 0) throw MysqlLeaderException.last(rc);
            return Lib.string(buf);
        });
    }

    private static int copy(com.sun.jna.Pointer session, boolean detailed, byte[] buf, com.sun.jna.ptr.LongByReference needed) {
        return detailed
            ? Lib.C.mysqlleader_session_metrics_text_detailed(session, buf, buf.length, needed)
            : Lib.C.mysqlleader_session_metrics_text(session, buf, buf.length, needed);
    }

    /** Called by an elector of this session that was closed on its own. */
    void forget(Elector e) {
        electors.remove(e);
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return handle.closed();
    }

    /**
     * Closes every elector the session made and still open (each steps down at once and
     * resigns, unless {@link Builder#resignOnClose(boolean) resignOnClose(false)}; the resigns
     * share the session's connection and take at most the request timeout together, the seats
     * not resigned by then lapse with their leases), delivers their last events, then frees the
     * session. Idempotent.
     */
    @Override
    public void close() {
        if (shutdownHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException shuttingDown) {
                // the hook itself is closing us
            }
        }
        Pointer session = handle.take(); // after every elector() in flight: each is registered
        if (session == null) return;
        // 1. Every elector behaves as closed from now on (their calls in flight end first).
        List<Elector> mine = new ArrayList<>(electors);
        electors.clear();
        List<Pointer> taken = new ArrayList<>(mine.size());
        for (Elector e : mine) taken.add(e.detach());
        // 2. The session stops them all at once (resigning together), then is freed.
        Lib.C.mysqlleader_session_free(session);
        // 3. Each elector handle delivers its last events and is freed.
        for (int i = 0; i < mine.size(); i++) {
            if (taken.get(i) != null) mine.get(i).free(taken.get(i));
        }
    }

    /** The shutdown hook: resign every seat now (even with resignOnClose(false)), then close. */
    private void closeOnShutdown() {
        if (!resignOnClose) {
            for (Elector e : new ArrayList<>(electors)) {
                try {
                    if (!e.isClosed()) e.resign();
                } catch (MysqlLeaderException x) {
                    LOG.log(System.Logger.Level.WARNING, "resign of " + e.serviceId() + " on shutdown failed; the lease will lapse: " + x.getMessage());
                }
            }
        }
        close();
    }

    @Override
    public String toString() {
        return "Session[electors=" + electors.size() + (handle.closed() ? ", closed]" : "]");
    }

    /**
     * The settings of a session, the same for every elector it makes, named as in
     * {@link Elector.Builder}. Every unset value is the library's default (lease 10 s, renew
     * lease / 5, retry lease / 10, jitter 0.2, request timeout min(lease / 5, 2 s), drift margin
     * lease / 100); the library checks the invariants between them in {@link #build()} and names
     * the field of a violation by its builder method's name ({@code renewInterval}). Durations are whole milliseconds.
     */
    public static final class Builder {
        private final Client client;
        private final Settings settings = new Settings();
        private boolean resignOnShutdown;
        private final List<Client> fallbacks = new ArrayList<>();

        private Builder(Client client) {
            if (client == null) {
                throw new InvalidArgumentException(ErrorKind.NULL_ARGUMENT, "mysqlleader: client is null", "client", null, 0, false, null);
            }
            this.client = client;
        }

        /** This node's name as others see it (1 to 128 characters); default {@code hostname:pid}. */
        public Builder nodeId(String nodeId) { settings.nodeId = nodeId; return this; }

        /** How long a lease lasts after each acquisition or renew (1 ms to 1 day; default 10 s). */
        public Builder lease(Duration lease) { settings.lease(lease); return this; }

        /** How often the leaders renew (default lease / 5; at most (lease - drift margin) / 3). */
        public Builder renewInterval(Duration d) { settings.renewInterval(d); return this; }

        /** The longest a follower waits between attempts (default lease / 10; at most the lease). */
        public Builder retryInterval(Duration d) { settings.retryInterval(d); return this; }

        /** A follower's wait is shortened by a random part of up to this fraction (0 to below 1; default 0.2). 0 means none. */
        public Builder retryJitter(double fraction) { settings.retryJitter(fraction); return this; }

        /** The longest one call may take (default min(lease / 5, 2 s); below lease - drift margin). */
        public Builder requestTimeout(Duration d) { settings.requestTimeout(d); return this; }

        /** Subtracted from every local deadline for clock-rate drift (default lease / 100; below the lease). */
        public Builder driftMargin(Duration d) { settings.driftMargin(d); return this; }

        /** Whether closing an elector of the session, or the session, resigns its seats, so other nodes take over at once (default true); else the leases lapse. */
        public Builder resignOnClose(boolean yes) { settings.resignOnClose = yes; return this; }

        /**
         * Whether a JVM shutdown hook resigns every seat of the session and closes it when the
         * JVM exits (SIGTERM, SIGINT, {@code System.exit}). Default false. {@link Session#close()}
         * removes the hook.
         */
        public Builder resignOnShutdown(boolean yes) { this.resignOnShutdown = yes; return this; }

        /**
         * More servers of one cluster (Galera, Group Replication), as for
         * {@link Elector.Builder#fallbackClients}: after a call fails with a transient error (a
         * lost or refused connection, a timeout, a cluster error), every later call of the
         * session goes to the next server, in turn. A null one is refused
         * ({@link InvalidArgumentException#parameter()} {@code "fallbackClients"}). The session
         * keeps their pools: they may be closed before it.
         */
        public Builder fallbackClients(Client... clients) {
            Elector.addFallbacks(fallbacks, clients);
            return this;
        }

        /** Validates the settings and makes the session (it connects to nothing until its first elector campaigns). */
        public Session build() {
            return new Session(this);
        }
    }
}
