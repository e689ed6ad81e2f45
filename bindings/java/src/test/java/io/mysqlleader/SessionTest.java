package io.mysqlleader;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.*;

/** Sessions against a real server: many services per node, one leader each, close hands them all over, misuse. */
class SessionTest {
    static TestDb db;
    static Client client;
    /** Renew 800 ms, retry 400 ms: a seat that lapsed instead of being resigned is free only after ~3.2 s. */
    static final Duration LEASE = Duration.ofSeconds(4);
    static final Duration WAIT = Duration.ofSeconds(15);
    static final int SERVICES = 20;

    @BeforeAll
    static void setUp() throws Exception {
        db = TestDb.migrated("session");
        client = Client.connect(db.url);
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (client != null) client.close();
        if (db != null) db.close();
    }

    static Session.Builder node(String node) {
        return Session.builder(client).nodeId(node).lease(LEASE);
    }

    static String service(int i) {
        return "svc-" + i;
    }

    /** Waits until {@code cond} holds, up to {@code limit}; returns whether it did. */
    static boolean eventually(Duration limit, java.util.function.BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) return false;
            Thread.sleep(10);
        }
        return true;
    }

    @Test
    void twoSessionsOfTwentyServicesOneLeaderEachAndCloseHandsAllOver() throws Exception {
        List<ElectorEvent> firstEvents = new CopyOnWriteArrayList<>();
        Session a = node("a").build();
        Session b = node("b").build();
        try {
            List<Elector> as = new ArrayList<>(), bs = new ArrayList<>();
            as.add(a.elector(service(0), firstEvents::add));
            for (int i = 1; i < SERVICES; i++) as.add(a.elector(service(i)));
            for (Elector e : as) {
                assertTrue(e.awaitLeadership(WAIT), e + " did not lead: " + e.lastCallError());
                assertEquals("a", e.nodeId());
            }
            for (int i = 0; i < SERVICES; i++) bs.add(b.elector(service(i)));
            // b's electors look at their seats (one batch) and see a leading each.
            for (int i = 0; i < SERVICES; i++) {
                Elector eb = bs.get(i);
                assertTrue(eventually(WAIT, () -> "a".equals(eb.leaderId())), eb + " never saw a lead: " + eb.leaderId());
            }
            for (int i = 0; i < SERVICES; i++) {
                Elector ea = as.get(i), eb = bs.get(i);
                assertEquals(service(i), ea.serviceId());
                assertEquals("b", eb.nodeId());
                assertTrue(ea.isLeader(), ea + " no longer leads");
                assertFalse(eb.isLeader(), eb + " leads while a holds the seat");
                assertTrue(eb.isCampaigning());
                assertEquals("a", client.currentLeader(service(i)).leaderId(), "the database's leader of " + service(i));
                assertEquals(ea.term(), eb.term(), "a and b see different terms of " + service(i));
            }

            // Closing session a resigns every seat: b takes all 20 within a few retry intervals,
            // far sooner than the leases would lapse.
            long t0 = System.nanoTime();
            a.close();
            double closeMs = (System.nanoTime() - t0) / 1e6;
            for (Elector ea : as) {
                assertTrue(ea.isClosed(), ea + " is not closed by its session's close");
                assertFalse(ea.isLeader(), ea + " leads nothing once closed, and says so without an exception");
                assertThrows(InvalidStateException.class, ea::term);
                assertThrows(InvalidStateException.class, () -> ea.awaitLeadership(Duration.ZERO));
                ea.close(); // a no-op
            }
            ElectorEvent stop = firstEvents.stream().filter(e -> e.kind() == ElectorEvent.Kind.STOPPED_LEADING).findFirst()
                    .orElseThrow(() -> new AssertionError("no STOPPED_LEADING before the session's close() returned: " + firstEvents));
            assertEquals(StopReason.SHUTDOWN, stop.reason());
            for (Elector eb : bs) {
                long left = Math.max(0, WAIT.toNanos() - (System.nanoTime() - t0));
                assertTrue(eb.awaitLeadership(Duration.ofNanos(left)), eb + " did not take over: " + eb.lastCallError());
            }
            double allMs = (System.nanoTime() - t0) / 1e6;
            System.out.printf("java: session a closed in %.1f ms; b led all %d services %.1f ms after the close began%n",
                    closeMs, SERVICES, allMs);
            assertTrue(allMs < 2000, "b took " + allMs + " ms to lead all services: the seats lapsed instead of being resigned");
            for (int i = 0; i < SERVICES; i++) {
                assertTrue(bs.get(i).isLeader());
                assertEquals("b", client.currentLeader(service(i)).leaderId(), "the database's leader of " + service(i));
            }
        } finally {
            a.close();
            b.close();
        }
        assertNull(client.currentLeader(service(0)).leaderId(), "closing session b did not resign");
    }

    @Test
    void oneElectorPerServiceAndSessionAndAnElectorClosesAlone() throws Exception {
        try (Session s = node("a").build()) {
            Elector first = s.elector("dup");
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> s.elector("dup"));
            assertEquals(ErrorKind.INVALID_ARGUMENT, e.kind());
            assertEquals("service_id", e.parameter());
            assertTrue(first.isCampaigning(), "the refused second elector stopped the first");
            assertTrue(first.awaitLeadership(WAIT), "did not lead: " + first.lastCallError());
            // Closed on its own, the elector resigns its seat and frees the service for a new one.
            first.close();
            assertNull(client.currentLeader("dup").leaderId(), "closing the elector did not resign");
            try (Elector again = s.elector("dup")) {
                assertTrue(again.awaitLeadership(WAIT), "the second elector did not lead: " + again.lastCallError());
            }
        }
    }

    @Test
    void aSessionsMetricsAreOneValidExposition() throws Exception {
        Session s = node("metrics").build();
        try (Elector m1 = s.elector("metrics-1"); Elector m2 = s.elector("metrics-2")) {
            assertTrue(m1.awaitLeadership(WAIT), "did not lead: " + m1.lastCallError());
            assertTrue(m2.awaitLeadership(WAIT), "did not lead: " + m2.lastCallError());
            // Detailed: HELP and TYPE of 16 metrics (the session's 11, each elector's 5), once each.
            String detailed = s.metricsTextDetailed();
            List<String> comments = detailed.lines().filter(l -> l.startsWith("#")).toList();
            assertEquals(32, comments.size(), detailed);
            assertEquals(32, new java.util.HashSet<>(comments).size(), "HELP/TYPE repeated: " + detailed);
            assertTrue(detailed.contains("leader_election_master_status{name=\"metrics-1\"} 1"), detailed);
            assertTrue(detailed.contains("leader_election_master_status{name=\"metrics-2\"} 1"), detailed);
            assertTrue(detailed.contains("mysqlleader_campaign_duration_seconds_count{name=\"metrics-1\"} "), detailed);
            assertTrue(detailed.contains("mysqlleader_campaign_duration_seconds_count{name=\"metrics-2\"} "), detailed);
            // Compact (the default): the session's 11 and each elector's two gauges.
            String text = s.metricsText();
            comments = text.lines().filter(l -> l.startsWith("#")).toList();
            assertEquals(26, comments.size(), text);
            assertEquals(26, new java.util.HashSet<>(comments).size(), "HELP/TYPE repeated: " + text);
            assertTrue(text.contains("leader_election_master_status{name=\"metrics-1\"} 1"), text);
            assertTrue(text.contains("leader_election_master_status{name=\"metrics-2\"} 1"), text);
            assertTrue(text.contains("mysqlleader_term{name=\"metrics-1\"} "), text);
            assertFalse(text.contains("mysqlleader_campaign_duration_seconds"), text);
            for (String t : List.of(text, detailed)) {
                assertTrue(t.contains("# TYPE mysqlleader_session_renew_batch_duration_seconds histogram\n"), t);
                assertTrue(t.contains("mysqlleader_session_renew_batches_total{node=\""), t);
                assertTrue(t.contains(",state=\"leading\"} 2\n"), t);
            }
            s.close();
            assertThrows(InvalidStateException.class, s::metricsText);
            assertThrows(InvalidStateException.class, s::metricsTextDetailed);
        } finally {
            s.close();
        }
    }

    /** The URL of a loopback port with nothing listening (bound, then closed): a connection to it is refused at once. */
    static String refusedUrl() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        return "mysql://app:hunter2@127.0.0.1:" + port + "/db";
    }

    @Test
    void aSessionMovesToItsFallbackWhenItsServerRefuses() throws Exception {
        // The first server refuses every connection (a transient failure): the session's later
        // calls go to its fallback, the live server, where its electors lead within seconds. The
        // fallback client may be closed once the session is built: the session keeps its pool.
        try (Client dead = Client.connect(refusedUrl())) {
            Client live = Client.connect(db.url);
            Session s = Session.builder(dead).nodeId("fb").lease(LEASE).fallbackClients(live).build();
            live.close();
            try {
                long t0 = System.nanoTime();
                Elector one = s.elector("fb-1"), two = s.elector("fb-2");
                assertTrue(one.awaitLeadership(WAIT), one + " did not lead: " + one.lastCallError());
                assertTrue(two.awaitLeadership(WAIT), two + " did not lead: " + two.lastCallError());
                double ms = (System.nanoTime() - t0) / 1e6;
                System.out.printf("java: a session whose server refuses led 2 services through its fallback %.1f ms after starting%n", ms);
                assertTrue(ms < 5000, "led only after " + ms + " ms");
                assertEquals(1, one.term());
                assertEquals("fb", client.currentLeader("fb-1").leaderId());
            } finally {
                s.close();
            }
            // The session's close resigned through the fallback too.
            assertNull(client.currentLeader("fb-1").leaderId());
            assertNull(client.currentLeader("fb-2").leaderId());
        }
    }

    @Test
    void aNullFallbackIsRejectedByName() throws Exception {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> Session.builder(client).fallbackClients((Client) null));
        assertEquals(ErrorKind.NULL_ARGUMENT, e.kind());
        assertEquals("fallbackClients", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Session.builder(client).fallbackClients(client, null));
        assertEquals("fallbackClients", e.parameter());
        // As for an Elector's builder.
        e = assertThrows(InvalidArgumentException.class, () -> Elector.builder(client, "s").fallbackClients(client, null));
        assertEquals(ErrorKind.NULL_ARGUMENT, e.kind());
        assertEquals("fallbackClients", e.parameter());
        // A closed fallback client makes no session.
        Client closed = Client.connect(db.url);
        closed.close();
        assertThrows(InvalidStateException.class, () -> Session.builder(client).fallbackClients(closed).build());
    }

    @Test
    void misuseIsRejectedByName() throws Exception {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> Session.builder(null));
        assertEquals("client", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Session.builder(client).lease(Duration.ZERO));
        assertEquals("lease", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Session.builder(client).requestTimeout(Duration.ofNanos(100)));
        assertEquals("requestTimeout", e.parameter());
        e = assertThrows(InvalidArgumentException.class,
                () -> Session.builder(client).lease(Duration.ofSeconds(1)).renewInterval(Duration.ofSeconds(2)).build());
        assertEquals("renewInterval", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Session.builder(client).retryJitter(1.5).build());
        assertEquals("retryJitter", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Session.builder(client).nodeId("").build());
        assertEquals("nodeId", e.parameter());

        Session s = node("a").build();
        e = assertThrows(InvalidArgumentException.class, () -> s.elector(""));
        assertEquals("service_id", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> s.elector(null));
        assertEquals(ErrorKind.NULL_ARGUMENT, e.kind());
        assertEquals("service_id", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> s.elector("x".repeat(129)));
        assertEquals("service_id", e.parameter());

        assertFalse(s.isClosed());
        s.close();
        s.close(); // idempotent
        assertTrue(s.isClosed());
        InvalidStateException closed = assertThrows(InvalidStateException.class, () -> s.elector("late"));
        assertEquals(ErrorKind.INVALID_STATE, closed.kind());
        assertTrue(closed.getMessage().contains("session is closed"), closed.getMessage());
    }
}
