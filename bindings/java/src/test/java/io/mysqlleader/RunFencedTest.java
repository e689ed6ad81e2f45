package io.mysqlleader;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Issue 41, "Long jobs and Spring": {@link Elector#runFenced}, the unit of work of the core's
 * fenced transactions on the application's own JDBC connection (MariaDB Connector/J, or MySQL
 * Connector/J on MySQL): fence, work, fence again before COMMIT, commit; on any exception a
 * rollback and the exception rethrown; autocommit always as it was.
 */
class RunFencedTest {
    static TestDb db;
    static Client client;
    static final Duration WAIT = Duration.ofSeconds(15);
    /** A long lease: the next renew (lease / 5) is 6 s away, so an elector learns of a takeover only from its fence. */
    static final Duration LONG_LEASE = Duration.ofSeconds(30);
    static final boolean MYSQL = "mysql".equals(System.getenv("MYSQLLEADER_TEST_KIND"));

    @BeforeAll
    static void setUp() throws Exception {
        db = TestDb.migrated("fenced");
        client = Client.connect(db.url);
        db.exec("CREATE TABLE ledger (id INT PRIMARY KEY, term BIGINT NOT NULL) ENGINE=InnoDB");
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (client != null) client.close();
        if (db != null) db.close();
    }

    static Elector leader(String service, String node, Duration lease) throws Exception {
        Elector e = Elector.builder(client, service).nodeId(node).lease(lease).build();
        assertTrue(e.awaitLeadership(WAIT), "no leadership: " + e.lastCallError());
        return e;
    }

    static void insert(Connection conn, int id, long term) throws SQLException {
        try (PreparedStatement st = conn.prepareStatement("INSERT INTO ledger (id, term) VALUES (?, ?)")) {
            st.setInt(1, id);
            st.setLong(2, term);
            st.executeUpdate();
        }
    }

    /** The terms committed under {@code id}, read on a connection of its own. */
    static List<Long> committed(int id) throws SQLException {
        try (Connection c = db.connection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT term FROM ledger WHERE id = " + id)) {
            List<Long> out = new java.util.ArrayList<>();
            while (rs.next()) out.add(rs.getLong(1));
            return out;
        }
    }

    /** (a) The work's writes commit, at the term it was given (the leader's); autocommit is as it was, on or off. */
    @Test
    void commitsTheWorksWritesAtTheTerm() throws Exception {
        try (Elector a = leader("commit", "a", LONG_LEASE); Connection conn = db.connection()) {
            long term = a.term();
            Long given = a.runFenced(conn, (c, t) -> {
                assertSame(conn, c);
                assertFalse(c.getAutoCommit(), "the work runs with autocommit on");
                insert(c, 1, t);
                insert(c, 2, t);
                return t;
            });
            assertEquals(term, given);
            assertEquals(List.of(term), committed(1));
            assertEquals(List.of(term), committed(2));
            assertTrue(conn.getAutoCommit(), "autocommit was not turned on again");
            assertTrue(a.isLeader());

            // Autocommit off already (no transaction open): it stays off, and the unit is committed.
            conn.setAutoCommit(false);
            assertEquals("done", a.runFenced(conn, (c, t) -> { insert(c, 3, t); return "done"; }));
            assertFalse(conn.getAutoCommit(), "autocommit was off and was turned on");
            assertEquals(List.of(term), committed(3));
            // Committed, so the fence's lock is gone: an operator's takeover goes through (under a
            // lock left behind it would wait 1 s and fail with 1205).
            CampaignResult forced = client.forceLeader("commit", "b", LONG_LEASE);
            assertEquals("b", forced.leaderId());
            assertEquals(term + 1, forced.term());
        }
    }

    /** (b) A work that throws: nothing of it commits, the exception comes back unchanged, autocommit is as it was. */
    @Test
    void aWorkThatThrowsCommitsNothingAndRestoresAutocommit() throws Exception {
        try (Elector a = leader("throws", "a", LONG_LEASE); Connection conn = db.connection()) {
            SQLException boom = new SQLException("the work's own failure", "HY000");
            SQLException thrown = assertThrows(SQLException.class, () -> a.runFenced(conn, (c, t) -> {
                insert(c, 10, t);
                throw boom;
            }));
            assertSame(boom, thrown);
            assertEquals(List.of(), committed(10), "a write of the failed work was committed");
            assertTrue(conn.getAutoCommit(), "autocommit was not turned on again");

            // An unchecked exception, and a statement the server rejects, alike.
            IllegalStateException bug = assertThrows(IllegalStateException.class, () -> a.runFenced(conn, (c, t) -> {
                insert(c, 11, t);
                throw new IllegalStateException("a bug in the work");
            }));
            assertEquals("a bug in the work", bug.getMessage());
            assertThrows(SQLException.class, () -> a.runFenced(conn, (c, t) -> {
                insert(c, 12, t);
                insert(c, 12, t); // duplicate key
                return null;
            }));
            assertEquals(List.of(), committed(11));
            assertEquals(List.of(), committed(12));
            assertTrue(conn.getAutoCommit());

            // With autocommit off before, it is off after.
            conn.setAutoCommit(false);
            assertThrows(SQLException.class, () -> a.runFenced(conn, (c, t) -> { insert(c, 13, t); throw boom; }));
            assertFalse(conn.getAutoCommit());
            conn.commit(); // nothing is left open to commit
            assertEquals(List.of(), committed(13));
            assertTrue(a.isLeader(), "a failed work stepped the leader down");
        }
    }

    /**
     * (c) An operator moves the seat while this node still believes it leads (its next renew is
     * 6 s away): the fence is refused (45001), the work never runs, nothing commits, and the
     * elector has stepped down by the time runFenced throws.
     */
    @Test
    void aRefusedFenceCommitsNothingAndStepsTheElectorDown() throws Exception {
        try (Elector a = leader("refused", "a", LONG_LEASE); Connection conn = db.connection()) {
            long term = a.term();
            client.forceLeader("refused", "b", LONG_LEASE);
            assertTrue(a.isLeader(), "a cannot know yet (its next renew is 6 s away)");
            AtomicBoolean ran = new AtomicBoolean();
            NotLeaderException e = assertThrows(NotLeaderException.class, () -> a.runFenced(conn, (c, t) -> {
                ran.set(true);
                insert(c, 20, t);
                return null;
            }));
            assertFalse(a.isLeader(), "a still reports leading right after runFenced was refused");
            assertEquals("45001", e.sqlState(), e.toString());
            assertEquals(term + 1, e.currentTerm().orElseThrow());
            assertFalse(ran.get(), "the work ran after a refused fence");
            assertEquals(List.of(), committed(20));
            assertTrue(conn.getAutoCommit());
        }
    }

    /**
     * (c') The fence before COMMIT: inside the work the first fence's lock is released (MariaDB: a
     * ROLLBACK TO SAVEPOINT of a savepoint taken before runFenced, as an ORM's nested block does;
     * MySQL, where that keeps the lock: the work ends the transaction itself), an operator moves
     * the seat, and the work writes on. That write must not commit: the fence before COMMIT is
     * refused, and the elector steps down.
     */
    @Test
    void theFenceBeforeCommitRefusesWritesAfterTheLockWasReleased() throws Exception {
        try (Elector a = leader("atcommit", "a", LONG_LEASE); Connection conn = db.connection()) {
            long term = a.term();
            Savepoint sp = null;
            if (!MYSQL) {
                conn.setAutoCommit(false);
                sp = conn.setSavepoint("before_fence");
            }
            Savepoint before = sp;
            NotLeaderException e = assertThrows(NotLeaderException.class, () -> a.runFenced(conn, (c, t) -> {
                insert(c, 30, t);
                if (before != null) c.rollback(before); else c.rollback();
                CampaignResult forced = client.forceLeader("atcommit", "b", LONG_LEASE); // would wait 1 s, then 1205, under the lock
                assertEquals("b", forced.leaderId());
                insert(c, 31, t); // the stale write
                return null;
            }));
            System.out.println("java: runFenced refused at COMMIT: " + e);
            assertFalse(a.isLeader(), "a still reports leading right after runFenced was refused");
            assertEquals(term + 1, client.currentLeader("atcommit").term());
            assertEquals(List.of(), committed(30));
            assertEquals(List.of(), committed(31), "a write made after the lock was released committed");
            assertEquals(MYSQL, conn.getAutoCommit(), "autocommit is not as it was");
            if (!MYSQL) conn.rollback();
        }
    }

    /** (d) Not leading: NotLeaderException at once, the work never runs, autocommit is as it was. */
    @Test
    void aFollowerIsRefusedWithoutRunningTheWork() throws Exception {
        try (Elector a = leader("follower", "a", LONG_LEASE);
             Elector b = Elector.builder(client, "follower").nodeId("b").lease(LONG_LEASE).build();
             Connection conn = db.connection()) {
            assertFalse(b.isLeader());
            AtomicBoolean ran = new AtomicBoolean();
            NotLeaderException e = assertThrows(NotLeaderException.class, () -> b.runFenced(conn, (c, t) -> {
                ran.set(true);
                return null;
            }));
            assertNull(e.sqlState(), "a round trip was made: " + e);
            assertFalse(ran.get(), "the work ran on a follower");
            assertTrue(conn.getAutoCommit());
            assertTrue(a.isLeader());
            InvalidArgumentException nulls = assertThrows(InvalidArgumentException.class, () -> a.runFenced(null, (c, t) -> null));
            assertEquals("connection", nulls.parameter());
            nulls = assertThrows(InvalidArgumentException.class, () -> a.runFenced(conn, null));
            assertEquals("work", nulls.parameter());
        }
    }

    /**
     * (e) Bounded by the lease it was fenced under (the core's rule 4): a work that returns after
     * that lease commits nothing; the elector, which renewed meanwhile, goes on leading (at
     * REPEATABLE READ the fence before COMMIT would read the lease as of the first fence, and be
     * refused, stepping it down for nothing).
     */
    @Test
    void aWorkLongerThanTheLeaseCommitsNothingAndTheLeaderStays() throws Exception {
        try (Elector a = leader("outlast", "a", Duration.ofSeconds(2)); Connection conn = db.connection()) {
            ServerException e = assertThrows(ServerException.class, () -> a.runFenced(conn, (c, t) -> {
                insert(c, 40, t);
                try {
                    Thread.sleep(2_500);
                } catch (InterruptedException x) {
                    throw new AssertionError(x);
                }
                return null;
            }));
            assertTrue(e.getMessage().contains("outlasted the lease"), e.getMessage());
            assertEquals(List.of(), committed(40));
            assertTrue(conn.getAutoCommit());
            assertTrue(a.isLeader(), "the leader stepped down: " + a.lastCallError());
        }
    }

    /** The session's idle_transaction_timeout (MariaDB), read on {@code conn}. */
    static long idleBound(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT @@session.idle_transaction_timeout")) {
            assertTrue(rs.next());
            return rs.getLong(1);
        }
    }

    /**
     * (f) The connection goes back as it was (MariaDB, where the fence lowers the session's
     * idle_transaction_timeout to the lease left): after a commit and after a refused unit, the
     * value runFenced found; an unfenced transaction on the pooled connection afterwards may idle
     * longer than the lease.
     */
    @Test
    void theSessionsIdleBoundIsRestoredAfterTheUnit() throws Exception {
        if (MYSQL) return; // MySQL has no idle_transaction_timeout (the fence sets nothing there)
        try (Elector a = leader("idlebound", "a", Duration.ofSeconds(3)); Connection conn = db.connection()) {
            try (Statement st = conn.createStatement()) {
                st.execute("SET SESSION idle_transaction_timeout = 600");
            }
            long inside = a.runFenced(conn, (c, t) -> idleBound(c));
            assertTrue(inside >= 1 && inside <= 5, "the fence bounds the unit by its lease (3 s): " + inside);
            assertEquals(600, idleBound(conn), "after a commit");
            client.forceLeader("idlebound", "b", LONG_LEASE);
            assertThrows(NotLeaderException.class, () -> a.runFenced(conn, (c, t) -> idleBound(c)));
            assertEquals(600, idleBound(conn), "after a refusal");
            // An unfenced transaction idles past the old lease and commits.
            conn.setAutoCommit(false);
            insert(conn, 50, 0);
            Thread.sleep(4_500);
            conn.commit();
            conn.setAutoCommit(true);
            assertEquals(List.of(0L), committed(50));
        }
    }
}
