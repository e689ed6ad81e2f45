package io.mysqlleader;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Issue 41: the library's log records are quiet by default: with nothing configured for the
 * logger {@code mysqlleader} (java.util.logging, no level on it), only WARNING and above reach
 * it; a level set on it (or another LoggerFinder) decides instead.
 */
class LoggingTest {
    @Test
    void unconfiguredMeansNoLevelOnTheJulLoggerMysqlleader() {
        java.util.logging.Logger jul = java.util.logging.Logger.getLogger("mysqlleader");
        Level before = jul.getLevel();
        try {
            jul.setLevel(null);
            assertTrue(Logging.unconfigured(), "the JDK's LoggerFinder and no level: unconfigured");
            jul.setLevel(Level.INFO);
            assertFalse(Logging.unconfigured(), "a level on mysqlleader is the application's configuration");
        } finally {
            jul.setLevel(before);
        }
    }

    /**
     * An elector that starts and leads logs "elector started" and "started leading" at INFO; with
     * nothing configured (as in this test JVM) neither reaches java.util.logging, whose default
     * configuration would print INFO records.
     */
    @Test
    void byDefaultNoInfoRecordReachesJavaUtilLogging() throws Exception {
        java.util.logging.Logger jul = java.util.logging.Logger.getLogger("mysqlleader");
        assumeTrue(jul.getLevel() == null, "the JVM of the tests has configured the logger mysqlleader");
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override public void publish(LogRecord r) { records.add(r); }
            @Override public void flush() {}
            @Override public void close() {}
        };
        jul.addHandler(capture);
        try (TestDb db = TestDb.migrated("logging"); Client client = Client.connect(db.url)) {
            try (Elector e = Elector.builder(client, "quiet").nodeId("a").lease(Duration.ofSeconds(2)).build()) {
                assertTrue(e.awaitLeadership(Duration.ofSeconds(15)), "no leadership: " + e.lastCallError());
            }
        } finally {
            jul.removeHandler(capture);
        }
        List<String> below = records.stream().filter(r -> r.getLevel().intValue() < Level.WARNING.intValue())
                .map(r -> r.getLevel() + " " + r.getLoggerName() + ": " + r.getMessage()).toList();
        assertEquals(List.of(), below, "records below WARNING were forwarded with nothing configured");
    }
}
