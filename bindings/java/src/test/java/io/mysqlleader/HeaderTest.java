package io.mysqlleader;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

/**
 * The JNA declarations ({@link CApi}) are generated from include/mysqlleader.h by the
 * repository's tests/ffi_header.rs, which fails when they drift: nothing here parses the header.
 * What the generator does not cover is checked here: the hand-written Java enums (ErrorKind,
 * ElectorEvent.Kind, StopReason) against the header's enums ({@link CApi#ENUMS}), and that the
 * generated interface is the one the binding loads.
 */
class HeaderTest {
    @Test
    void everyFunctionOfTheHeaderIsDeclaredOnLib() {
        int functions = 0;
        for (Method method : CApi.class.getDeclaredMethods()) {
            if (method.getName().startsWith("mysqlleader_")) functions++;
        }
        assertTrue(functions >= 40, "CApi declares only " + functions + " functions");
        assertTrue(CApi.class.isAssignableFrom(Lib.class));
        assertEquals(CApi.HEADER_VERSION_MAJOR + "." + CApi.HEADER_VERSION_MINOR + "." + CApi.HEADER_VERSION_PATCH,
                CApi.HEADER_VERSION);
    }

    @Test
    void everyResultCodeIsAnErrorKindOfTheSameName() {
        Map<String, Integer> codes = CApi.ENUMS.get("mysqlleader_result");
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
    void everyEventKindAndStopReasonIsKnown() {
        Map<String, Integer> kinds = CApi.ENUMS.get("mysqlleader_event_kind");
        assertEquals(ElectorEvent.Kind.values().length, kinds.size(), "event kinds: " + kinds);
        for (Map.Entry<String, Integer> k : kinds.entrySet()) {
            assertSame(ElectorEvent.Kind.valueOf(k.getKey()), ElectorEvent.Kind.of(k.getValue()), k.getKey());
        }
        Map<String, Integer> reasons = CApi.ENUMS.get("mysqlleader_stop_reason");
        assertEquals(StopReason.values().length, reasons.size(), "stop reasons: " + reasons);
        for (Map.Entry<String, Integer> r : reasons.entrySet()) {
            assertSame(StopReason.valueOf(r.getKey()), StopReason.of(r.getValue()), r.getKey());
        }
    }
}
