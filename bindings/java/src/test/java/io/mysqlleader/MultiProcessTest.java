package io.mysqlleader;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Electors in separate JVMs ({@link ElectorNode}): a leader killed with SIGKILL is replaced within
 * one lease plus one retry interval (the core's liveness bound: the lease runs out, then the next
 * attempt takes the seat), and a leader sent SIGTERM hands over through its shutdown hook at once:
 * its term ends 'resigned' and the next one begins while the old lease, as it stood before the
 * signal, still ran (a takeover by expiry could not begin before that lease's end). Both times are
 * printed, the handover's beside issue 27's 100 ms; a wall-clock bound is not asserted (these
 * machines are shared: 128 ms once under the whole suite's load).
 */
class MultiProcessTest {
    static TestDb db;
    static final long LEASE_MS = 3000;
    static final long RETRY_MS = LEASE_MS / 10; // the library's default retry interval
    static final long HANDOVER_BOUND_MS = 100;  // issue 27: "hands over after SIGTERM within 100 ms" (printed beside the measure)

    @BeforeAll
    static void setUp() throws Exception {
        db = TestDb.migrated("procs");
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (db != null) db.close();
    }

    /** A child JVM and the lines it prints, each with the parent's monotonic time of arrival. */
    static final class Child implements AutoCloseable {
        record Line(String text, long nanos) {
            /** The child's System.nanoTime() when it printed the line (CLOCK_MONOTONIC: one clock for all processes). */
            long childNanos() {
                return Long.parseLong(text.substring(text.lastIndexOf('@') + 1));
            }
        }

        final String node;
        final Process process;
        final BlockingQueue<Line> lines = new LinkedBlockingQueue<>();

        Child(String service, String node) throws Exception {
            this.node = node;
            String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
            ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    ElectorNode.class.getName(), db.url, service, node, Long.toString(LEASE_MS));
            pb.redirectError(ProcessBuilder.Redirect.INHERIT);
            process = pb.start();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    String s;
                    while ((s = r.readLine()) != null) lines.add(new Line(s, System.nanoTime()));
                } catch (Exception ignored) {
                    // the child is gone
                }
            }, "child-" + node);
            reader.setDaemon(true);
            reader.start();
        }

        /** Lines an earlier {@link #await} passed over, in order: the JVM runs its shutdown hooks at
         *  once, so the elector's STOPPED_LEADING may come before or after the child's SHUTDOWN. */
        final List<Line> passed = new ArrayList<>();

        /** The first line starting with {@code prefix} not awaited yet (one passed over, or a
         *  new one within {@code ms}). */
        Line await(String prefix, long ms) throws InterruptedException {
            for (int i = 0; i < passed.size(); i++) {
                if (passed.get(i).text.startsWith(prefix)) return passed.remove(i);
            }
            long until = System.nanoTime() + ms * 1_000_000;
            List<String> skipped = new ArrayList<>();
            while (true) {
                Line l = lines.poll(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (l == null) fail(node + ": no line '" + prefix + "...' within " + ms + " ms; lines seen: " + skipped);
                if (l.text.startsWith(prefix)) return l;
                skipped.add(l.text);
                passed.add(l);
            }
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    @Test
    void killedLeaderIsReplacedAndATerminatedOneHandsOverAtOnce() throws Exception {
        String service = "procs";
        List<Child> children = new ArrayList<>();
        try {
            Child a = new Child(service, "a");
            children.add(a);
            a.await("READY", 30_000);
            a.await("STARTED_LEADING", 30_000);
            Child b = new Child(service, "b");
            children.add(b);
            Child c = new Child(service, "c");
            children.add(c);
            b.await("READY", 30_000);
            c.await("READY", 30_000);
            Thread.sleep(2 * LEASE_MS / 5); // two renews of a

            // 1. SIGKILL: no resign, no shutdown hook; the lease runs out.
            long killed = System.nanoTime();
            a.process.destroyForcibly();
            assertTrue(a.process.waitFor(10, TimeUnit.SECONDS));
            Child next = firstToLead(List.of(b, c), LEASE_MS + RETRY_MS + 10_000);
            double failoverMs = (lastStart - killed) / 1e6;
            System.out.printf("java: failover after kill -9 of a JVM: %.0f ms (lease %d ms, retry %d ms)%n", failoverMs, LEASE_MS, RETRY_MS);
            assertTrue(failoverMs <= LEASE_MS + RETRY_MS, "failover took " + failoverMs + " ms");
            Child other = next == b ? c : b;
            try (Client client = Client.connect(db.url)) {
                assertEquals(next.node, client.currentLeader(service).leaderId());
            }

            // 2. SIGTERM: the shutdown hook resigns; the other follower takes over at once. First a
            //    steady state (one lease): the follower has seen the new leader and waits on its
            //    wake-up lock, as a follower does in production.
            Thread.sleep(LEASE_MS);
            // The old lease's end before the signal, on the database clock: renews only move it later.
            String leaseEndBefore = seatLeaseEnd(service);
            long terminated = System.nanoTime();
            next.process.toHandle().destroy(); // SIGTERM (Process.destroy() would also close our end of its output)
            Child.Line started = other.await("STARTED_LEADING", 10_000);
            double handoverMs = (started.nanos() - terminated) / 1e6;
            System.out.printf("java: handover after SIGTERM of the leader's JVM: %.1f ms (bound %d ms)%n", handoverMs, HANDOVER_BOUND_MS);
            assertTrue(next.process.waitFor(10, TimeUnit.SECONDS), "the terminated JVM did not exit");
            assertEquals(143, next.process.exitValue(), "exit status of a JVM ended by SIGTERM");
            Child.Line hook = next.await("SHUTDOWN", 1000), stopped = next.await("STOPPED_LEADING", 1000);
            System.out.printf("java: after SIGTERM: shutdown hooks start %.1f ms, resigned %.1f ms, the other leads %.1f ms%n",
                    (hook.childNanos() - terminated) / 1e6, (stopped.childNanos() - terminated) / 1e6, (started.childNanos() - terminated) / 1e6);
            // At once, by the resign: the terminated leader's term ended 'resigned', and the other's
            // began before the old lease (as it stood before the signal) would have run out.
            List<String[]> terms = lastTwoTerms(service);
            assertEquals(next.node, terms.get(0)[0], "the terminated leader's term");
            assertEquals("resigned", terms.get(0)[1], "how the terminated leader's term ended");
            assertEquals(other.node, terms.get(1)[0], "the next term's leader");
            String began = terms.get(1)[2];
            assertTrue(began.compareTo(leaseEndBefore) < 0, // both 'YYYY-MM-DD hh:mm:ss.ffffff', UTC
                    "the next term began at " + began + ", not before the old lease's end " + leaseEndBefore + ": no handover at once");
        } finally {
            children.forEach(Child::close);
        }
    }

    private long lastStart;

    /** The seat's lease_expires_at as the database has it now ('YYYY-MM-DD hh:mm:ss.ffffff', UTC). */
    private static String seatLeaseEnd(String service) throws java.sql.SQLException {
        try (java.sql.Connection c = db.connection();
             java.sql.PreparedStatement st = c.prepareStatement("SELECT CAST(lease_expires_at AS CHAR) FROM leader_election WHERE service_id = ?")) {
            st.setString(1, service);
            try (java.sql.ResultSet rs = st.executeQuery()) {
                assertTrue(rs.next(), "the seat of " + service);
                return rs.getString(1);
            }
        }
    }

    /** The service's last two terms, oldest first: {leader_id, ended_how, began_at} each. */
    private static List<String[]> lastTwoTerms(String service) throws java.sql.SQLException {
        List<String[]> terms = new ArrayList<>();
        try (java.sql.Connection c = db.connection();
             java.sql.PreparedStatement st = c.prepareStatement(
                     "SELECT leader_id, ended_how, CAST(began_at AS CHAR) FROM leader_election_terms"
                     + " WHERE service_id = ? ORDER BY term DESC LIMIT 2")) {
            st.setString(1, service);
            try (java.sql.ResultSet rs = st.executeQuery()) {
                while (rs.next()) terms.add(0, new String[] {rs.getString(1), rs.getString(2), rs.getString(3)});
            }
        }
        assertEquals(2, terms.size(), "two terms of " + service);
        return terms;
    }

    /** The first of {@code children} to print STARTED_LEADING (the others' lines read meanwhile are dropped). */
    private Child firstToLead(List<Child> children, long ms) throws InterruptedException {
        long until = System.nanoTime() + ms * 1_000_000;
        while (System.nanoTime() < until) {
            for (Child ch : children) {
                Child.Line l = ch.lines.poll();
                if (l != null && l.text().startsWith("STARTED_LEADING")) {
                    lastStart = l.nanos();
                    return ch;
                }
            }
            Thread.sleep(1);
        }
        fail("nobody took over within " + ms + " ms");
        return null;
    }
}
