package io.mysqlleader;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.*;

/** The elector in one JVM: events, resign handover, runWhileLeader, the fence through JDBC, misuse. */
class ElectorTest {
    static TestDb db;
    static Client client;
    static final Duration LEASE = Duration.ofSeconds(2);
    static final Duration WAIT = Duration.ofSeconds(15);

    @BeforeAll
    static void setUp() throws Exception {
        db = TestDb.migrated("elector");
        client = Client.connect(db.url);
        db.exec("CREATE TABLE ledger (id INT PRIMARY KEY, note VARCHAR(40)) ENGINE=InnoDB");
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (client != null) client.close();
        if (db != null) db.close();
    }

    static Elector.Builder node(String service, String node) {
        return Elector.builder(client, service).nodeId(node).lease(LEASE);
    }

    /** Issue 26, item 4: an error retrying cannot fix reaches the elector's user at once. */
    @Test
    void aWrongPasswordIsThrownByAwaitLeadershipAndSentAsFailing() throws Exception {
        List<ElectorEvent> events = new CopyOnWriteArrayList<>();
        String wrong = TestUrls.withPassword(db.url, "pw-Zq7x-wrong");
        try (Client bad = Client.connect(wrong);
             Elector e = Elector.builder(bad, "failing").nodeId("a").lease(LEASE).listener(events::add).build()) {
            long t0 = System.nanoTime();
            AuthenticationException thrown = assertThrows(AuthenticationException.class, () -> e.awaitLeadership(WAIT));
            long tookMs = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("java: awaitLeadership threw a refused login after " + tookMs + " ms: " + thrown.getMessage());
            assertTrue(tookMs < WAIT.toMillis(), "awaitLeadership waited out its timeout instead of throwing");
            assertEquals(1045, thrown.serverCode());
            assertFalse(thrown.isRetryable());
            assertFalse(e.isLeader());
            assertTrue(e.isCampaigning(), "the elector keeps trying");
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (events.stream().noneMatch(ev -> ev.kind() == ElectorEvent.Kind.FAILING) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            List<ElectorEvent> failing = events.stream().filter(ev -> ev.kind() == ElectorEvent.Kind.FAILING).toList();
            assertEquals(1, failing.size(), "one FAILING event per change of condition: " + events);
            assertEquals(ErrorKind.AUTHENTICATION, failing.get(0).failure());
            String metrics = e.metricsText();
            assertTrue(samples(metrics).get("mysqlleader_campaign_errors_total{name=\"failing\"}") >= 1, metrics);
            assertEquals(0.0, samples(metrics).get("leader_election_master_status{name=\"failing\"}"), metrics);
            assertTrue(events.stream().filter(ev -> ev.kind() != ElectorEvent.Kind.FAILING).allMatch(ev -> ev.failure() == null), events.toString());
        }
    }

    @Test
    void electsReportsEventsInOrderAndResignHandsOver() throws Exception {
        List<ElectorEvent> events = new CopyOnWriteArrayList<>();
        try (Elector a = node("handover", "a").listener(events::add).build()) {
            assertTrue(a.awaitLeadership(WAIT), "a did not lead: " + a.lastCallError());
            assertTrue(a.isLeader());
            long term = a.term();
            assertEquals("a", a.leaderId());
            assertTrue(a.validFor().compareTo(Duration.ZERO) > 0);
            assertTrue(a.isCampaigning());
            assertTrue(a.isHealthy());
            try (Elector b = node("handover", "b").build()) {
                assertFalse(b.awaitLeadership(Duration.ofMillis(300)), "b leads while a holds the seat");
                CountDownLatch bLeads = new CountDownLatch(1);
                b.addListener(e -> { if (e.kind() == ElectorEvent.Kind.STARTED_LEADING) bLeads.countDown(); });
                long t0 = System.nanoTime();
                assertTrue(a.resign());
                assertFalse(a.isLeader(), "a still leads after resign() returned");
                assertTrue(bLeads.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "b did not take over");
                double ms = (System.nanoTime() - t0) / 1e6;
                System.out.printf("java: resign handover within the JVM: %.1f ms%n", ms);
                assertTrue(b.isLeader());
                assertEquals(term + 1, b.term());
                assertFalse(a.isCampaigning());
                assertFalse(a.awaitLeadership(WAIT), "a resigned node waits for nothing");
            }
            assertEquals(ElectorEvent.Kind.STARTED_LEADING, events.stream().filter(e -> e.kind() != ElectorEvent.Kind.LEADER_CHANGED).findFirst().orElseThrow().kind());
            ElectorEvent stop = events.stream().filter(e -> e.kind() == ElectorEvent.Kind.STOPPED_LEADING).findFirst().orElseThrow();
            assertEquals(term, stop.term());
            assertEquals(StopReason.RESIGNED, stop.reason());
        }
    }

    @Test
    void closeResignsAndDeliversTheLastEvent() throws Exception {
        List<ElectorEvent> events = new CopyOnWriteArrayList<>();
        Elector a = node("close", "a").listener(events::add).build();
        assertTrue(a.awaitLeadership(WAIT));
        a.close();
        a.close(); // idempotent
        // Delivered before close() returned.
        ElectorEvent stop = events.stream().filter(e -> e.kind() == ElectorEvent.Kind.STOPPED_LEADING).findFirst()
                .orElseThrow(() -> new AssertionError("no STOPPED_LEADING before close() returned: " + events));
        assertEquals(StopReason.SHUTDOWN, stop.reason());
        int seen = events.size();
        Thread.sleep(200);
        assertEquals(seen, events.size(), "an event came after close() returned");
        assertNull(client.currentLeader("close").leaderId(), "close() did not resign");
    }

    @Test
    void runWhileLeaderReturnsOrIsInterruptedWhenTheTermEnds() throws Exception {
        try (Elector a = node("run", "a").build()) {
            assertEquals("done", a.runWhileLeader(() -> "done"));
            long term = a.term();
            CompletableFuture<Throwable> outcome = CompletableFuture.supplyAsync(() -> {
                try {
                    a.runWhileLeader(() -> {
                        Thread.sleep(60_000); // ended by the interrupt when the term ends
                        return "never";
                    });
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            });
            Thread.sleep(300);
            client.forceLeader("run", "b", Duration.ofSeconds(30));
            Throwable t = outcome.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            LeadershipLostException lost = assertInstanceOf(LeadershipLostException.class, t);
            assertEquals(term, lost.term());
            assertEquals(StopReason.LOST_SEAT, lost.reason());
            assertInstanceOf(InterruptedException.class, lost.getCause());
        }
    }

    @Test
    void fenceLetsTheLeaderCommitAndRefusesAStaleTransaction() throws Exception {
        try (Elector a = node("fence", "a").lease(Duration.ofSeconds(20)).build(); Connection conn = db.connection()) {
            assertTrue(a.awaitLeadership(WAIT));
            long term = a.term();
            conn.setAutoCommit(false);
            assertEquals(term, a.fence(conn));
            insert(conn, 1, "fenced");
            conn.commit();
            assertEquals(List.of("fenced"), notes(1));

            // Autocommit on: the fence would fence nothing.
            conn.setAutoCommit(true);
            assertThrows(UsageException.class, () -> a.fence(conn));
            conn.setAutoCommit(false);

            // The stale leader: an operator moves the seat; a's next renew is 4 s away.
            client.forceLeader("fence", "b", Duration.ofSeconds(20));
            assertTrue(a.isLeader(), "a cannot know yet (its next renew is 4 s away)");
            insert(conn, 2, "stale");
            NotLeaderException e = assertThrows(NotLeaderException.class, () -> a.fence(conn));
            assertFalse(a.isLeader(), "a still reports leading after its fence was refused");
            assertEquals("45001", e.sqlState());
            assertEquals(term + 1, e.currentTerm().orElseThrow());
            conn.commit(); // the server rolled the transaction back: nothing of it commits
            assertEquals(List.of(), notes(2), "a write of the refused transaction was committed");

            // Not leading now: refused without a round trip.
            assertThrows(NotLeaderException.class, () -> a.fence(conn));
            assertThrows(InvalidArgumentException.class, () -> a.fence(null));
        }
    }

    @Test
    void fenceWorksWithServerPreparedStatementsAndAListenerThatThrows() throws Exception {
        try (Elector a = node("fenceprep", "a").listener(e -> { throw new IllegalStateException("a listener's bug"); }).build();
             Connection conn = java.sql.DriverManager.getConnection(db.jdbcUrl + "&useServerPrepStmts=true")) {
            assertTrue(a.awaitLeadership(WAIT), "a listener that throws stopped the elector: " + a.lastCallError());
            conn.setAutoCommit(false);
            assertEquals(a.term(), a.fence(conn));
            insert(conn, 10, "server-prepared");
            conn.commit();
            assertEquals(List.of("server-prepared"), notes(10));
        }
    }

    @Test
    void aFencedTransactionHoldsOffATakeoverUntilItCommits() throws Exception {
        try (Elector a = node("hold", "a").lease(Duration.ofSeconds(20)).build(); Connection conn = db.connection()) {
            assertTrue(a.awaitLeadership(WAIT));
            conn.setAutoCommit(false);
            long term = a.fence(conn);
            CompletableFuture<CampaignResult> force = CompletableFuture.supplyAsync(() -> {
                try (Client operator = Client.connect(db.url)) {
                    return operator.forceLeader("hold", "b", Duration.ofSeconds(20));
                }
            });
            Thread.sleep(500); // the procedures wait for a row lock up to 1 s
            assertFalse(force.isDone(), "force_leader ended while a fenced transaction was open");
            insert(conn, 3, "before-takeover");
            conn.commit();
            CampaignResult forced = force.get(WAIT.toMillis(), TimeUnit.MILLISECONDS); // after the commit
            assertEquals("b", forced.leaderId());
            assertEquals(term + 1, forced.term());
            assertEquals(List.of("before-takeover"), notes(3));
        }
    }

    /**
     * Issue 41, item 2: the fence has a timeout of its own. A takeover's lock on the term's row
     * (held here by hand, as a force_leader waiting for the seat would) makes the fence wait; the
     * connection's own lock wait (50 s by default) would hold the caller that long. The fence
     * gives up within the time this node still leads (lease 3 s), with the server's error.
     */
    @Test
    void aFenceWaitsNoLongerThanTheLeaseLeft() throws Exception {
        try (Elector a = node("fencewait", "a").lease(Duration.ofSeconds(3)).build();
             Connection conn = db.connection(); Connection taker = db.connection()) {
            assertTrue(a.awaitLeadership(WAIT));
            taker.setAutoCommit(false);
            try (Statement st = taker.createStatement()) {
                st.execute("SELECT term FROM leader_election_history WHERE service_id = 'fencewait' AND ended_at IS NULL FOR UPDATE");
            }
            conn.setAutoCommit(false);
            try (Statement st = conn.createStatement()) {
                st.execute("SET SESSION innodb_lock_wait_timeout = 50");
            }
            long t0 = System.nanoTime();
            MysqlLeaderException e = assertThrows(MysqlLeaderException.class, () -> a.fence(conn));
            long tookMs = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("java: a fence behind a held term row gave up after " + tookMs + " ms: " + e);
            assertTrue(tookMs < 6_000, "the fence waited " + tookMs + " ms, past the lease it had left (3 s)");
            conn.rollback();
            taker.rollback();
        }
    }

    @Test
    void misuseIsRejectedByName() throws Exception {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> Elector.builder(client, null).build());
        assertEquals(ErrorKind.NULL_ARGUMENT, e.kind());
        assertEquals("serviceId", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Elector.builder(null, "s"));
        assertEquals("client", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Elector.builder(client, "").build());
        assertEquals("serviceId", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Elector.builder(client, "s").lease(Duration.ofSeconds(1)).renewInterval(Duration.ofSeconds(2)).build());
        assertEquals("renewInterval", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Elector.builder(client, "s").lease(Duration.ZERO));
        assertEquals("lease", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Elector.builder(client, "s").lease(Duration.ofMillis(-1)));
        assertEquals("lease", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Elector.builder(client, "s").requestTimeout(Duration.ofNanos(100)));
        assertEquals("requestTimeout", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Elector.builder(client, "s").lease(null));
        assertEquals(ErrorKind.NULL_ARGUMENT, e.kind());
        e = assertThrows(InvalidArgumentException.class, () -> Elector.builder(client, "s").retryJitter(1.5).build());
        assertEquals("retryJitter", e.parameter());

        Elector a = node("misuse", "a").build();
        assertThrows(InvalidArgumentException.class, () -> a.awaitLeadership(Duration.ofMillis(-1)));
        assertThrows(InvalidArgumentException.class, () -> a.awaitLeadership(null));
        assertThrows(NullPointerException.class, () -> a.runWhileLeader(null));
        assertThrows(NullPointerException.class, () -> a.addListener(null));
        a.close();
        assertTrue(a.isClosed());
        assertFalse(a.isLeader(), "a closed elector leads nothing, and says so without an exception");
        for (Runnable call : List.<Runnable>of(a::term, a::validFor, a::leaderId, a::resign, a::isHealthy, a::metricsText,
                () -> a.noteRefusal(1), () -> { try { a.awaitLeadership(Duration.ZERO); } catch (InterruptedException x) { throw new AssertionError(x); } })) {
            assertThrows(InvalidStateException.class, call::run);
        }
        try (Connection conn = db.connection()) {
            conn.setAutoCommit(false);
            assertThrows(InvalidStateException.class, () -> a.fence(conn));
        }
    }

    @Test
    void closingDuringAWaitEndsTheWait() throws Exception {
        try (Elector holder = node("closewait", "a").build()) {
            assertTrue(holder.awaitLeadership(WAIT));
            Elector b = node("closewait", "b").build();
            AtomicReference<Throwable> ended = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    b.awaitLeadership(Duration.ofMinutes(5));
                } catch (Throwable t) {
                    ended.set(t);
                }
            });
            waiter.start();
            Thread.sleep(200);
            b.close();
            waiter.join(WAIT.toMillis());
            assertFalse(waiter.isAlive(), "awaitLeadership went on after close()");
            assertInstanceOf(InvalidStateException.class, ended.get());
        }
    }

    @Test
    void aListenerCannotWaitOnTheThreadThatDeliversTheEvents() throws Exception {
        try (Elector a = node("inside", "a").build()) {
            assertTrue(a.awaitLeadership(WAIT)); // b follows
            Elector b = node("inside", "b").build();
            CompletableFuture<Throwable> inside = new CompletableFuture<>();
            b.addListener(e -> {
                try {
                    b.awaitLeadership(Duration.ofSeconds(1)); // b follows: this would wait
                    inside.complete(null);
                } catch (Throwable t) {
                    inside.complete(t);
                }
            });
            client.forceLeader("inside", "c", Duration.ofSeconds(30)); // b sees a new leader: an event
            try {
                assertInstanceOf(InvalidStateException.class, inside.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
            } finally {
                b.close();
            }
        }
    }

    @Test
    void theDefaultNodeIdIsHostnameAndPid() {
        try (Elector e = Elector.builder(client, "defaultnode").build()) {
            assertTrue(e.nodeId().endsWith(":" + ProcessHandle.current().pid()), e.nodeId());
        }
    }

    /** The samples of a Prometheus text exposition (name with labels -> value); every line is a comment or a sample. */
    static java.util.Map<String, Double> samples(String text) {
        java.util.Map<String, Double> out = new java.util.HashMap<>();
        java.util.regex.Pattern sample = java.util.regex.Pattern.compile("([a-z_]+\\{[^}]*\\}) (\\S+)");
        for (String line : text.split("\n")) {
            if (line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue;
            java.util.regex.Matcher m = sample.matcher(line);
            assertTrue(m.matches(), "not a sample line: " + line + " in\n" + text);
            out.put(m.group(1), Double.parseDouble(m.group(2)));
        }
        return out;
    }

    /** metricsText: the Prometheus text of the Rust library, through the C ABI. */
    @Test
    void metricsTextOfALeaderAFollowerAndAResignedNode() throws Exception {
        String name = "name=\"metrics\"";
        try (Elector a = node("metrics", "a").build()) {
            assertTrue(a.awaitLeadership(WAIT), "a did not lead: " + a.lastCallError());
            String text = a.metricsText();
            assertTrue(text.startsWith("# HELP leader_election_master_status ") && text.endsWith("\n"), text);
            assertTrue(text.contains("\nleader_election_master_status{" + name + "} 1\n"), text);
            assertTrue(text.contains("\n# TYPE mysqlleader_campaign_duration_seconds histogram\n"), text);
            java.util.Map<String, Double> m = samples(text);
            assertEquals(1.0, m.get("mysqlleader_term{" + name + "}"), text);
            assertEquals(1.0, m.get("mysqlleader_leadership_transitions_total{" + name + "}"), text);
            assertEquals(0.0, m.get("mysqlleader_campaign_errors_total{" + name + "}"), text);
            double count = m.get("mysqlleader_campaign_duration_seconds_count{" + name + "}");
            assertTrue(count >= 1, text);
            assertEquals(count, m.get("mysqlleader_campaign_duration_seconds_bucket{" + name + ",le=\"+Inf\"}"), text);
            assertTrue(m.get("mysqlleader_campaign_duration_seconds_sum{" + name + "}") > 0, text);
            try (Elector b = node("metrics", "b").build()) {
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (!"a".equals(b.leaderId()) && System.nanoTime() < deadline) Thread.sleep(10);
                assertEquals("a", b.leaderId());
                text = b.metricsText();
                m = samples(text);
                assertEquals(0.0, m.get("leader_election_master_status{" + name + "}"), text);
                assertEquals(1.0, m.get("mysqlleader_term{" + name + "}"), text);
                assertEquals(0.0, m.get("mysqlleader_leadership_transitions_total{" + name + "}"), text);
                assertTrue(m.get("mysqlleader_campaign_duration_seconds_count{" + name + "}") >= 1, text);
                assertTrue(a.resign());
                text = a.metricsText();
                m = samples(text);
                assertEquals(0.0, m.get("leader_election_master_status{" + name + "}"), text);
                assertEquals(2.0, m.get("mysqlleader_leadership_transitions_total{" + name + "}"), text);
                assertTrue(b.awaitLeadership(WAIT), "b did not take over");
                text = b.metricsText();
                m = samples(text);
                assertEquals(1.0, m.get("leader_election_master_status{" + name + "}"), text);
                assertEquals(2.0, m.get("mysqlleader_term{" + name + "}"), text);
                assertEquals(1.0, m.get("mysqlleader_leadership_transitions_total{" + name + "}"), text);
            }
        }
    }

    static void insert(Connection conn, int id, String note) throws Exception {
        try (PreparedStatement st = conn.prepareStatement("INSERT INTO ledger (id, note) VALUES (?, ?)")) {
            st.setInt(1, id);
            st.setString(2, note);
            st.executeUpdate();
        }
    }

    static List<String> notes(int id) throws Exception {
        try (Connection c = db.connection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT note FROM ledger WHERE id = " + id)) {
            List<String> out = new java.util.ArrayList<>();
            while (rs.next()) out.add(rs.getString(1));
            return out;
        }
    }
}
