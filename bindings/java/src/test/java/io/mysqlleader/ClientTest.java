package io.mysqlleader;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.*;

/** The one-shot calls and every error kind a Java caller can meet, against the real server. */
class ClientTest {
    static TestDb db;
    static Client client;

    @BeforeAll
    static void setUp() throws Exception {
        db = TestDb.migrated("client");
        client = Client.connect(db.url);
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (client != null) client.close();
        if (db != null) db.close();
    }

    @Test
    void oneShotCallsFollowTheProcedures() {
        Duration lease = Duration.ofSeconds(30);
        CampaignResult first = client.campaign("calls", "a", lease);
        assertTrue(first.isLeader());
        assertEquals("a", first.leaderId());
        assertTrue(first.term() >= 1);
        assertTrue(first.leaseRemaining().compareTo(Duration.ZERO) > 0);

        CampaignResult other = client.campaign("calls", "b", lease);
        assertFalse(other.isLeader());
        assertEquals("a", other.leaderId());
        assertEquals(first.term(), other.term());

        assertTrue(client.amILeader("calls", "a").isLeader());
        assertFalse(client.amILeader("calls", "b").isLeader());
        CurrentLeader now = client.currentLeader("calls");
        assertEquals("a", now.leaderId());
        assertEquals(first.term(), now.term());
        assertEquals(first.term(), client.assertLeader("calls", "a", first.term()).term());

        CampaignResult forced = client.forceLeader("calls", "b", lease);
        assertTrue(forced.isLeader());
        assertEquals(first.term() + 1, forced.term());

        ReelectResult re = client.reelect("calls");
        assertEquals("b", re.previousLeaderId());
        assertNull(client.currentLeader("calls").leaderId());

        assertTrue(client.campaign("calls", "a", lease).isLeader());
        assertFalse(client.resign("calls", "b").resigned());
        ResignResult resigned = client.resign("calls", "a");
        assertTrue(resigned.resigned());
        assertEquals(first.term() + 2, resigned.term());

        assertTrue(client.setExpiryEvent(true));
        assertFalse(client.setExpiryEvent(false));
        assertEquals(0, client.migrate(), "a second migrate applies nothing");
    }

    @Test
    void historyTellsWhoLedAndHow() throws Exception {
        client.campaign("history", "a", Duration.ofSeconds(30));
        client.resign("history", "a");
        try (Connection c = db.connection();
             PreparedStatement st = c.prepareStatement("SELECT COUNT(*) FROM leader_election_history WHERE service_id = ?")) {
            st.setString(1, "history");
            try (ResultSet rs = st.executeQuery()) {
                assertTrue(rs.next());
                assertEquals(1, rs.getInt(1));
            }
        }
    }

    @Test
    void invalidArgumentsNameTheParameter() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> client.campaign("", "a", Duration.ofSeconds(1)));
        assertEquals(ErrorKind.INVALID_ARGUMENT, e.kind());
        assertEquals("service_id", e.parameter());
        assertFalse(e.isRetryable());

        e = assertThrows(InvalidArgumentException.class, () -> client.campaign("s", "n".repeat(129), Duration.ofSeconds(1)));
        assertEquals("node_id", e.parameter());

        e = assertThrows(InvalidArgumentException.class, () -> client.campaign("s", "a", Duration.ofDays(2)));
        assertEquals("lease_ms", e.parameter());

        // Durations that C cannot take as they are: never rounded, never 0 ("the default").
        for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofMillis(-5), Duration.ofNanos(1_500_000)}) {
            e = assertThrows(InvalidArgumentException.class, () -> client.campaign("s", "a", bad), bad.toString());
            assertEquals(ErrorKind.INVALID_ARGUMENT, e.kind());
            assertEquals("lease_ms", e.parameter());
        }
        e = assertThrows(InvalidArgumentException.class, () -> client.campaign("s", "a", null));
        assertEquals(ErrorKind.NULL_ARGUMENT, e.kind());
        assertEquals("lease_ms", e.parameter());

        e = assertThrows(InvalidArgumentException.class, () -> Client.connect("postgres://x@y/z"));
        assertEquals("url", e.parameter());
        assertThrows(InvalidArgumentException.class, () -> client.requestTimeout(Duration.ofDays(3)));
    }

    @Test
    void nullsAreRejectedByName() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> client.campaign(null, "a", Duration.ofSeconds(1)));
        assertEquals(ErrorKind.NULL_ARGUMENT, e.kind());
        assertEquals("service_id", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> client.amILeader("s", null));
        assertEquals("node_id", e.parameter());
        e = assertThrows(InvalidArgumentException.class, () -> Client.connect(null));
        assertEquals("url", e.parameter());
    }

    @Test
    void notLeaderCarriesTheCurrentTerm() {
        long term = client.forceLeader("fenceone", "b", Duration.ofSeconds(30)).term();
        NotLeaderException e = assertThrows(NotLeaderException.class, () -> client.assertLeader("fenceone", "a", term));
        assertEquals(ErrorKind.NOT_LEADER, e.kind());
        assertEquals("45001", e.sqlState());
        assertEquals(term, e.currentTerm().orElseThrow());
        assertFalse(e.isRetryable());
    }

    @Test
    void unreachableServerIsAConnectionErrorWithoutThePassword() throws Exception {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            int port = s.getLocalPort();
            s.close();
            try (Client dead = Client.connect("mysql://u:s3cr3t-Pw@127.0.0.1:" + port + "/x").requestTimeout(Duration.ofSeconds(2))) {
                ConnectionException e = assertThrows(ConnectionException.class, () -> dead.currentLeader("s"));
                assertEquals(ErrorKind.CONNECTION, e.kind());
                assertTrue(e.isRetryable());
                assertFalse(e.getMessage().contains("s3cr3t-Pw"), e.getMessage());
                // The server, as host:port, never the user.
                assertTrue(e.getMessage().contains("127.0.0.1:" + port), e.getMessage());
                assertFalse(e.getMessage().contains("u@"), e.getMessage());
            }
        }
    }

    @Test
    void anUnmigratedDatabaseSaysSo() throws Exception {
        try (TestDb empty = TestDb.empty("bare"); Client c = Client.connect(empty.url)) {
            NotMigratedException e = assertThrows(NotMigratedException.class, () -> c.campaign("s", "a", Duration.ofSeconds(1)));
            assertEquals(ErrorKind.NOT_MIGRATED, e.kind());
            // The server's own error stays with it: 1305, the procedure does not exist.
            assertEquals(1305, e.serverCode(), e.toString());
            assertEquals("42000", e.sqlState(), e.toString());
        }
    }

    @Test
    void anUnknownDatabaseIsAPrivilegeErrorWithItsCode() throws Exception {
        // The URL's database does not exist: the server's error 1049 (unknown database), one of
        // the grants retrying cannot mend (issue 26).
        try (Client c = Client.connect(TestDb.urlWithDb(TestDb.baseUrl(), "mljava_no_such_db"))) {
            MysqlLeaderException e = assertThrows(MysqlLeaderException.class, () -> c.currentLeader("s"));
            assertInstanceOf(PrivilegeException.class, e);
            assertEquals(ErrorKind.PRIVILEGE, e.kind());
            assertEquals(1049, e.serverCode());
            assertFalse(e.isRetryable());
        }
    }

    @Test
    void aWrongPasswordIsAnAuthenticationError() throws Exception {
        try (Client c = Client.connect(TestUrls.withPassword(TestDb.urlWithDb(TestDb.baseUrl(), db.name), "pw-Zq7x-wrong"))) {
            MysqlLeaderException e = assertThrows(MysqlLeaderException.class, () -> c.currentLeader("s"));
            assertInstanceOf(AuthenticationException.class, e);
            assertEquals(ErrorKind.AUTHENTICATION, e.kind());
            assertEquals(1045, e.serverCode());
            assertFalse(e.isRetryable());
            assertFalse(e.getMessage().contains("pw-Zq7x-wrong"), e.getMessage());
        }
    }

    /** The server of scripts/testdb.sh offers no TLS (scripts/test-tls.sh tests TLS against one that does). */
    @Test
    void tlsRequiredOfAServerWithoutItIsAUsageError() throws Exception {
        String url = TestDb.urlWithDb(TestDb.baseUrl(), db.name) + "?ssl-mode=REQUIRED";
        try (Client c = Client.connect(url)) {
            UsageException e = assertThrows(UsageException.class, () -> c.currentLeader("s"));
            System.out.println("java: TLS required of a plaintext server: " + e.getMessage());
            assertEquals(ErrorKind.USAGE, e.kind());
            assertFalse(e.isRetryable());
        }
    }

    @Test
    void accessDeniedNamesTheAccountAndService() throws Exception {
        try (TestDb limited = TestDb.migrated("access"); Client c = Client.connect(limited.url)) {
            String account = java.net.URI.create(limited.url).getUserInfo().split(":")[0];
            limited.exec("INSERT INTO leader_election_access (account, service_pattern) VALUES ('" + account + "', 'allowed%')");
            // A change by hand takes effect at the flush (migration V14).
            limited.exec("CALL leader_election_flush_access()");
            assertTrue(c.campaign("allowed-1", "a", Duration.ofSeconds(5)).isLeader());
            AccessDeniedException e = assertThrows(AccessDeniedException.class, () -> c.campaign("denied-1", "a", Duration.ofSeconds(5)));
            assertEquals(ErrorKind.ACCESS_DENIED, e.kind());
            assertEquals("45002", e.sqlState());
            assertTrue(e.getMessage().contains("denied-1"), e.getMessage());
        }
    }

    @Test
    void aClosedClientRefusesEveryCall() {
        Client c = Client.connect(db.url);
        c.close();
        c.close(); // idempotent
        assertTrue(c.isClosed());
        InvalidStateException e = assertThrows(InvalidStateException.class, () -> c.currentLeader("s"));
        assertEquals(ErrorKind.INVALID_STATE, e.kind());
        assertThrows(InvalidStateException.class, c::migrate);
        assertThrows(InvalidStateException.class, () -> Elector.builder(c, "s").build());
    }

    /** The kinds no Java call can cause (C bugs, invalid UTF-8, a failed migration) still map to their class. */
    @Test
    void everyKindMapsToItsClass() {
        assertInstanceOf(InvalidArgumentException.class, MysqlLeaderException.of(ErrorKind.INVALID_UTF8, "m", "p", null, 0, 0, false, null));
        assertInstanceOf(MigrationException.class, MysqlLeaderException.of(ErrorKind.MIGRATION, "m", null, null, 0, 0, false, null));
        assertInstanceOf(InternalException.class, MysqlLeaderException.of(ErrorKind.PANIC, "m", null, null, 0, 0, false, null));
        assertInstanceOf(InternalException.class, MysqlLeaderException.of(ErrorKind.BUFFER_TOO_SMALL, "m", null, null, 0, 0, false, null));
        assertInstanceOf(UsageException.class, MysqlLeaderException.of(ErrorKind.USAGE, "m", null, null, 0, 0, false, null));
        for (ErrorKind k : ErrorKind.values()) {
            if (k.code > 0) assertEquals(k, ErrorKind.of(k.code));
            assertEquals(k, MysqlLeaderException.of(k, "m", null, null, 0, 0, false, null).kind());
        }
    }

    @Test
    void theLibraryIsTheBindingsVersion() {
        assertEquals(Lib.VERSION, Lib.C.mysqlleader_version());
    }
}
