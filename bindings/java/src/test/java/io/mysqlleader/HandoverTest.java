package io.mysqlleader;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Handover (the contract's "Handover"): the leader's own {@link Elector#handover(String)} and an
 * operator's {@link Client#handover(String, String)}. Followers here poll only every 5 s, so a new
 * leader within 3 s was woken (the leader's wake-up lock), not polled. Timings are printed, never
 * asserted tightly.
 */
class HandoverTest {
    static TestDb db;
    static Client client;
    static final Duration WAIT = Duration.ofSeconds(15);
    static final Duration SLOW_POLL = Duration.ofSeconds(5);
    static final long WOKEN_MS = 3000; // far below the 5 s poll

    @BeforeAll
    static void setUp() throws Exception {
        db = TestDb.migrated("handover");
        client = Client.connect(db.url);
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (client != null) client.close();
        if (db != null) db.close();
    }

    static Elector.Builder slowPoller(String service, String node, Duration lease, Duration renew) {
        return Elector.builder(client, service).nodeId(node).lease(lease).renewInterval(renew)
                .retryInterval(SLOW_POLL).retryJitter(0).requestTimeout(Duration.ofSeconds(1));
    }

    static String endedHow(String service, long term) throws Exception {
        try (Connection c = db.connection();
             PreparedStatement s = c.prepareStatement(
                     "SELECT CAST(ended_how AS CHAR) FROM leader_election_history WHERE service_id = ? AND term = ?")) {
            s.setString(1, service);
            s.setLong(2, term);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? r.getString(1) : null;
            }
        }
    }

    static void eventually(String what, java.util.function.BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!cond.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what + ": not within " + WAIT);
            Thread.sleep(10);
        }
    }

    static ElectorEvent stopOf(List<ElectorEvent> events, long term) throws InterruptedException {
        eventually("STOPPED_LEADING of term " + term, () -> events.stream()
                .anyMatch(e -> e.kind() == ElectorEvent.Kind.STOPPED_LEADING && e.term() == term));
        return events.stream().filter(e -> e.kind() == ElectorEvent.Kind.STOPPED_LEADING && e.term() == term)
                .findFirst().orElseThrow();
    }

    @Test
    void theLeaderHandsOverToTheNamedFollower() throws Exception {
        String service = "elector-handover";
        List<ElectorEvent> aEvents = new CopyOnWriteArrayList<>();
        Duration lease = Duration.ofSeconds(20);
        try (Elector a = slowPoller(service, "a", lease, Duration.ofSeconds(4)).listener(aEvents::add).build()) {
            assertTrue(a.awaitLeadership(WAIT), "a did not lead: " + a.lastCallError());
            long term = a.term();
            try (Elector b = slowPoller(service, "b", lease, Duration.ofSeconds(4)).build()) {
                eventually("b sees a", () -> "a".equals(b.leaderId()));
                Thread.sleep(500); // b waits on a's wake-up lock
                long t0 = System.nanoTime();
                assertTrue(a.handover("b"), "a led");
                assertFalse(a.isLeader(), "a still leads after handover() returned");
                assertTrue(b.awaitLeadership(WAIT.plus(SLOW_POLL)), "b did not take over");
                long tookMs = (System.nanoTime() - t0) / 1_000_000;
                System.out.println("java: leader-initiated handover a -> b: b leads after " + tookMs + " ms (followers poll every 5 s)");
                assertTrue(tookMs < WOKEN_MS, "b led only after " + tookMs + " ms: it was not woken");
                assertEquals(term + 1, b.term());
                assertEquals("b", b.leaderId());
                ElectorEvent stop = stopOf(aEvents, term);
                assertEquals(StopReason.HANDED_OVER, stop.reason(), stop.toString());
                assertEquals("handed_over", stop.reason().label);
                assertTrue(a.isCampaigning(), "a goes on as a follower (unlike resign)");
                assertEquals("handed_over", endedHow(service, term));
                // A follower's handover changes nothing.
                eventually("a sees b", () -> "b".equals(a.leaderId()));
                assertFalse(a.handover("b"));
                assertTrue(b.isLeader());
                // A handover to itself is refused, naming to_node; the leader stays.
                InvalidArgumentException refused = assertThrows(InvalidArgumentException.class, () -> b.handover("b"));
                assertEquals("to_node", refused.parameter(), refused.getMessage());
                assertTrue(refused.getMessage().contains("to_node"), refused.getMessage());
                assertTrue(b.isLeader(), "a refused handover changes nothing");
                assertEquals(term + 1, b.term());
                InvalidArgumentException nul = assertThrows(InvalidArgumentException.class, () -> b.handover(null));
                assertEquals(ErrorKind.NULL_ARGUMENT, nul.kind());
            }
        }
    }

    @Test
    void anOperatorsHandoverWithTheClient() throws Exception {
        // The bare calls: a leads; the seat is reserved for b; c cannot take it; b can.
        String service = "client-handover";
        assertTrue(client.campaign(service, "a", Duration.ofSeconds(20)).isLeader());
        CampaignResult seat = client.handover(service, "b");
        assertFalse(seat.isLeader(), seat.toString());
        assertNull(seat.leaderId(), seat.toString());
        assertFalse(client.amILeader(service, "a").isLeader(), "the old leader no longer leads");
        // b may take the seat once the displaced leader has acknowledged the handover with a
        // resign, sent once it stopped acting as leader (or once its lease has run out): before,
        // b waits. a's campaign (its renew, whose answer could still be on its way) is no
        // acknowledgement.
        assertFalse(client.campaign(service, "b", Duration.ofSeconds(20)).isLeader(), "b waits for a's acknowledgement");
        assertFalse(client.campaign(service, "a", Duration.ofSeconds(20)).isLeader(), "a's renew sees the handover");
        assertFalse(client.campaign(service, "b", Duration.ofSeconds(20)).isLeader(), "a's renew is no acknowledgement");
        ResignResult acknowledged = client.resign(service, "a");
        assertFalse(acknowledged.resigned(), acknowledged.toString());
        assertEquals(1, acknowledged.term());
        assertFalse(client.campaign(service, "c", Duration.ofSeconds(20)).isLeader(), "the seat is reserved for b");
        CampaignResult taken = client.campaign(service, "b", Duration.ofSeconds(20));
        assertTrue(taken.isLeader(), taken.toString());
        assertEquals(2, taken.term());
        assertEquals("handed_over", endedHow(service, 1));
        // Nothing changes when to_node leads already.
        CampaignResult again = client.handover(service, "b");
        assertTrue(again.isLeader(), again.toString());
        assertEquals("b", again.leaderId());
        assertEquals(2, again.term());

        // With electors: the leader learns at its next renew, and b is woken.
        String electors = "client-handover-electors";
        List<ElectorEvent> aEvents = new CopyOnWriteArrayList<>();
        Duration lease = Duration.ofSeconds(6);
        Duration renew = Duration.ofMillis(500);
        try (Elector a = slowPoller(electors, "a", lease, renew).listener(aEvents::add).build()) {
            assertTrue(a.awaitLeadership(WAIT), "a did not lead: " + a.lastCallError());
            long term = a.term();
            try (Elector b = slowPoller(electors, "b", lease, renew).build()) {
                eventually("b sees a", () -> "a".equals(b.leaderId()));
                Thread.sleep(500);
                long t0 = System.nanoTime();
                assertFalse(client.handover(electors, "b").isLeader());
                assertFalse(client.amILeader(electors, "a").isLeader(), "the old leader no longer leads");
                assertTrue(b.awaitLeadership(WAIT.plus(SLOW_POLL)), "b did not take over");
                long tookMs = (System.nanoTime() - t0) / 1_000_000;
                System.out.println("java: operator-initiated handover a -> b: b leads after " + tookMs + " ms (a renews every 500 ms)");
                assertTrue(tookMs < WOKEN_MS, "b led only after " + tookMs + " ms: it was not woken");
                assertEquals(StopReason.HANDED_OVER, stopOf(aEvents, term).reason());
                assertFalse(a.isLeader());
            }
        }
    }

    /**
     * An operator's handover seen first by the leader's own fence (its next renew is 15 s away):
     * the refusal is error 31004, a NotLeaderException, and the elector stops for HANDED_OVER
     * (not LOST_SEAT); its acknowledgement lets the named node lead at once.
     */
    @Test
    void aFenceRefusedByAnOperatorsHandoverStopsForIt() throws Exception {
        String service = "fence-handover";
        List<ElectorEvent> aEvents = new CopyOnWriteArrayList<>();
        Duration lease = Duration.ofSeconds(60);
        try (Elector a = slowPoller(service, "a", lease, Duration.ofSeconds(15)).listener(aEvents::add).build()) {
            assertTrue(a.awaitLeadership(WAIT), "a did not lead: " + a.lastCallError());
            long term = a.term();
            try (Elector b = slowPoller(service, "b", lease, Duration.ofSeconds(15)).build()) {
                assertFalse(client.handover(service, "b").isLeader());
                assertTrue(a.isLeader(), "a cannot know yet");
                try (Connection conn = db.connection()) {
                    conn.setAutoCommit(false);
                    NotLeaderException e = assertThrows(NotLeaderException.class, () -> a.fence(conn));
                    assertEquals(31004, e.serverCode(), e.toString());
                    conn.rollback();
                }
                assertFalse(a.isLeader());
                assertEquals(StopReason.HANDED_OVER, stopOf(aEvents, term).reason());
                assertTrue(b.awaitLeadership(WAIT.plus(SLOW_POLL)), "b did not take over");
                assertEquals(term + 1, b.term());
            }
        }
    }
}
