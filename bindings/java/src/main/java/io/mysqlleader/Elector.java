package io.mysqlleader;

import com.sun.jna.CallbackThreadInitializer;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.ByteByReference;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One node's part in the election of one service ({@code mysqlleader_elector}): it campaigns in
 * the background from {@link Builder#build()} on, renews while it leads, and steps down by its
 * local deadline when renews fail. The loop, the timers and every decision are the library's;
 * this class adds Java's idioms only.
 *
 * <pre>{@code
 * try (Elector elector = Elector.builder(client, "billing").nodeId("web-1").lease(Duration.ofSeconds(10)).build()) {
 *     if (elector.awaitLeadership(Duration.ofSeconds(30))) {
 *         try (Connection conn = dataSource.getConnection()) {   // e.g. HikariCP
 *             elector.runFenced(conn, (c, term) -> {              // CALL assert_leader(..., term) first
 *                 // ... the leader's writes on c ...
 *                 return null;
 *             });                                                 // fenced again, committed: no takeover commits in between
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>Safety: {@link #isLeader()} is true only while the seat is held <em>and</em> the local
 * deadline has not passed at that moment; a thread paused after asking still acts late, so fence
 * database writes: {@link #runFenced(Connection, FencedWork)} runs a unit of work as one fenced
 * transaction, {@link #fence(Connection)} fences a transaction of your own.
 *
 * <p>An elector comes from {@link #builder(Client, String)} or, sharing one connection and one
 * renew with the other services of one node, from {@link Session#elector(String)}; both have
 * this API. Closing a {@link Session} closes the electors it made.
 *
 * <p>Thread-safe. {@link #close()} resigns (unless {@link Builder#resignOnClose(boolean)} says
 * not to), delivers the last events and waits for calls in flight; calls after it fail with
 * {@link InvalidStateException}.
 */
public final class Elector implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("mysqlleader.java");

    private final Handle handle;
    private final String serviceId;
    private final String nodeId;
    private final Hub hub;
    /** Kept reachable until the C elector is freed: the library calls it until then. */
    private final Lib.EventCallback callback;
    private final Thread shutdownHook;
    /** The session that made this elector, or null. */
    private final Session session;

    /**
     * The part that gives a C elector its callback: called once with the callback the library
     * must call (kept reachable by the Elector), returns the started {@code mysqlleader_elector},
     * or throws the failure.
     */
    interface Starter {
        Pointer start(Lib.EventCallback callback);
    }

    /**
     * Wraps the C elector that {@code starter} starts: {@link Builder#build()} starts one with
     * {@code mysqlleader_elector_new}, {@link Session#elector} with {@code mysqlleader_session_elector}.
     * {@code session} is the session that made it, or null.
     */
    Elector(String serviceId, List<ElectorListener> listeners, boolean resignOnShutdown, Session session, Starter starter) {
        this.hub = new Hub(listeners);
        this.callback = (userdata, event) -> hub.deliver(event);
        Native.setCallbackThreadInitializer(callback, new CallbackThreadInitializer(true, false, "mysqlleader-cb"));
        this.handle = new Handle("elector", starter.start(callback));
        this.hub.elector = this;
        this.serviceId = serviceId;
        this.session = session;
        this.nodeId = copy(Lib.C::mysqlleader_elector_node_id);
        if (resignOnShutdown) {
            shutdownHook = new Thread(this::closeOnShutdown, "mysqlleader-shutdown-" + serviceId);
            Runtime.getRuntime().addShutdownHook(shutdownHook);
        } else {
            shutdownHook = null;
        }
    }

    /** {@link Builder#build()}: a stand-alone elector over the builder's client (and fallbacks). */
    private static Elector start(Builder b) {
        Lib.ElectorConfig config = b.settings.toNative(b.serviceId);
        // The C elector takes the client's pool (and the fallbacks'): hold their handles during the call.
        return new Elector(b.serviceId, b.listeners, b.resignOnShutdown, null, callback ->
                b.client.handle.use(primary -> withFallbacks(b.fallbacks, 0, new Pointer[b.fallbacks.size()], fallbacks -> {
                    if (fallbacks != null) {
                        config.fallback_clients = fallbacks;
                        config.fallback_client_count = b.fallbacks.size();
                    }
                    PointerByReference out = new PointerByReference();
                    int rc = Lib.C.mysqlleader_elector_new(primary, config, callback, null, out);
                    if (rc != 0) throw MysqlLeaderException.last(rc);
                    return out.getValue();
                })));
    }

    /**
     * Holds every fallback client's handle while {@code body} runs with their pointers (null for
     * none). Also {@link Session}'s.
     */
    static <T> T withFallbacks(List<Client> clients, int i, Pointer[] ptrs, Handle.Call<T> body) {
        if (i == clients.size()) {
            if (ptrs.length == 0) return body.run(null);
            Memory array = new Memory((long) Native.POINTER_SIZE * ptrs.length);
            array.write(0, ptrs, 0, ptrs.length);
            return body.run(array);
        }
        return clients.get(i).handle.use(p -> {
            ptrs[i] = p;
            return withFallbacks(clients, i + 1, ptrs, body);
        });
    }

    /**
     * Adds {@code clients} to {@code fallbacks}, in order ({@link Builder#fallbackClients} and
     * {@link Session.Builder#fallbackClients}); a null one is refused naming
     * {@code fallbackClients}.
     */
    static void addFallbacks(List<Client> fallbacks, Client... clients) {
        for (Client c : clients) {
            if (c == null) {
                throw new InvalidArgumentException(ErrorKind.NULL_ARGUMENT, "mysqlleader: a fallback client is null", "fallbackClients", null, 0, false, null);
            }
            fallbacks.add(c);
        }
    }

    /** Starts building an elector for {@code serviceId} (1 to 128 characters) over {@code client}. */
    public static Builder builder(Client client, String serviceId) {
        return new Builder(client, serviceId);
    }

    // --- queries: answered at once by the library, never a round trip ---------------------------

    /** The service this elector campaigns for. */
    public String serviceId() { return serviceId; }

    /** This node's id: the configured one, or the library's {@code hostname:pid} default. */
    public String nodeId() { return nodeId; }

    /**
     * Whether this node leads now: it holds the seat and its local deadline has not passed at this
     * very moment. False once the elector is closed (it leads nothing then: a shutdown hook or a
     * health check that asks during or after {@link #close()} gets an answer, not an exception).
     */
    public boolean isLeader() {
        ByteByReference out = new ByteByReference();
        try {
            handle.check(p -> Lib.C.mysqlleader_elector_is_leader(p, out));
        } catch (InvalidStateException closed) {
            return false;
        }
        return out.getValue() != 0;
    }

    /**
     * Hands leadership over to the node {@code toNode}, with no overlap: this node steps down at
     * once (a {@code STOPPED_LEADING} event with {@link StopReason#HANDED_OVER}), ends its term in
     * the database with the seat reserved for {@code toNode} for one lease ({@code CALL resign_to}),
     * then lets go of its wake-up lock, so that {@code toNode}, when it campaigns, takes the seat
     * within milliseconds. Unlike {@link #resign()}, the elector goes on campaigning as a follower.
     * Returns whether this node led (a follower's handover changes nothing). Blocks for at most
     * twice the request timeout.
     *
     * @throws InvalidArgumentException {@code toNode} is this node's own id (or null, or too long);
     *         {@link InvalidArgumentException#parameter()} is {@code "to_node"}
     */
    public boolean handover(String toNode) {
        ByteByReference out = new ByteByReference();
        try {
            handle.check(p -> Lib.C.mysqlleader_elector_handover(p, toNode, out));
        } finally {
            hub.changed(); // waiters ask again (a follower's call comes with no event)
        }
        return out.getValue() != 0;
    }

    /** The term seen last: while leading, the fencing token. */
    public long term() {
        LongByReference out = new LongByReference();
        handle.check(p -> Lib.C.mysqlleader_elector_term(p, out));
        return out.getValue();
    }

    /** How long this node may still act as leader without another renew; zero when not leading. */
    public Duration validFor() {
        LongByReference out = new LongByReference();
        handle.check(p -> Lib.C.mysqlleader_elector_valid_for_ms(p, out));
        return Duration.ofMillis(out.getValue());
    }

    /** The leader seen last, or null when the seat was vacant. */
    public String leaderId() {
        String id = copy(Lib.C::mysqlleader_elector_leader_id);
        return id.isEmpty() ? null : id;
    }

    /** Whether the elector still campaigns (false after {@link #resign()} or a failure of its task). */
    public boolean isCampaigning() {
        Lib.StateRow row = new Lib.StateRow();
        handle.check(p -> Lib.C.mysqlleader_elector_snapshot(p, row));
        return row.campaigning != 0;
    }

    /** The message of the elector's last failed call to the database (why it does not lead), or null after a success. */
    public String lastCallError() {
        String e = copy(Lib.C::mysqlleader_elector_last_call_error);
        return e.isEmpty() ? null : e;
    }

    /**
     * The elector's metrics in the Prometheus text format (version 0.0.4), labelled
     * {@code name="<service>"}: {@code leader_election_master_status} (1 while this node leads,
     * exact at the moment of the call, as {@link #isLeader()}; else 0), {@code mysqlleader_term},
     * {@code mysqlleader_leadership_transitions_total}, {@code mysqlleader_campaign_errors_total}
     * and the histogram {@code mysqlleader_campaign_duration_seconds} — what the Rust library and
     * the CLI's {@code /metrics} render ({@code mysqlleader_elector_metrics_text}). Never blocks:
     * serve it from a {@code /metrics} endpoint with the content type
     * {@code text/plain; version=0.0.4}. {@link InvalidStateException} once closed.
     */
    public String metricsText() {
        return copy(Lib.C::mysqlleader_elector_metrics_text, METRICS_BUFFER_SIZE);
    }

    /** The first buffer for {@link #metricsText()}: the text is about 2.5 kB (more with a long service id). */
    private static final int METRICS_BUFFER_SIZE = 4096;

    /** The task runs and its last call succeeded within one lease (what a {@code /healthz} endpoint answers). */
    public boolean isHealthy() {
        ByteByReference out = new ByteByReference();
        handle.check(p -> Lib.C.mysqlleader_elector_is_healthy(p, out));
        return out.getValue() != 0;
    }

    // --- events ---------------------------------------------------------------------------------

    /** Adds a listener for the events from now on (also possible at {@link Builder#listener}, to see the first ones). */
    public void addListener(ElectorListener listener) {
        hub.listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** Removes a listener; returns whether it was there. */
    public boolean removeListener(ElectorListener listener) {
        return hub.listeners.remove(listener);
    }

    // --- actions --------------------------------------------------------------------------------

    /**
     * Steps down at once and ends this node's lease in the database, so another node takes over
     * on its next attempt; afterwards the elector only observes. Returns whether this node held
     * the seat. Blocks for at most twice the request timeout; {@link ConnectionException} when
     * the database could not be told (the node has stepped down all the same, its lease lapses).
     */
    public boolean resign() {
        ByteByReference out = new ByteByReference();
        try {
            handle.check(p -> Lib.C.mysqlleader_elector_resign(p, out));
        } finally {
            hub.changed(); // a follower's resign comes with no event: waiters ask again
        }
        return out.getValue() != 0;
    }

    /**
     * Waits until this node leads (true), or until {@code timeout} passes or the node no longer
     * campaigns (false). {@link Duration#ZERO} only looks. The answer is the library's
     * ({@code mysqlleader_elector_wait}), asked again after each event it publishes.
     *
     * @throws InterruptedException the waiting thread was interrupted
     * @throws InvalidStateException the elector is closed, also when closed during the wait; or
     *         the call would wait on the elector's callback thread (inside a listener)
     * @throws MysqlLeaderException the elector's last call failed with an error retrying cannot
     *         fix ({@link AuthenticationException}, {@link PrivilegeException},
     *         {@link NotMigratedException}, {@link AccessDeniedException}, ...; the outcome
     *         {@code MYSQLLEADER_WAIT_FAILED}): thrown at once, the elector keeps trying
     */
    public boolean awaitLeadership(Duration timeout) throws InterruptedException {
        long nanos = Args.timeoutNanos(timeout, "timeout");
        long deadline = System.nanoTime() + nanos;
        while (true) {
            long seen = hub.generation();
            IntByReference out = new IntByReference();
            handle.check(p -> Lib.C.mysqlleader_elector_wait(p, 0, out));
            if (out.getValue() == Lib.WAIT_FAILED) {
                // The library's own answer throws that error with its fields; when the set-up was
                // mended meanwhile it answers, and the loop asks again.
                ByteByReference leading = new ByteByReference();
                handle.check(p -> Lib.C.mysqlleader_elector_wait_for_leadership(p, 0, leading));
                continue;
            }
            if (out.getValue() != Lib.WAIT_TIMED_OUT) return out.getValue() == Lib.WAIT_LEADING;
            long left = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
            if (left <= 0) return false;
            if (Thread.currentThread() == hub.callbackThread) {
                throw new InvalidStateException("mysqlleader: waiting inside a listener would hold back the very events it waits for: wait on another thread");
            }
            hub.awaitChange(seen, left, this);
        }
    }

    /**
     * Runs {@code work} on this thread while this node leads: waits for leadership (without a
     * limit), then calls it. When the library says that term ended (lost seat, deadline passed,
     * resigned, handed over, closed, failed), this thread is interrupted at once, so blocking calls in
     * {@code work} end with {@link InterruptedException}; code that does not block should look at
     * {@link Thread#isInterrupted()} between steps. Fence database writes ({@link #fence}).
     *
     * @return what {@code work} returned, when it finished while this node still led
     * @throws LeadershipLostException leadership ended before {@code work} returned (with
     *         {@code work}'s exception, if any, as the cause); the interrupt is cleared
     * @throws InvalidStateException the node no longer campaigns (resigned, or its task failed), or the elector is closed
     * @throws Exception what {@code work} threw while this node led, unchanged
     */
    public <T> T runWhileLeader(Callable<T> work) throws Exception {
        Objects.requireNonNull(work, "work");
        if (!awaitLeadership(Duration.ofMillis(Long.MAX_VALUE))) {
            throw new InvalidStateException("mysqlleader: the elector no longer campaigns (it resigned, or its task failed): this node will not lead");
        }
        Run run = new Run(term(), Thread.currentThread());
        hub.runs.add(run);
        T result;
        try {
            run.look(this); // the term may have ended already
            result = work.call();
        } catch (Exception e) {
            if (run.finish()) throw new LeadershipLostException(run.term, run.reason, e);
            throw e;
        } finally {
            hub.runs.remove(run);
        }
        if (run.finish()) throw new LeadershipLostException(run.term, run.reason, null);
        return result;
    }

    /**
     * The fence on the application's own transaction: runs {@code CALL assert_leader(service,
     * node, term)} on {@code conn} (any JDBC driver; MariaDB Connector/J and MySQL Connector/J)
     * with the term this node leads at now, inside the transaction the connection has open
     * (autocommit off). On success the term stays share-locked (its history row; never the seat, so the leader renews meanwhile) until that transaction
     * ends, so no takeover can commit before its writes do. Returns the term asserted.
     * {@link #runFenced(Connection, FencedWork)} does the whole transaction: autocommit, this fence,
     * your work, the fence again before COMMIT, the commit or the rollback.
     *
     * @throws NotLeaderException this node does not lead now (no round trip then), or the
     *         database refused the term (SQLSTATE 45001: the server has rolled the transaction
     *         back); after a refusal {@link #isLeader()} is false at once
     * @throws UsageException autocommit is on (the fence would end with its statement and fence nothing)
     * @throws InvalidArgumentException {@code conn} is null
     * @throws AccessDeniedException SQLSTATE 45002: the account may not act on this service
     * @throws ConnectionException the JDBC call failed otherwise (the SQLException is the cause)
     * @throws ServerException the fence outlasted the time this node still leads (its own
     *         timeout: the lease's remaining time, whole seconds, at least 1), or the server
     *         failed it otherwise; roll the transaction back
     */
    public long fence(Connection conn) {
        return fenceAt(conn, 0, 0).term();
    }

    /** A fence that held: the term asserted, and the local deadline ({@link System#nanoTime()}) of the leadership it was asserted under. */
    private record Fenced(long term, long deadlineNanos) {}

    /**
     * {@link #fence}: at the term this node leads at now ({@code wantTerm} 0), or only at
     * {@code wantTerm} (the fence before COMMIT: the first fence's term, never a later one);
     * with {@code notAfterNanos} (0: none), refused (no round trip, no step-down) once that
     * {@link System#nanoTime()} has passed.
     */
    private Fenced fenceAt(Connection conn, long wantTerm, long notAfterNanos) {
        if (conn == null) {
            throw new InvalidArgumentException(ErrorKind.NULL_ARGUMENT, "mysqlleader: connection is null", "connection", null, 0, false, null);
        }
        // 1. This node's view, at one instant: no round trip when it does not lead.
        long seenAt = System.nanoTime(); // before the snapshot: the deadline below errs early
        Lib.StateRow state = new Lib.StateRow();
        handle.check(p -> Lib.C.mysqlleader_elector_snapshot(p, state));
        long term = state.term;
        if (state.is_leader == 0 || (wantTerm != 0 && term != wantTerm)) {
            throw new NotLeaderException("mysqlleader: not the leader: node " + nodeId + " does not lead service "
                    + serviceId + (wantTerm != 0 ? " at term " + wantTerm : "") + " now (term seen last: " + term + ")", null, 0, 0, null);
        }
        if (notAfterNanos != 0 && seenAt - notAfterNanos > 0) {
            // Rule 4 of the core's fenced transactions (src/fenced.rs): never past the lease it was
            // fenced under. At REPEATABLE READ the fence below would read the seat as of the first
            // fence, see that lease run out, and be refused: a refusal that would step a leader down.
            throw new ServerException("mysqlleader: the fenced work outlasted the lease it was fenced under (by "
                    + (seenAt - notAfterNanos) / 1_000_000 + " ms): nothing commits; for a job longer than a lease, "
                    + "fence your own transaction with fence(conn), first in it, and commit", null, 0, true, null);
        }
        try {
            // 2. Only inside a transaction: with autocommit on the lock would end with the CALL.
            if (conn.getAutoCommit()) {
                throw new UsageException("mysqlleader: fence needs the connection's open transaction: call setAutoCommit(false) first", null, 0, null);
            }
            // 3. The guard, with parameters (text or server-prepared alike), bounded by the time
            //    this node still leads (whole seconds, JDBC's unit, at least 1): past it the fence
            //    could only be refused, so a hung server or a lock wait never holds the caller longer.
            try (PreparedStatement st = conn.prepareStatement("CALL assert_leader(?, ?, ?)")) {
                st.setQueryTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, (state.valid_for_ms + 999) / 1000)));
                st.setString(1, serviceId);
                st.setString(2, nodeId);
                st.setLong(3, term); // terms count from 1 by 1: far below 2^63
                st.execute();
                try (ResultSet rs = st.getResultSet()) {
                    if (rs == null || !rs.next() || !rs.getBoolean(1)) {
                        throw new ServerException("mysqlleader: assert_leader returned no row saying is_leader = 1", null, 0, false, null);
                    }
                }
            }
            return new Fenced(term, seenAt + state.valid_for_ms * 1_000_000L);
        } catch (SQLException e) {
            throw fenceError(e, term);
        }
    }

    /**
     * Runs {@code work} as one fenced transaction on {@code conn} and commits it: the unit of work
     * of the core's fenced transactions (Rust {@code elector.fenced(&pool)}, Python
     * {@code elector.fenced()}, Go {@code RunFencedTx}) on the application's own JDBC connection.
     * In order: autocommit off (remembered); {@link #fence(Connection)} first, whose term
     * {@code work} gets; {@code work}; the fence once more, at that same term, right before
     * {@code COMMIT} (a {@code ROLLBACK TO SAVEPOINT} in {@code work} may have released the first
     * fence's lock, and stale writes must not commit); {@code commit()}. On any exception, from
     * {@code work}, a fence or the commit, the transaction is rolled back and the exception
     * rethrown; autocommit is then as it was. A refusal is the {@link NotLeaderException} of
     * {@link #fence}, after which {@link #isLeader()} is false at once.
     *
     * <pre>{@code
     * try (Connection conn = dataSource.getConnection()) {                  // e.g. HikariCP
     *     int sent = elector.runFenced(conn, (c, term) -> {
     *         try (PreparedStatement st = c.prepareStatement(
     *                 "UPDATE invoices SET state = 'sent', term = ? WHERE state = 'due'")) {
     *             st.setLong(1, term);                                     // the fencing token
     *             return st.executeUpdate();
     *         }
     *     });                                                              // committed at that term
     * } catch (NotLeaderException e) {
     *     // another node leads: nothing was committed, elector.isLeader() is false already
     * }
     * }</pre>
     *
     * <p>Like the core's, the transaction is bounded by the lease it was fenced under: when
     * {@code work} returns after the local deadline the first fence saw ({@link #validFor()} then),
     * nothing commits ({@link ServerException}; the elector goes on leading). At
     * {@code REPEATABLE READ} the fence before {@code COMMIT} reads the seat as of the first fence
     * and would be refused past that lease. For a job longer than a lease, run
     * {@link #fence(Connection)} yourself, first in the transaction, then commit (README, "Transactions,
     * autocommit and fencing").
     *
     * <p>{@code work} must not commit, roll back or change autocommit itself. Call this with no
     * transaction open on {@code conn} (autocommit on, as a pool hands connections out, or right
     * after a commit): with autocommit off already, what the connection has open becomes part of
     * the unit, committed or rolled back with it. When even the rollback fails (a broken
     * connection), autocommit is left off, so that nothing commits by restoring it; discard the
     * connection.
     *
     * @return what {@code work} returned, once committed
     * @throws NotLeaderException this node does not lead now ({@code work} does not run), or no
     *         longer at the first fence's term, or the database refused the term at either fence
     * @throws ServerException {@code work} outlasted the lease it was fenced under, or a fence
     *         failed otherwise (see {@link #fence})
     * @throws SQLException what {@code work}, the commit or the connection threw, unchanged
     * @throws InvalidArgumentException {@code conn} or {@code work} is null
     */
    public <T> T runFenced(Connection conn, FencedWork<T> work) throws SQLException {
        if (conn == null) {
            throw new InvalidArgumentException(ErrorKind.NULL_ARGUMENT, "mysqlleader: connection is null", "connection", null, 0, false, null);
        }
        if (work == null) {
            throw new InvalidArgumentException(ErrorKind.NULL_ARGUMENT, "mysqlleader: work is null", "work", null, 0, false, null);
        }
        boolean autoCommit = conn.getAutoCommit();
        if (autoCommit) conn.setAutoCommit(false);
        T result;
        try {
            Fenced first = fenceAt(conn, 0, 0);
            result = work.run(conn, first.term());
            fenceAt(conn, first.term(), first.deadlineNanos()); // rule 3: again before COMMIT, at the same term
            conn.commit();
        } catch (Throwable t) {
            boolean ended;
            try {
                conn.rollback(); // after a refusal the server has rolled back already: a no-op
                ended = true;
            } catch (Throwable r) {
                t.addSuppressed(r);
                ended = false;   // setAutoCommit(true) would commit what is still open
            }
            if (autoCommit && ended) {
                try {
                    conn.setAutoCommit(true);
                } catch (Throwable r) {
                    t.addSuppressed(r);
                }
            }
            if (ended) restoreIdleBound(conn);
            throw t;
        }
        if (autoCommit) {
            try {
                conn.setAutoCommit(true);
            } catch (SQLException e) {
                // Committed already: an exception here would read as a failed unit (and invite a retry).
                LOG.log(System.Logger.Level.WARNING, "runFenced committed, but autocommit could not be turned on again: " + e);
            }
        }
        restoreIdleBound(conn);
        return result;
    }

    /**
     * After a unit of work has ended: the session's {@code idle_transaction_timeout} as the fence
     * found it (MariaDB, where {@code assert_leader} lowers it to the lease left and keeps the
     * value it found in {@code @mysqlleader_idle_tx_was}), so that a pooled connection does not
     * bound the application's later transactions. No round trip on MySQL (it has no such
     * variable). Best effort: a failure is logged, the unit's outcome stands.
     */
    private static void restoreIdleBound(Connection conn) {
        try {
            java.sql.DatabaseMetaData meta = conn.getMetaData();
            String product = (meta.getDatabaseProductName() + " " + meta.getDatabaseProductVersion()).toLowerCase(java.util.Locale.ROOT);
            if (!product.contains("mariadb")) return;
            try (java.sql.Statement st = conn.createStatement()) {
                st.execute("SET SESSION idle_transaction_timeout = CAST(COALESCE(@mysqlleader_idle_tx_was, @@session.idle_transaction_timeout) AS UNSIGNED), "
                        + "@mysqlleader_idle_tx_was = NULL");
            }
        } catch (SQLException e) {
            LOG.log(System.Logger.Level.WARNING, "runFenced: the session's idle_transaction_timeout could not be restored: " + e);
        }
    }

    /**
     * The exception for a failed fence; a refusal (45001) steps the elector down first. The
     * procedures' refusals (SQLSTATE 45000, 45001, 45002) are classified by the C core, as the
     * library's own calls are; any other SQLException by its class.
     */
    private MysqlLeaderException fenceError(SQLException e, long term) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        String message = e.getMessage();
        switch (state) {
            case "45000", "45001", "45002" -> {
                MysqlLeaderException mapped = MysqlLeaderException.classified(e);
                if (mapped instanceof NotLeaderException) {
                    try {
                        noteRefusal(term, e.getErrorCode());
                    } catch (MysqlLeaderException notTold) {
                        // closed meanwhile, or a renew in flight outlasted the wait: the refusal stands
                        mapped.addSuppressed(notTold);
                    }
                }
                return mapped;
            }
            default -> {
                boolean connection = state.startsWith("08") || e instanceof java.sql.SQLTransientConnectionException
                        || e instanceof java.sql.SQLNonTransientConnectionException;
                boolean retryable = e instanceof java.sql.SQLTransientException || e instanceof java.sql.SQLRecoverableException
                        || state.startsWith("40") || connection;
                return connection ? new ConnectionException(message, state, e.getErrorCode(), true, e)
                        : new ServerException(message, state, e.getErrorCode(), retryable, e);
            }
        }
    }

    /**
     * Tells the elector that the database refused its {@code term} (SQLSTATE 45001 from an
     * {@code assert_leader} this application ran itself): it steps down at once when it still
     * leads at that term ({@code mysqlleader_elector_note_refusal}). {@link #fence} does this itself.
     */
    public void noteRefusal(long term) {
        noteRefusal(term, 0);
    }

    /**
     * {@link #noteRefusal(long)} with the refusal's error number ({@link SQLException#getErrorCode()}):
     * 31004, the refusal of a term an operator's handover ended, makes the elector stop leading
     * with {@link StopReason#HANDED_OVER} (its next call acknowledges the handover); any other
     * number with {@link StopReason#LOST_SEAT}.
     */
    public void noteRefusal(long term, int serverCode) {
        handle.check(p -> Lib.C.mysqlleader_elector_note_refusal_code(p, term, serverCode));
    }

    /** Whether {@link #close()} was called, or its {@link Session}'s. */
    public boolean isClosed() {
        return handle.closed();
    }

    /**
     * Stops the elector: resigns first unless configured not to, so another node takes over at
     * once; delivers the last events (stopped leading, reason {@code SHUTDOWN}); waits for calls in
     * flight. Idempotent; may be called from a listener. An elector of a {@link Session} resigns
     * its seat alone; once the session is closed, this does nothing.
     */
    @Override
    public void close() {
        Pointer p = detach();
        if (p != null) {
            free(p); // resigns as configured, delivers the last events
        } else {
            hub.changed();
        }
        if (session != null) session.forget(this);
    }

    /**
     * The first half of {@link #close()}: removes the shutdown hook and takes the C elector
     * (waiting for calls in flight), so that every method from now on behaves as on a closed
     * elector. Returns the pointer, for {@link #free}, or null when closed already.
     */
    Pointer detach() {
        if (shutdownHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException shuttingDown) {
                // the hook itself is closing us
            }
        }
        return handle.take();
    }

    /** The second half of {@link #close()}, for a pointer {@link #detach()} returned: frees the C elector, then wakes the waiters. */
    void free(Pointer p) {
        Lib.C.mysqlleader_elector_free(p);
        hub.changed();
    }

    /** The shutdown hook: hand over now (resign even with resignOnClose(false)), then close. */
    private void closeOnShutdown() {
        try {
            if (!handle.closed()) resign();
        } catch (MysqlLeaderException e) {
            LOG.log(System.Logger.Level.WARNING, "resign on shutdown failed; the lease will lapse: " + e.getMessage());
        }
        close();
    }

    @Override
    public String toString() {
        return "Elector[service=" + serviceId + ", node=" + nodeId + (handle.closed() ? ", closed]" : "]");
    }

    /** Reads a string through one of the C {@code (buf, buf_len, needed_out)} functions. */
    private interface Copy {
        int call(Pointer p, byte[] buf, long len, LongByReference needed);
    }

    private String copy(Copy f) {
        return copy(f, Lib.ID_BUFFER_SIZE);
    }

    /**
     * {@link #copy(Copy)} with a first buffer of {@code size} bytes; a larger one while the string
     * does not fit (it may grow between two calls: the metrics' counters go on).
     */
    private String copy(Copy f, int size) {
        return handle.use(p -> {
            byte[] buf = new byte[size];
            LongByReference needed = new LongByReference();
            int rc = f.call(p, buf, buf.length, needed);
            for (int attempt = 0; attempt < 3 && rc == ErrorKind.BUFFER_TOO_SMALL.code; attempt++) {
                buf = new byte[(int) Math.max(needed.getValue(), 2L * buf.length)];
                rc = f.call(p, buf, buf.length, needed);
            }
            if (rc != 0) throw MysqlLeaderException.last(rc);
            return Lib.string(buf);
        });
    }

    /** A {@link #runWhileLeader} in progress: its term, its thread, and why the term ended. */
    private static final class Run {
        final long term;
        final Thread thread;
        StopReason reason; // set once, under this
        boolean finished;

        Run(long term, Thread thread) {
            this.term = term;
            this.thread = thread;
        }

        /** Asks the library whether the term ended; if so (and the work still runs) interrupts it. */
        void look(Elector e) {
            ByteByReference ended = new ByteByReference();
            IntByReference reason = new IntByReference();
            try {
                e.handle.check(p -> Lib.C.mysqlleader_elector_wait_term_end(p, term, 0, ended, reason));
            } catch (InvalidStateException closed) {
                ended.setValue((byte) 1);
                reason.setValue(StopReason.SHUTDOWN.code);
            }
            if (ended.getValue() == 0) return;
            synchronized (this) {
                if (finished || this.reason != null) return;
                this.reason = StopReason.of(reason.getValue());
                thread.interrupt();
            }
        }

        /** Ends the run: no interrupt after this. Returns whether the term ended first (its interrupt cleared). */
        synchronized boolean finish() {
            if (!finished) {
                finished = true;
                if (reason != null) Thread.interrupted();
            }
            return reason != null;
        }
    }

    /**
     * Where the callback thread delivers events: the listeners, the runs to check, and the waiters
     * of {@link #awaitLeadership}, who ask the library again after each change ({@code generation}).
     */
    private static final class Hub {
        final List<ElectorListener> listeners;
        final List<Run> runs = new CopyOnWriteArrayList<>();
        volatile Elector elector;
        /** The thread that delivers the events, once it has delivered one: no waiting there. */
        volatile Thread callbackThread;
        private long generation;

        Hub(List<ElectorListener> listeners) {
            this.listeners = new CopyOnWriteArrayList<>(listeners);
        }

        synchronized long generation() {
            return generation;
        }

        synchronized void changed() {
            generation++;
            notifyAll();
        }

        /** Blocks until the generation differs from {@code seen}, {@code nanos} pass, or the elector is closed. */
        synchronized void awaitChange(long seen, long nanos, Elector e) throws InterruptedException {
            long until = System.nanoTime() + nanos;
            while (generation == seen && !e.handle.closed()) {
                long left = nanos == Long.MAX_VALUE ? 0 : until - System.nanoTime();
                if (nanos != Long.MAX_VALUE && left <= 0) return;
                if (nanos == Long.MAX_VALUE) wait();
                else wait(left / 1_000_000, (int) (left % 1_000_000));
            }
        }

        /** Runs on the elector's callback thread; never throws into C. */
        void deliver(Lib.EventRow row) {
            callbackThread = Thread.currentThread();
            try {
                ElectorEvent event = new ElectorEvent(ElectorEvent.Kind.of(row.kind), row.term, StopReason.of(row.reason),
                        Lib.string(row.leader_id), Duration.ofMillis(row.valid_for_ms), row.missed,
                        row.kind == 6 ? ErrorKind.of(row.result) : null);
                changed();
                Elector e = elector;
                if (e != null) {
                    for (Run run : runs) run.look(e);
                }
                for (ElectorListener l : listeners) {
                    try {
                        l.onEvent(event);
                    } catch (Throwable t) {
                        LOG.log(System.Logger.Level.ERROR, "a listener threw on " + event + "; the elector goes on", t);
                    }
                }
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.ERROR, "an event could not be delivered", t);
            }
        }
    }

    /**
     * The settings of an elector. Every unset value is the library's default (lease 10 s, renew
     * lease / 5, retry lease / 10, jitter 0.2, request timeout min(lease / 5, 2 s), drift margin
     * lease / 100); the library checks the invariants between them in {@link #build()} and names
     * the field of a violation by its builder method's name ({@code renewInterval}). Durations are whole milliseconds.
     */
    public static final class Builder {
        private final Client client;
        private final String serviceId;
        private final Settings settings = new Settings();
        private boolean resignOnShutdown;
        private final List<Client> fallbacks = new java.util.ArrayList<>();
        private final List<ElectorListener> listeners = new java.util.ArrayList<>();

        private Builder(Client client, String serviceId) {
            if (client == null) {
                throw new InvalidArgumentException(ErrorKind.NULL_ARGUMENT, "mysqlleader: client is null", "client", null, 0, false, null);
            }
            this.client = client;
            this.serviceId = serviceId; // null and bad ids are the library's to reject, by name
        }

        /** This node's name as others see it (1 to 128 characters); default {@code hostname:pid}. */
        public Builder nodeId(String nodeId) { settings.nodeId = nodeId; return this; }

        /** How long a lease lasts after each acquisition or renew (1 ms to 1 day; default 10 s). */
        public Builder lease(Duration lease) { settings.lease(lease); return this; }

        /** How often the leader renews (default lease / 5; at most (lease - drift margin) / 3). */
        public Builder renewInterval(Duration d) { settings.renewInterval(d); return this; }

        /** The longest a follower waits between attempts (default lease / 10; at most the lease). */
        public Builder retryInterval(Duration d) { settings.retryInterval(d); return this; }

        /** A follower's wait is shortened by a random part of up to this fraction (0 to below 1; default 0.2). 0 means none. */
        public Builder retryJitter(double fraction) {
            settings.retryJitter(fraction);
            return this;
        }

        /** The longest one call may take (default min(lease / 5, 2 s); below lease - drift margin). */
        public Builder requestTimeout(Duration d) { settings.requestTimeout(d); return this; }

        /** Subtracted from every local deadline for clock-rate drift (default lease / 100; below the lease). */
        public Builder driftMargin(Duration d) { settings.driftMargin(d); return this; }

        /** Whether {@link Elector#close()} resigns, so another node takes over at once (default true); else the lease lapses. */
        public Builder resignOnClose(boolean yes) { settings.resignOnClose = yes; return this; }

        /**
         * Whether a JVM shutdown hook resigns and closes the elector when the JVM exits
         * (SIGTERM, SIGINT, {@code System.exit}): another node takes over at once instead of after
         * the lease. Default false. {@link Elector#close()} removes the hook.
         */
        public Builder resignOnShutdown(boolean yes) { this.resignOnShutdown = yes; return this; }

        /** More servers of one Galera cluster, tried in turn when a call fails with a connection or cluster error. */
        public Builder fallbackClients(Client... clients) {
            addFallbacks(fallbacks, clients);
            return this;
        }

        /** A listener that sees every event from the first one on. */
        public Builder listener(ElectorListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /** Validates the settings and starts campaigning at once, in the background (never waits for the database). */
        public Elector build() {
            return start(this);
        }
    }
}
