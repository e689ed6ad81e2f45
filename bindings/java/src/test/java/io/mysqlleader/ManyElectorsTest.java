package io.mysqlleader;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Issue 42: the plain electors of one client share its connections. Each used to renew with a
 * call of its own on a connection of the client's pool (100 at most), so 105 or 200 electors on
 * one client held no seat after a lease; now they ride the client's shared session (one call
 * connection, one wake-up lock) and all lead. (10,000 on one client: bindings/c/test_mysqlleader.c.)
 */
class ManyElectorsTest {
    static final int N = 300;
    static final Duration LEASE = Duration.ofSeconds(2);
    static TestDb db;

    @BeforeAll
    static void setUp() throws Exception {
        db = TestDb.migrated("many");
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (db != null) db.close();
    }

    /** One number from a statement on a fresh JDBC connection (its own connection counted). */
    static long count(String sql) throws Exception {
        try (Connection c = db.connection(); Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            assertTrue(r.next());
            return r.getLong(1);
        }
    }

    static long accountConnections() throws Exception {
        return count("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1)");
    }

    @Test
    void threeHundredPlainElectorsOnOneClientAllLeadAndKeepTheirSeats() throws Exception {
        long before = accountConnections();
        List<Elector> electors = new ArrayList<>();
        try (Client client = Client.connect(db.url)) {
            try {
                for (int i = 0; i < N; i++) {
                    electors.add(Elector.builder(client, "many-" + i).nodeId("many").lease(LEASE).build());
                }
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (System.nanoTime() < deadline && !electors.stream().allMatch(Elector::isLeader)) Thread.sleep(100);
                long leading = electors.stream().filter(Elector::isLeader).count();
                long during = accountConnections();
                System.out.printf("many: %d of %d plain electors on one client lead; the account's connections: %d before, %d during%n",
                        leading, N, before, during);
                assertEquals(N, leading);
                // The client's shared session: its call connection and its wake-up lock's (plus,
                // rarely, a short-lived one that ends a call left running).
                assertTrue(during - before <= 3, "connections " + before + " before, " + during + " during");
                long[] terms = electors.stream().mapToLong(Elector::term).toArray();
                // Two leases later: every seat still held at its term (the renews reach them all).
                Thread.sleep(LEASE.multipliedBy(2).plusMillis(500).toMillis());
                int lost = 0;
                for (int i = 0; i < N; i++) {
                    if (!electors.get(i).isLeader() || electors.get(i).term() != terms[i]) lost++;
                }
                assertEquals(0, lost, lost + " of " + N + " lost their seat");
            } finally {
                for (Elector e : electors) e.close();
            }
        }
        assertEquals(0, count("SELECT COUNT(*) FROM leader_election WHERE service_id LIKE 'many-%' AND leader_id IS NOT NULL"),
                "closing each elector resigns its seat");
    }
}
