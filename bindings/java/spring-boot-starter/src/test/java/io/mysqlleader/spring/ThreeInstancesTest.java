package io.mysqlleader.spring;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Issue 41's "done when": a Spring Boot application with the starter ({@link FencedJobApp}, configured
 * by {@code spring.datasource.*} and {@code mysqlleader.*} alone) runs a leader-only job across three
 * instances, three JVMs, with 0 overlaps. Once one instance leads and has done the job, it is killed
 * (SIGKILL: no shutdown; its lease runs out and another takes over); once the next has done the job,
 * it is terminated (SIGTERM: Spring's shutdown hook closes the context, the scheduler stops, then the
 * starter's lifecycle resigns); the third takes over and does the job; then it is terminated too.
 *
 * <p>Judged by what the job committed, on the database's clock: no two units of different instances
 * overlap in time; the terms never go down in start order; no unit committed at a term older than one
 * committed before it began (the stale leader's write that fencing exists to stop); each unit's term
 * was its instance's own; all three instances did the job; the terminated leader's term ended
 * 'resigned' (a handover, not a lease running out) and the killed one's 'expired'; the terminated
 * JVMs exited by the signal or with 0; and no instance's job was called before the instance was first
 * elected ({@code @LeaderOnly} skipped it: without it a follower's call is refused by the fence, a
 * row in {@code job_failures}). The gaps between the leaders' units are printed, not asserted.
 *
 * <p>On SIGTERM the unit in flight completes: Spring's default scheduler does not wait for a
 * running task, but the starter's lifecycle waits for the {@code @LeaderOnly} calls in flight
 * before it closes the elector ({@link LeaderOnlyCalls}), so no call fails for a closed elector.
 * Any other failed call of a leader is allowed (a unit that outlasted its lease on a loaded
 * machine), and printed.
 */
class ThreeInstancesTest {
    /** The lease of the instances: a kill -9 costs one lease (plus one retry) of no job. */
    static final long LEASE_MS = 3000;
    /** The bound of every wait: a JVM's start, a takeover, three units (seconds apart when idle). */
    static final long WAIT_MS = 90_000;
    /** The job's tables ({@link FencedJobApp}). */
    static final String[] TABLES = {
        "CREATE TABLE job_runs (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, node VARCHAR(64) NOT NULL,"
                + " term BIGINT NOT NULL, max_term_before BIGINT NOT NULL COMMENT 'the highest term committed before the unit began',"
                + " started_at DATETIME(6) NOT NULL COMMENT 'UTC', ended_at DATETIME(6) NOT NULL COMMENT 'UTC')",
        "CREATE TABLE job_failures (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, node VARCHAR(64) NOT NULL,"
                + " failed_at DATETIME(6) NOT NULL COMMENT 'UTC', error VARCHAR(1000) NOT NULL)",
    };

    /** One instance of the application: a child JVM on the test's class path; its output is echoed. */
    static final class Instance implements AutoCloseable {
        final String node;
        final Process process;
        final CountDownLatch ready = new CountDownLatch(1);

        Instance(TestDb db, String service, String node) throws Exception {
            this.node = node;
            String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
            ProcessBuilder pb = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
                    "-cp", System.getProperty("java.class.path"), FencedJobApp.class.getName(),
                    "--spring.datasource.url=" + db.jdbcUrl(),
                    "--spring.datasource.username=" + TestDb.user(),
                    "--spring.datasource.password=" + TestDb.password(),
                    "--spring.datasource.hikari.maximum-pool-size=2",
                    "--mysqlleader.service=" + service,
                    "--mysqlleader.node-id=" + node,
                    "--mysqlleader.lease=" + LEASE_MS + "ms");
            pb.environment().remove("MYSQLLEADER_URL"); // would bind to mysqlleader.url: the URL comes from spring.datasource.*
            pb.redirectError(ProcessBuilder.Redirect.INHERIT);
            process = pb.start();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        System.out.println("spring: " + node + ": " + line);
                        if (line.startsWith("READY ")) ready.countDown();
                    }
                } catch (Exception gone) {
                    // the child is gone
                }
            }, "instance-" + node);
            reader.setDaemon(true);
            reader.start();
        }

        /** SIGTERM (through the handle: Process.destroy() would also close our end of its output), then its exit status. */
        int terminate() throws InterruptedException {
            process.toHandle().destroy();
            assertTrue(process.waitFor(WAIT_MS, TimeUnit.MILLISECONDS), node + " did not exit after SIGTERM");
            return process.exitValue();
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    @Test
    void aLeaderOnlyJobRunsOnOneInstanceAtATimeThroughKillAndTerm() throws Exception {
        try (TestDb db = new TestDb("three")) {
            try (Connection c = db.connection(); Statement st = c.createStatement()) {
                for (String ddl : TABLES) st.execute(ddl);
            }
            String service = "three-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
            Map<String, Instance> instances = new LinkedHashMap<>();
            String first, second, third;
            try {
                for (String node : List.of("app-1", "app-2", "app-3")) instances.put(node, new Instance(db, service, node));
                for (Instance i : instances.values()) {
                    assertTrue(i.ready.await(WAIT_MS, TimeUnit.MILLISECONDS), i.node + " did not start");
                }
                // 1. One instance leads and does the job.
                first = awaitLeader(db, Set.of());

                // 2. kill -9 of the leader: no shutdown; its lease runs out and another takes over.
                Instance killed = instances.get(first);
                killed.process.destroyForcibly();
                assertTrue(killed.process.waitFor(WAIT_MS, TimeUnit.MILLISECONDS), first + " did not die of SIGKILL");
                second = awaitLeader(db, Set.of(first));

                // 3. SIGTERM of the next leader: Spring's shutdown hook closes the context, which resigns.
                int status = instances.get(second).terminate();
                assertTrue(status == 143 || status == 0, second + " exited with " + status + " after SIGTERM (143: the signal; 0: System.exit)");
                third = awaitLeader(db, Set.of(first, second));

                // 4. The last one ends the same way.
                status = instances.get(third).terminate();
                assertTrue(status == 143 || status == 0, third + " exited with " + status + " after SIGTERM");
            } finally {
                instances.values().forEach(Instance::close);
            }

            // 5. The judgement, from what the job committed.
            try (Connection c = db.connection()) {
                assertNone(c, "units of different instances that overlap in time",
                        "SELECT CONCAT(a.node, ' term ', a.term, ' [', a.started_at, ', ', a.ended_at, '] and ', b.node, ' term ', b.term,"
                        + " ' [', b.started_at, ', ', b.ended_at, ']') FROM job_runs a JOIN job_runs b"
                        + " ON a.id < b.id AND a.node <> b.node AND a.started_at < b.ended_at AND b.started_at < a.ended_at");
                assertNone(c, "units whose term is below an earlier-started unit's",
                        "SELECT CONCAT(a.node, ' term ', a.term, ' began ', a.started_at, ', before ', b.node, ' term ', b.term, ' began ', b.started_at)"
                        + " FROM job_runs a JOIN job_runs b ON a.started_at < b.started_at AND a.term > b.term");
                assertNone(c, "units committed at a term older than one committed before they began",
                        "SELECT CONCAT(node, ' term ', term, ' began ', started_at, ' after term ', max_term_before, ' had committed')"
                        + " FROM job_runs WHERE term < max_term_before");
                assertNone(c, "units whose term was not their instance's",
                        "SELECT CONCAT(r.node, ' term ', r.term, ' (led by ', COALESCE(t.leader_id, 'nobody'), ')') FROM job_runs r"
                        + " LEFT JOIN leader_election_terms t ON t.service_id = '" + service + "' AND t.term = r.term"
                        + " WHERE t.leader_id IS NULL OR t.leader_id <> r.node");
                assertNone(c, "job calls on an instance before it was first elected (@LeaderOnly did not skip them)",
                        "SELECT CONCAT(f.node, ' at ', f.failed_at, ': ', f.error) FROM job_failures f WHERE NOT EXISTS"
                        + " (SELECT 1 FROM leader_election_terms t WHERE t.service_id = '" + service + "'"
                        + " AND t.leader_id = f.node AND t.began_at <= f.failed_at)");
                assertNone(c, "job calls cut off by the shutdown (the lifecycle closed the elector under them)",
                        "SELECT CONCAT(node, ' at ', failed_at, ': ', error) FROM job_failures WHERE error LIKE '%closed%'");
                assertEquals(3, rows(c, "SELECT DISTINCT node FROM job_runs").size(), "the instances that did the job");
                assertEquals("expired", lastTermEnd(c, service, first), "how the killed leader's last term ended");
                assertEquals("resigned", lastTermEnd(c, service, second), "how the terminated leader's last term ended");
                assertEquals("resigned", lastTermEnd(c, service, third), "how the last leader's last term ended");

                List<String> failures = rows(c, "SELECT CONCAT(node, ' at ', failed_at, ': ', error) FROM job_failures");
                failures.forEach(f -> System.out.println("spring: a job call failed (as a leader: allowed): " + f));
                System.out.printf("spring: 3 instances, %s; 0 overlaps; failures: %d; between the leaders' units: %s ms after kill -9"
                        + " of %s, %s ms after SIGTERM of %s (lease %d ms)%n",
                        rows(c, "SELECT CONCAT(node, ': ', COUNT(*), ' units, terms ', MIN(term), '-', MAX(term)) FROM job_runs GROUP BY node ORDER BY MIN(started_at)"),
                        failures.size(), gapMs(c, first, second), first, gapMs(c, second, third), second, LEASE_MS);
            }
        }
    }

    /**
     * The instance that leads now, not one of {@code excluded}: the one whose units are the last
     * three committed (so the seat has settled on it, and it does the job).
     */
    static String awaitLeader(TestDb db, Set<String> excluded) throws Exception {
        long deadline = System.nanoTime() + WAIT_MS * 1_000_000;
        List<String> last = List.of();
        while (System.nanoTime() < deadline) {
            try (Connection c = db.connection()) {
                last = rows(c, "SELECT node FROM job_runs ORDER BY started_at DESC LIMIT 3");
            }
            if (last.size() == 3 && last.stream().distinct().count() == 1 && !excluded.contains(last.get(0))) return last.get(0);
            Thread.sleep(100);
        }
        fail("no instance but " + excluded + " did the job three times in a row within " + WAIT_MS + " ms; the last units' instances: " + last);
        return null;
    }

    /** How {@code node}'s last term ended ('expired', 'resigned', ...; null: it has not). */
    static String lastTermEnd(Connection c, String service, String node) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(
                "SELECT CAST(ended_how AS CHAR) FROM leader_election_terms WHERE service_id = ? AND leader_id = ? ORDER BY term DESC LIMIT 1")) {
            st.setString(1, service);
            st.setString(2, node);
            try (ResultSet rs = st.executeQuery()) {
                assertTrue(rs.next(), node + " has no term");
                return rs.getString(1);
            }
        }
    }

    /** Milliseconds from {@code from}'s last unit's end to {@code to}'s first unit's start (database clock). */
    static String gapMs(Connection c, String from, String to) throws SQLException {
        return rows(c, "SELECT TIMESTAMPDIFF(MICROSECOND, (SELECT MAX(ended_at) FROM job_runs WHERE node = '" + from + "'),"
                + " (SELECT MIN(started_at) FROM job_runs WHERE node = '" + to + "')) DIV 1000").get(0);
    }

    static void assertNone(Connection c, String what, String query) throws SQLException {
        List<String> found = rows(c, query);
        assertTrue(found.isEmpty(), found.size() + " " + what + ", the first: " + found.subList(0, Math.min(5, found.size())));
    }

    /** The first column of every row of {@code query}, as text. */
    static List<String> rows(Connection c, String query) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(query)) {
            while (rs.next()) out.add(rs.getString(1));
        }
        return out;
    }
}
