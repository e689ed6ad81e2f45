package io.mysqlleader;

import com.sun.jna.Callback;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.ByteByReference;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Properties;

/**
 * The C ABI (include/mysqlleader.h) as JNA sees it, and where the library comes from. Internal.
 *
 * <p>Type rules, stated once: C {@code bool} is a {@code byte} (JNA would map {@code boolean}
 * to a 4-byte int), {@code uint64_t} a {@code long} read as unsigned where it matters,
 * {@code size_t} a {@code long} (64-bit only), strings UTF-8 whatever the platform charset.
 * The {@code mysqlleader_last_error*} values are per OS thread; a JNA call runs on the calling
 * Java thread, so they are read on the thread of the call that failed.
 */
interface Lib extends Library {
    String VERSION = loadVersion();
    Lib C = load();

    // --- the library --------------------------------------------------------------------------
    String mysqlleader_version();
    int mysqlleader_last_error_copy(byte[] buf, long bufLen, LongByReference neededOut);
    Pointer mysqlleader_last_error_parameter();
    Pointer mysqlleader_last_error_sqlstate();
    long mysqlleader_last_error_current_term();
    int mysqlleader_last_error_server_code();
    byte mysqlleader_last_error_is_transient();
    int mysqlleader_error_classify(int serverCode, String sqlstate, String message);
    int mysqlleader_set_log_callback(Pointer userdata, LogCallback callback, int maxLevel);

    // --- the client ---------------------------------------------------------------------------
    int mysqlleader_client_new(String url, PointerByReference clientOut);
    int mysqlleader_client_set_request_timeout(Pointer client, long timeoutMs);
    void mysqlleader_client_free(Pointer client);
    int mysqlleader_migrate(Pointer client, LongByReference appliedOut);
    int mysqlleader_campaign(Pointer client, String serviceId, String nodeId, long leaseMs, CampaignRow out);
    int mysqlleader_am_i_leader(Pointer client, String serviceId, String nodeId, CheckRow out);
    int mysqlleader_current_leader(Pointer client, String serviceId, CurrentLeaderRow out);
    int mysqlleader_force_leader(Pointer client, String serviceId, String nodeId, long leaseMs, CampaignRow out);
    int mysqlleader_reelect(Pointer client, String serviceId, ReelectRow out);
    int mysqlleader_resign(Pointer client, String serviceId, String nodeId, ResignRow out);
    int mysqlleader_handover(Pointer client, String serviceId, String toNode, CampaignRow out);
    int mysqlleader_assert_leader(Pointer client, String serviceId, String nodeId, long term, CheckRow out);
    int mysqlleader_set_expiry_event(Pointer client, byte enabled, ByteByReference enabledOut);

    // --- the elector --------------------------------------------------------------------------
    int mysqlleader_elector_new(Pointer client, ElectorConfig config, EventCallback callback, Pointer userdata,
                                PointerByReference electorOut);
    int mysqlleader_elector_is_leader(Pointer elector, ByteByReference out);
    int mysqlleader_elector_term(Pointer elector, LongByReference out);
    int mysqlleader_elector_valid_for_ms(Pointer elector, LongByReference out);
    int mysqlleader_elector_leader_id(Pointer elector, byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_elector_node_id(Pointer elector, byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_elector_snapshot(Pointer elector, StateRow out);
    int mysqlleader_elector_last_call_error(Pointer elector, byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_elector_metrics_text(Pointer elector, byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_session_metrics_text(Pointer session, byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_elector_resign(Pointer elector, ByteByReference resignedOut);
    int mysqlleader_elector_handover(Pointer elector, String toNode, ByteByReference handedOverOut);
    int mysqlleader_elector_wait(Pointer elector, long timeoutMs, IntByReference outcomeOut);
    int mysqlleader_elector_wait_for_leadership(Pointer elector, long timeoutMs, ByteByReference leadingOut);
    int mysqlleader_elector_wait_term_end(Pointer elector, long term, long timeoutMs, ByteByReference endedOut,
                                          IntByReference reasonOut);
    int mysqlleader_elector_is_healthy(Pointer elector, ByteByReference out);
    int mysqlleader_elector_note_refusal(Pointer elector, long term);
    int mysqlleader_elector_note_refusal_code(Pointer elector, long term, int serverCode);
    void mysqlleader_elector_free(Pointer elector);

    // --- the session --------------------------------------------------------------------------
    int mysqlleader_session_new(Pointer client, ElectorConfig config, PointerByReference sessionOut);
    int mysqlleader_session_elector(Pointer session, String serviceId, EventCallback callback, Pointer userdata,
                                    PointerByReference electorOut);
    void mysqlleader_session_free(Pointer session);

    // --- constants of the header --------------------------------------------------------------
    int ID_BUFFER_SIZE = 513;
    int ELECTOR_NO_RESIGN_ON_FREE = 1;
    int ELECTOR_NO_JITTER = 2;
    int WAIT_LEADING = 1;
    int WAIT_TIMED_OUT = 2;
    int WAIT_NOT_CAMPAIGNING = 3;
    int WAIT_FAILED = 4;

    /** {@code mysqlleader_event_callback}. */
    interface EventCallback extends Callback {
        void invoke(Pointer userdata, EventRow event);
    }

    /** {@code mysqlleader_log_callback}: level 1 error ... 5 trace. */
    interface LogCallback extends Callback {
        void invoke(Pointer userdata, int level, String target, String message);
    }

    @Structure.FieldOrder({"is_leader", "leader_id", "term", "lease_remaining_ms"})
    class CampaignRow extends Structure {
        public byte is_leader;
        public byte[] leader_id = new byte[ID_BUFFER_SIZE];
        public long term;
        public long lease_remaining_ms;
    }

    @Structure.FieldOrder({"is_leader", "term", "lease_remaining_ms"})
    class CheckRow extends Structure {
        public byte is_leader;
        public long term;
        public long lease_remaining_ms;
    }

    @Structure.FieldOrder({"leader_id", "term", "lease_remaining_ms"})
    class CurrentLeaderRow extends Structure {
        public byte[] leader_id = new byte[ID_BUFFER_SIZE];
        public long term;
        public long lease_remaining_ms;
    }

    @Structure.FieldOrder({"previous_leader_id", "term"})
    class ReelectRow extends Structure {
        public byte[] previous_leader_id = new byte[ID_BUFFER_SIZE];
        public long term;
    }

    @Structure.FieldOrder({"resigned", "term"})
    class ResignRow extends Structure {
        public byte resigned;
        public long term;
    }

    @Structure.FieldOrder({"service_id", "node_id", "lease_ms", "renew_ms", "retry_ms", "retry_jitter",
            "request_timeout_ms", "drift_margin_ms", "flags", "fallback_clients", "fallback_client_count"})
    class ElectorConfig extends Structure {
        public String service_id;
        public String node_id;
        public long lease_ms;
        public long renew_ms;
        public long retry_ms;
        public double retry_jitter;
        public long request_timeout_ms;
        public long drift_margin_ms;
        public int flags;
        public Pointer fallback_clients;
        public long fallback_client_count;

        ElectorConfig() {
            super();
            setStringEncoding("UTF-8");
        }
    }

    @Structure.FieldOrder({"kind", "term", "reason", "leader_id", "valid_for_ms", "missed", "result"})
    class EventRow extends Structure {
        public int kind;
        public long term;
        public int reason;
        public Pointer leader_id;
        public long valid_for_ms;
        public long missed;
        public int result;

        public EventRow() {
            super();
        }

        public EventRow(Pointer p) {
            super(p);
            read();
        }
    }

    @Structure.FieldOrder({"is_leader", "term", "valid_for_ms", "campaigning", "last_call_result", "leader_id"})
    class StateRow extends Structure {
        public byte is_leader;
        public long term;
        public long valid_for_ms;
        public byte campaigning;
        public int last_call_result;
        public byte[] leader_id = new byte[ID_BUFFER_SIZE];
    }

    /** A NUL-terminated UTF-8 string in {@code buf}. */
    static String string(byte[] buf) {
        int n = 0;
        while (n < buf.length && buf[n] != 0) n++;
        return new String(buf, 0, n, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** A borrowed NUL-terminated UTF-8 string, or null. */
    static String string(Pointer p) {
        return p == null ? null : p.getString(0, "UTF-8");
    }

    /** The binding's version (the pom's, which equals Cargo.toml's). */
    private static String loadVersion() {
        try (InputStream in = Lib.class.getResourceAsStream("version.properties")) {
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException | NullPointerException e) {
            throw new ExceptionInInitializerError("io/mysqlleader/version.properties is missing from the jar");
        }
    }

    /**
     * Loads libmysqlleader: the file named by the system property {@code mysqlleader.library.path},
     * else by the environment variable {@code MYSQLLEADER_LIB}, else the copy inside this jar
     * ({@code linux-x86-64/libmysqlleader.so}, extracted by JNA to a temporary file). Never a
     * system-wide copy of another version: the library's version must equal the binding's.
     */
    private static Lib load() {
        String path = System.getProperty("mysqlleader.library.path");
        if (path == null || path.isEmpty()) path = System.getenv("MYSQLLEADER_LIB");
        File file;
        if (path != null && !path.isEmpty()) {
            file = new File(path);
        } else {
            try {
                file = Native.extractFromResourcePath("mysqlleader", Lib.class.getClassLoader());
            } catch (IOException e) {
                throw new UnsatisfiedLinkError("libmysqlleader is not in this jar for " + com.sun.jna.Platform.RESOURCE_PREFIX
                        + " (set -Dmysqlleader.library.path=/path/to/libmysqlleader.so or MYSQLLEADER_LIB): " + e.getMessage());
            }
        }
        Lib lib = Native.load(file.getAbsolutePath(), Lib.class, Map.of(Library.OPTION_STRING_ENCODING, "UTF-8"));
        String version = lib.mysqlleader_version();
        if (!VERSION.equals(version)) {
            throw new UnsatisfiedLinkError("libmysqlleader at " + file + " is version " + version
                    + ", this binding is version " + VERSION + ": use the library of the same release");
        }
        Logging.install(lib);
        return lib;
    }
}
