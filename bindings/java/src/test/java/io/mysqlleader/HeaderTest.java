package io.mysqlleader;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.*;

/**
 * The JNA declarations against include/mysqlleader.h: every function Java declares is in the
 * header with as many parameters, and every function of the header is declared here or listed
 * in {@link #NOT_USED} with the reason, so a capability added to the C ABI is not missed.
 */
class HeaderTest {
    static final Map<String, String> NOT_USED = Map.ofEntries(
            Map.entry("mysqlleader_last_error", "the message is copied with mysqlleader_last_error_copy"),
            Map.entry("mysqlleader_last_error_code", "the code is the failed call's own return value"),
            Map.entry("mysqlleader_result_name", "ErrorKind names the codes"),
            Map.entry("mysqlleader_stop_reason_name", "StopReason names the reasons"),
            Map.entry("mysqlleader_string_free", "only for mysqlleader_install_sql's string"),
            Map.entry("mysqlleader_install_sql", "the CLI's `mysqlleader sql` serves DBAs; Client.migrate() installs"),
            Map.entry("mysqlleader_default_node_id", "Elector.nodeId() reads the id the elector uses"),
            Map.entry("mysqlleader_txn_begin", "Java fences the application's own JDBC transaction (Elector.fence)"),
            Map.entry("mysqlleader_txn_assert_leader", "the same"),
            Map.entry("mysqlleader_txn_execute", "the same"),
            Map.entry("mysqlleader_txn_commit", "the same"),
            Map.entry("mysqlleader_txn_rollback", "the same"),
            Map.entry("mysqlleader_txn_free", "the same"),
            Map.entry("mysqlleader_txn_query", "the same: JDBC reads the rows of the application's own transaction"),
            Map.entry("mysqlleader_txn_last_insert_id", "the same"),
            Map.entry("mysqlleader_rows_column_count", "the same"),
            Map.entry("mysqlleader_rows_column_name", "the same"),
            Map.entry("mysqlleader_rows_column_kind", "the same"),
            Map.entry("mysqlleader_rows_row_count", "the same"),
            Map.entry("mysqlleader_rows_value", "the same"),
            Map.entry("mysqlleader_rows_affected_rows", "the same"),
            Map.entry("mysqlleader_rows_last_insert_id", "the same"),
            Map.entry("mysqlleader_rows_free", "the same"),
            Map.entry("mysqlleader_elector_txn_begin", "the same"));

    static Map<String, Integer> headerFunctions() throws Exception {
        String header = Files.readString(Path.of("../../include/mysqlleader.h"));
        Map<String, Integer> out = new TreeMap<>();
        Matcher m = Pattern.compile("(?m)^[a-z][\\w ]*?\\**\\s*\\b(mysqlleader_\\w+)\\(([^)]*)\\);").matcher(header);
        while (m.find()) {
            String params = m.group(2).trim();
            out.put(m.group(1), params.equals("void") || params.isEmpty() ? 0 : params.split(",").length);
        }
        assertTrue(out.size() >= 40, "found only " + out.size() + " functions in the header");
        return out;
    }

    @Test
    void everyDeclarationIsInTheHeaderAndEveryFunctionIsDeclared() throws Exception {
        Map<String, Integer> header = headerFunctions();
        Map<String, Integer> declared = new TreeMap<>();
        for (Method method : Lib.class.getDeclaredMethods()) {
            if (method.getName().startsWith("mysqlleader_")) declared.put(method.getName(), method.getParameterCount());
        }
        for (Map.Entry<String, Integer> d : declared.entrySet()) {
            assertEquals(header.get(d.getKey()), d.getValue(), d.getKey() + ": parameters in the header vs in Lib");
        }
        for (String name : header.keySet()) {
            assertTrue(declared.containsKey(name) || NOT_USED.containsKey(name), name + " is in the header but Java neither declares it nor says why not");
        }
        for (String name : NOT_USED.keySet()) {
            assertTrue(header.containsKey(name), name + " is listed as not used but is not in the header");
        }
    }

    /** The constants of {@code enum name} in the header: name without the prefix to value. */
    static Map<String, Integer> headerEnum(String name, String prefix) throws Exception {
        String header = Files.readString(Path.of("../../include/mysqlleader.h"));
        Matcher block = Pattern.compile("enum " + name + "\\b[^{]*\\{(.*?)\\};", Pattern.DOTALL).matcher(header);
        assertTrue(block.find(), "enum " + name + " is not in the header");
        Map<String, Integer> out = new TreeMap<>();
        Matcher m = Pattern.compile("\\b" + prefix + "(\\w+) = (\\d+),").matcher(block.group(1));
        while (m.find()) out.put(m.group(1), Integer.parseInt(m.group(2)));
        assertTrue(out.size() >= 2, "found only " + out + " in enum " + name);
        return out;
    }

    @Test
    void everyResultCodeIsAnErrorKindOfTheSameName() throws Exception {
        Map<String, Integer> codes = headerEnum("mysqlleader_result", "MYSQLLEADER_");
        for (Map.Entry<String, Integer> c : codes.entrySet()) {
            if (c.getKey().equals("OK")) {
                assertEquals(0, c.getValue());
                continue;
            }
            ErrorKind kind = ErrorKind.valueOf(c.getKey());
            assertEquals(c.getValue(), kind.code, c.getKey());
            assertSame(kind, ErrorKind.of(c.getValue()), c.getKey());
            // Every kind has its own exception class, not the catch-all's.
            MysqlLeaderException e = MysqlLeaderException.of(kind, "m", null, null, 0, 0, false, null);
            assertSame(kind, e.kind(), c.getKey());
            if (kind != ErrorKind.SERVER) assertNotSame(ServerException.class, e.getClass(), c.getKey());
        }
        for (ErrorKind kind : ErrorKind.values()) {
            if (kind.code >= 0) assertEquals(kind.code, codes.get(kind.name()), kind + " is not in the header with its code");
        }
    }

    @Test
    void everyEventKindWaitOutcomeAndStopReasonIsKnown() throws Exception {
        Map<String, Integer> kinds = headerEnum("mysqlleader_event_kind", "MYSQLLEADER_EVENT_");
        assertEquals(ElectorEvent.Kind.values().length, kinds.size(), "event kinds: " + kinds);
        for (Map.Entry<String, Integer> k : kinds.entrySet()) {
            assertSame(ElectorEvent.Kind.valueOf(k.getKey()), ElectorEvent.Kind.of(k.getValue()), k.getKey());
        }
        Map<String, Integer> waits = headerEnum("mysqlleader_wait_outcome", "MYSQLLEADER_WAIT_");
        assertEquals(Map.of("LEADING", Lib.WAIT_LEADING, "TIMED_OUT", Lib.WAIT_TIMED_OUT,
                "NOT_CAMPAIGNING", Lib.WAIT_NOT_CAMPAIGNING, "FAILED", Lib.WAIT_FAILED), waits);
        Map<String, Integer> reasons = headerEnum("mysqlleader_stop_reason", "MYSQLLEADER_STOP_");
        assertEquals(StopReason.values().length, reasons.size(), "stop reasons: " + reasons);
        for (Map.Entry<String, Integer> r : reasons.entrySet()) {
            assertSame(StopReason.valueOf(r.getKey()), StopReason.of(r.getValue()), r.getKey());
        }
    }
}
