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
            Map.entry("mysqlleader_elector_wait_for_leadership", "awaitLeadership asks mysqlleader_elector_wait, which also tells a stopped campaign"),
            Map.entry("mysqlleader_txn_begin", "Java fences the application's own JDBC transaction (Elector.fence)"),
            Map.entry("mysqlleader_txn_assert_leader", "the same"),
            Map.entry("mysqlleader_txn_execute", "the same"),
            Map.entry("mysqlleader_txn_commit", "the same"),
            Map.entry("mysqlleader_txn_rollback", "the same"),
            Map.entry("mysqlleader_txn_free", "the same"),
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
}
