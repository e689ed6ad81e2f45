package io.mysqlleader;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.ByteByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

import java.time.Duration;

/**
 * A pool of connections to one database ({@code mysqlleader_client}), with the one-shot calls
 * of the procedures and {@link #migrate()}. Thread-safe; connections open on first use.
 * Electors made from it keep the pool alive, so it may be closed before them.
 *
 * <pre>{@code
 * try (Client client = Client.connect("mysql://app:secret@db:3306/app")) {
 *     client.migrate();
 *     CampaignResult r = client.campaign("billing", "web-1", Duration.ofSeconds(10));
 * }
 * }</pre>
 *
 * Every call is bounded by the request timeout (5 s unless {@link #requestTimeout(Duration)}
 * says otherwise) and fails with a {@link MysqlLeaderException} subclass.
 */
public final class Client implements AutoCloseable {
    final Handle handle;

    private Client(Pointer p) {
        this.handle = new Handle("client", p);
    }

    /**
     * A client for {@code mysql://user:password@host:port/database} (TLS as query parameters:
     * {@code ssl-mode}, {@code ssl-ca}, {@code ssl-cert}, {@code ssl-key}). Does not connect yet.
     *
     * @throws InvalidArgumentException a malformed URL (the message never shows the password)
     */
    public static Client connect(String url) {
        PointerByReference out = new PointerByReference();
        int rc = Lib.C.mysqlleader_client_new(url, out);
        if (rc != 0) throw MysqlLeaderException.last(rc);
        return new Client(out.getValue());
    }

    /**
     * A client for the database of the application's own JDBC URL ({@code jdbc:mysql://} or
     * {@code jdbc:mariadb://}, one host; the URL a {@code DataSource} is configured with, e.g.
     * HikariCP's {@code getJdbcUrl()}), with that account: {@link JdbcUrls} says what carries over
     * (TLS modes) and what does not (other driver parameters). The library keeps connections of its
     * own (two per elector at most): it never borrows the application's pool. Does not connect yet.
     *
     * <pre>{@code
     * HikariDataSource ds = ...;
     * Client client = Client.connectJdbc(ds.getJdbcUrl(), ds.getUsername(), ds.getPassword());
     * }</pre>
     *
     * @param user the account (null: the URL's {@code user} parameter)
     * @param password its password (null: the URL's {@code password} parameter)
     * @throws InvalidArgumentException not a single-host {@code jdbc:mysql:} or {@code jdbc:mariadb:}
     *         URL, or one without an account (the message never shows the password); parameter {@code url}
     */
    public static Client connectJdbc(String jdbcUrl, String user, String password) {
        String url;
        try {
            url = JdbcUrls.toMysqlLeaderUrl(jdbcUrl, user, password);
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException(ErrorKind.INVALID_ARGUMENT, "mysqlleader: url: " + e.getMessage(), "url", null, 0, false, e);
        }
        return connect(url);
    }

    /** Sets the longest one call may take (1 ms to 1 day) before it fails with {@link ConnectionException}; returns this client. */
    public Client requestTimeout(Duration timeout) {
        long ms = Args.millis(timeout, "timeout_ms");
        handle.check(p -> Lib.C.mysqlleader_client_set_request_timeout(p, ms));
        return this;
    }

    /** Installs or upgrades the election schema; returns the number of migrations applied now (0: already current). */
    public int migrate() {
        LongByReference applied = new LongByReference();
        handle.check(p -> Lib.C.mysqlleader_migrate(p, applied));
        return (int) applied.getValue();
    }

    /** {@code CALL campaign(service, node, lease)}: takes a vacant or expired seat, renews the caller's, else changes nothing. */
    public CampaignResult campaign(String serviceId, String nodeId, Duration lease) {
        long ms = Args.millis(lease, "lease_ms");
        Lib.CampaignRow row = new Lib.CampaignRow();
        handle.check(p -> Lib.C.mysqlleader_campaign(p, serviceId, nodeId, ms, row));
        return new CampaignResult(row.is_leader != 0, Args.id(row.leader_id), row.term, Duration.ofMillis(row.lease_remaining_ms));
    }

    /** {@code CALL am_i_leader(service, node)}: a read; whether the node holds a valid lease. */
    public LeaderCheck amILeader(String serviceId, String nodeId) {
        Lib.CheckRow row = new Lib.CheckRow();
        handle.check(p -> Lib.C.mysqlleader_am_i_leader(p, serviceId, nodeId, row));
        return new LeaderCheck(row.is_leader != 0, row.term, Duration.ofMillis(row.lease_remaining_ms));
    }

    /** {@code CALL current_leader(service)}: a read; who leads now. */
    public CurrentLeader currentLeader(String serviceId) {
        Lib.CurrentLeaderRow row = new Lib.CurrentLeaderRow();
        handle.check(p -> Lib.C.mysqlleader_current_leader(p, serviceId, row));
        return new CurrentLeader(Args.id(row.leader_id), row.term, Duration.ofMillis(row.lease_remaining_ms));
    }

    /** {@code CALL force_leader(service, node, lease)}: installs the node at once with a new term (operator role). */
    public CampaignResult forceLeader(String serviceId, String nodeId, Duration lease) {
        long ms = Args.millis(lease, "lease_ms");
        Lib.CampaignRow row = new Lib.CampaignRow();
        handle.check(p -> Lib.C.mysqlleader_force_leader(p, serviceId, nodeId, ms, row));
        return new CampaignResult(row.is_leader != 0, Args.id(row.leader_id), row.term, Duration.ofMillis(row.lease_remaining_ms));
    }

    /** {@code CALL reelect(service)}: ends the current lease now; the next campaign of any node wins (operator role). */
    public ReelectResult reelect(String serviceId) {
        Lib.ReelectRow row = new Lib.ReelectRow();
        handle.check(p -> Lib.C.mysqlleader_reelect(p, serviceId, row));
        return new ReelectResult(Args.id(row.previous_leader_id), row.term);
    }

    /** {@code CALL resign(service, node)}: ends the node's lease now if and only if it leads. */
    public ResignResult resign(String serviceId, String nodeId) {
        Lib.ResignRow row = new Lib.ResignRow();
        handle.check(p -> Lib.C.mysqlleader_resign(p, serviceId, nodeId, row));
        return new ResignResult(row.resigned != 0, row.term);
    }

    /**
     * {@code CALL handover(service, to_node)} (operator role): ends the current term now (it ends
     * {@code handed_over}), vacates the seat and reserves it for {@code toNode} for one lease, so that
     * only {@code toNode} may begin the next term, at its next campaign. Nothing changes when
     * {@code toNode} leads already. Returns the seat after the call, seen from {@code toNode}
     * ({@code isLeader}: it leads). The leader learns at its next renew ({@link StopReason#HANDED_OVER}).
     */
    public CampaignResult handover(String serviceId, String toNode) {
        Lib.CampaignRow row = new Lib.CampaignRow();
        handle.check(p -> Lib.C.mysqlleader_handover(p, serviceId, toNode, row));
        return new CampaignResult(row.is_leader != 0, Args.id(row.leader_id), row.term, Duration.ofMillis(row.lease_remaining_ms));
    }

    /**
     * {@code CALL assert_leader(service, node, term)} as a one-shot check in a transaction of its
     * own ({@link NotLeaderException} unless the node leads at exactly {@code term}). To fence
     * writes, use {@link Elector#fence(java.sql.Connection)} inside their transaction.
     */
    public LeaderCheck assertLeader(String serviceId, String nodeId, long term) {
        Lib.CheckRow row = new Lib.CheckRow();
        handle.check(p -> Lib.C.mysqlleader_assert_leader(p, serviceId, nodeId, term, row));
        return new LeaderCheck(row.is_leader != 0, row.term, Duration.ofMillis(row.lease_remaining_ms));
    }

    /** {@code CALL set_expiry_event(enabled)}; returns whether the event is enabled now (operator role). */
    public boolean setExpiryEvent(boolean enabled) {
        ByteByReference out = new ByteByReference();
        handle.check(p -> Lib.C.mysqlleader_set_expiry_event(p, (byte) (enabled ? 1 : 0), out));
        return out.getValue() != 0;
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return handle.closed();
    }

    /** Releases the client (waiting for calls in flight); idempotent. Electors made from it go on. */
    @Override
    public void close() {
        Pointer p = handle.take();
        if (p != null) Lib.C.mysqlleader_client_free(p);
    }
}
