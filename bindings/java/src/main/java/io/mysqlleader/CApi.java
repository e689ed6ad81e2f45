// Generated from include/mysqlleader.h by tests/ffi_header.rs; do not edit.
// Regenerate: MYSQLLEADER_UPDATE_HEADER=1 cargo test --release --test command_line ffi_header
// The mapping rules are in tests/ffi_header/bindings.rs (section Java).

package io.mysqlleader;

import com.sun.jna.Callback;
import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.ByteByReference;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

import java.util.Map;

/**
 * The C ABI ({@code include/mysqlleader.h}) as JNA sees it: constants, structures, callbacks and
 * every function. Generated; {@link Lib} extends it and loads the library. Internal.
 */
interface CApi extends Library {
    /** JNA's options for the structures and callbacks declared here: strings are UTF-8. */
    Map<String, Object> OPTIONS = Map.of(Library.OPTION_STRING_ENCODING, "UTF-8");

    // --- constants (#define MYSQLLEADER_*) ---------------------------------------------------

    // The version of the library this header belongs to (Cargo.toml's); compare with mysqlleader_version().
    int HEADER_VERSION_MAJOR = 0;

    int HEADER_VERSION_MINOR = 1;

    int HEADER_VERSION_PATCH = 0;

    String HEADER_VERSION = "0.1.0";

    // Longest service or node id the procedures accept, in characters.
    int ID_MAX_CHARS = 128;

    // Bytes a caller's buffer needs to hold any id with its terminating NUL: 128 characters of
    // UTF-8 take at most 512 bytes.
    int ID_BUFFER_SIZE = 513;

    // Shortest lease, in milliseconds.
    int LEASE_MS_MIN = 1;

    // Longest lease, in milliseconds (one day).
    int LEASE_MS_MAX = 86400000;

    // The request timeout of a new client: the longest one call may take before it fails with
    // `MYSQLLEADER_CONNECTION`.
    int DEFAULT_REQUEST_TIMEOUT_MS = 5000;

    // The longest `mysqlleader_migrate` may take once connected (it waits up to 60 s for another
    // process's migration to finish first).
    int MIGRATE_TIMEOUT_MS = 120000;

    // Flag of `mysqlleader_elector_config.flags`: `mysqlleader_elector_free` does not resign; the
    // lease is left to lapse (the default is to resign, so another node takes over at once).
    int ELECTOR_NO_RESIGN_ON_FREE = 1;

    // Flag of `mysqlleader_elector_config.flags`: followers retry at exactly `retry_ms`, without
    // jitter (`retry_jitter` must then be 0).
    int ELECTOR_NO_JITTER = 2;

    // `timeout_ms` of `mysqlleader_elector_wait_for_leadership` that waits without limit.
    long WAIT_FOREVER = -1L; // UINT64_MAX

    // --- enums: each member as a constant ----------------------------------------------------

    // mysqlleader_result
    int OK = 0;
    int NULL_ARGUMENT = 1;
    int INVALID_ARGUMENT = 2;
    int INVALID_UTF8 = 3;
    int NOT_LEADER = 4;
    int CONNECTION = 5;
    int NOT_MIGRATED = 6;
    int SERVER = 7;
    int MIGRATION = 8;
    int BUFFER_TOO_SMALL = 9;
    int PANIC = 10;
    int INVALID_STATE = 11;
    int USAGE = 12;
    int ACCESS_DENIED = 13;
    int AUTHENTICATION = 14;
    int PRIVILEGE = 15;

    // mysqlleader_column_kind
    int COLUMN_TEXT = 0;
    int COLUMN_BINARY = 1;
    int COLUMN_INTEGER = 2;
    int COLUMN_DECIMAL = 3;
    int COLUMN_FLOAT = 4;
    int COLUMN_DATETIME = 5;
    int COLUMN_DATE = 6;
    int COLUMN_TIME = 7;

    // mysqlleader_event_kind
    int EVENT_STARTED_LEADING = 1;
    int EVENT_STOPPED_LEADING = 2;
    int EVENT_LEADER_CHANGED = 3;
    int EVENT_MISSED = 4;
    int EVENT_ELECTOR_STOPPED = 5;
    int EVENT_FAILING = 6;

    // mysqlleader_stop_reason
    int STOP_NONE = 0;
    int STOP_LOST_SEAT = 1;
    int STOP_DEADLINE_PASSED = 2;
    int STOP_RESIGNED = 3;
    int STOP_SHUTDOWN = 4;
    int STOP_FAILED = 5;
    int STOP_HANDED_OVER = 6;

    // mysqlleader_wait_outcome
    int WAIT_LEADING = 1;
    int WAIT_TIMED_OUT = 2;
    int WAIT_NOT_CAMPAIGNING = 3;
    int WAIT_FAILED = 4;

    /** Each enum's members, by name without the prefix they share (the tests of the Java enums read it). */
    Map<String, Map<String, Integer>> ENUMS = Map.of(
            "mysqlleader_result", Map.ofEntries(
                    Map.entry("OK", OK),
                    Map.entry("NULL_ARGUMENT", NULL_ARGUMENT),
                    Map.entry("INVALID_ARGUMENT", INVALID_ARGUMENT),
                    Map.entry("INVALID_UTF8", INVALID_UTF8),
                    Map.entry("NOT_LEADER", NOT_LEADER),
                    Map.entry("CONNECTION", CONNECTION),
                    Map.entry("NOT_MIGRATED", NOT_MIGRATED),
                    Map.entry("SERVER", SERVER),
                    Map.entry("MIGRATION", MIGRATION),
                    Map.entry("BUFFER_TOO_SMALL", BUFFER_TOO_SMALL),
                    Map.entry("PANIC", PANIC),
                    Map.entry("INVALID_STATE", INVALID_STATE),
                    Map.entry("USAGE", USAGE),
                    Map.entry("ACCESS_DENIED", ACCESS_DENIED),
                    Map.entry("AUTHENTICATION", AUTHENTICATION),
                    Map.entry("PRIVILEGE", PRIVILEGE)),
            "mysqlleader_column_kind", Map.ofEntries(
                    Map.entry("TEXT", COLUMN_TEXT),
                    Map.entry("BINARY", COLUMN_BINARY),
                    Map.entry("INTEGER", COLUMN_INTEGER),
                    Map.entry("DECIMAL", COLUMN_DECIMAL),
                    Map.entry("FLOAT", COLUMN_FLOAT),
                    Map.entry("DATETIME", COLUMN_DATETIME),
                    Map.entry("DATE", COLUMN_DATE),
                    Map.entry("TIME", COLUMN_TIME)),
            "mysqlleader_event_kind", Map.ofEntries(
                    Map.entry("STARTED_LEADING", EVENT_STARTED_LEADING),
                    Map.entry("STOPPED_LEADING", EVENT_STOPPED_LEADING),
                    Map.entry("LEADER_CHANGED", EVENT_LEADER_CHANGED),
                    Map.entry("MISSED", EVENT_MISSED),
                    Map.entry("ELECTOR_STOPPED", EVENT_ELECTOR_STOPPED),
                    Map.entry("FAILING", EVENT_FAILING)),
            "mysqlleader_stop_reason", Map.ofEntries(
                    Map.entry("NONE", STOP_NONE),
                    Map.entry("LOST_SEAT", STOP_LOST_SEAT),
                    Map.entry("DEADLINE_PASSED", STOP_DEADLINE_PASSED),
                    Map.entry("RESIGNED", STOP_RESIGNED),
                    Map.entry("SHUTDOWN", STOP_SHUTDOWN),
                    Map.entry("FAILED", STOP_FAILED),
                    Map.entry("HANDED_OVER", STOP_HANDED_OVER)),
            "mysqlleader_wait_outcome", Map.ofEntries(
                    Map.entry("LEADING", WAIT_LEADING),
                    Map.entry("TIMED_OUT", WAIT_TIMED_OUT),
                    Map.entry("NOT_CAMPAIGNING", WAIT_NOT_CAMPAIGNING),
                    Map.entry("FAILED", WAIT_FAILED)));

    // --- structures and callbacks ------------------------------------------------------------

    /** {@code mysqlleader_campaign_result}. */
    @Structure.FieldOrder({"is_leader", "leader_id", "term", "lease_remaining_ms"})
    class CampaignRow extends Structure {
        // Whether the caller holds the seat after the call.
        public byte is_leader;
        // The node holding a valid lease (the caller when `is_leader`), NUL-terminated; "" when
        // nobody does.
        public byte[] leader_id = new byte[ID_BUFFER_SIZE];
        // The fencing token of the service.
        public long term;
        // Milliseconds left on the current leader's lease, by the database's clock; 0 when nobody
        // leads.
        public long lease_remaining_ms;

        public CampaignRow() {
            super();
        }
    }

    /** {@code mysqlleader_leader_check}. */
    @Structure.FieldOrder({"is_leader", "term", "lease_remaining_ms"})
    class CheckRow extends Structure {
        // Whether the node holds a valid lease (always true after a successful `assert_leader`).
        public byte is_leader;
        // The current term, or the last term there was when nobody leads.
        public long term;
        // Milliseconds left on the current leader's lease; 0 when nobody leads.
        public long lease_remaining_ms;

        public CheckRow() {
            super();
        }
    }

    /** {@code mysqlleader_current_leader_result}. */
    @Structure.FieldOrder({"leader_id", "term", "lease_remaining_ms"})
    class CurrentLeaderRow extends Structure {
        // The node holding a valid lease, NUL-terminated; "" when the seat is vacant or the lease
        // has expired.
        public byte[] leader_id = new byte[ID_BUFFER_SIZE];
        // The current term, or the last term there was.
        public long term;
        // Milliseconds left on the lease; 0 when nobody leads.
        public long lease_remaining_ms;

        public CurrentLeaderRow() {
            super();
        }
    }

    /** {@code mysqlleader_reelect_result}. */
    @Structure.FieldOrder({"previous_leader_id", "term"})
    class ReelectRow extends Structure {
        // The node whose valid lease was ended, NUL-terminated; "" when nobody led.
        public byte[] previous_leader_id = new byte[ID_BUFFER_SIZE];
        // The term of the service (unchanged by `reelect`).
        public long term;

        public ReelectRow() {
            super();
        }
    }

    /** {@code mysqlleader_resign_result}. */
    @Structure.FieldOrder({"resigned", "term"})
    class ResignRow extends Structure {
        // Whether the node led and its lease has been ended.
        public byte resigned;
        // The term of the service.
        public long term;

        public ResignRow() {
            super();
        }
    }

    /** {@code mysqlleader_elector_config}. */
    @Structure.FieldOrder({"service_id", "node_id", "lease_ms", "renew_ms", "retry_ms", "retry_jitter", "request_timeout_ms", "drift_margin_ms", "flags", "fallback_clients", "fallback_client_count"})
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

        public ElectorConfig() {
            super();
            setStringEncoding("UTF-8");
        }
    }

    /** {@code mysqlleader_event}. */
    @Structure.FieldOrder({"kind", "term", "reason", "leader_id", "valid_for_ms", "missed", "result"})
    class EventRow extends Structure {
        // What happened: a `MYSQLLEADER_EVENT_*` value.
        public int kind;
        // The term the event is about.
        public long term;
        // For `MYSQLLEADER_EVENT_STOPPED_LEADING`; `MYSQLLEADER_STOP_NONE` otherwise.
        public int reason;
        // The leader: this node for `STARTED_LEADING`, the new leader or NULL (vacant seat) for
        // `LEADER_CHANGED`, NULL otherwise.
        public Pointer leader_id;
        // For `STARTED_LEADING`: milliseconds this node may act as leader without a renew.
        public long valid_for_ms;
        // For `MYSQLLEADER_EVENT_MISSED`: how many events were dropped.
        public long missed;
        // For `MYSQLLEADER_EVENT_FAILING`: the error class of the failing calls
        // (`MYSQLLEADER_AUTHENTICATION`, `MYSQLLEADER_PRIVILEGE`, ...); `MYSQLLEADER_OK` otherwise.
        public int result;

        public EventRow() {
            super();
        }

        public EventRow(Pointer p) {
            super(p);
            read();
        }
    }

    /** {@code mysqlleader_event_callback}. */
    // A callback for leadership changes: `userdata` is the pointer given to
    // `mysqlleader_elector_new`, `event` is valid until the callback returns. It runs on the
    // elector's own callback thread (see docs/c-api.md, "Callbacks").
    interface EventCallback extends Callback {
        void invoke(Pointer userdata, EventRow event);
    }

    /** {@code mysqlleader_elector_state}. */
    @Structure.FieldOrder({"is_leader", "term", "valid_for_ms", "campaigning", "last_call_result", "leader_id"})
    class StateRow extends Structure {
        // Whether this node leads now (its local deadline included, as `_is_leader`).
        public byte is_leader;
        // The term seen last: while leading, the fencing token.
        public long term;
        // Milliseconds this node may still act as leader without a renew; 0 when not leading.
        public long valid_for_ms;
        // Whether the elector still campaigns (false after `_resign`).
        public byte campaigning;
        // `MYSQLLEADER_OK` when the elector's last call to the database succeeded, else its
        // error class (`mysqlleader_elector_last_call_error` gives the message).
        public int last_call_result;
        // The leader seen last, NUL-terminated; "" when the seat was vacant.
        public byte[] leader_id = new byte[ID_BUFFER_SIZE];

        public StateRow() {
            super();
        }
    }

    /** {@code mysqlleader_log_callback}. */
    // Receives one log record: `level` 1 error, 2 warn, 3 info, 4 debug, 5 trace; `target` the
    // module (`mysqlleader::elector::task`); `message` the text with its fields (`key=value`).
    // Both strings are valid during the call only. Called on the library's threads, one record at
    // a time per thread; it must not call back into mysqlleader and should return promptly.
    interface LogCallback extends Callback {
        void invoke(Pointer userdata, int level, String target, String message);
    }

    // --- functions, in the header's order ----------------------------------------------------

    String mysqlleader_version();
    Pointer mysqlleader_last_error();
    int mysqlleader_last_error_copy(byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_last_error_code();
    Pointer mysqlleader_last_error_parameter();
    Pointer mysqlleader_last_error_sqlstate();
    long mysqlleader_last_error_current_term();
    int mysqlleader_last_error_server_code();
    byte mysqlleader_last_error_is_transient();
    int mysqlleader_error_classify(int serverCode, String sqlstate, String message);
    String mysqlleader_result_name(int result);
    void mysqlleader_string_free(Pointer s);
    int mysqlleader_default_node_id(byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_client_new(String url, PointerByReference clientOut);
    int mysqlleader_client_set_request_timeout(Pointer client, long timeoutMs);
    void mysqlleader_client_free(Pointer client);
    int mysqlleader_migrate(Pointer client, LongByReference appliedOut);
    int mysqlleader_install_sql(PointerByReference sqlOut);
    int mysqlleader_campaign(Pointer client, String serviceId, String nodeId, long leaseMs, CampaignRow resultOut);
    int mysqlleader_am_i_leader(Pointer client, String serviceId, String nodeId, CheckRow resultOut);
    int mysqlleader_current_leader(Pointer client, String serviceId, CurrentLeaderRow resultOut);
    int mysqlleader_force_leader(Pointer client, String serviceId, String nodeId, long leaseMs, CampaignRow resultOut);
    int mysqlleader_reelect(Pointer client, String serviceId, ReelectRow resultOut);
    int mysqlleader_resign(Pointer client, String serviceId, String nodeId, ResignRow resultOut);
    int mysqlleader_handover(Pointer client, String serviceId, String toNode, CampaignRow resultOut);
    int mysqlleader_assert_leader(Pointer client, String serviceId, String nodeId, long term, CheckRow resultOut);
    int mysqlleader_set_expiry_event(Pointer client, byte enabled, ByteByReference enabledOut);
    int mysqlleader_txn_begin(Pointer client, PointerByReference txnOut);
    int mysqlleader_txn_assert_leader(Pointer txn, String serviceId, String nodeId, long term, CheckRow checkOut);
    int mysqlleader_txn_execute(Pointer txn, String sql, String[] params, long paramCount, LongByReference affectedRowsOut);
    int mysqlleader_txn_query(Pointer txn, String sql, Pointer[] params, long[] paramLengths, long paramCount, PointerByReference rowsOut);
    int mysqlleader_txn_last_insert_id(Pointer txn, LongByReference lastInsertIdOut);
    int mysqlleader_txn_commit(Pointer txn);
    int mysqlleader_txn_rollback(Pointer txn);
    void mysqlleader_txn_free(Pointer txn);
    int mysqlleader_rows_column_count(Pointer rows, LongByReference countOut);
    int mysqlleader_rows_row_count(Pointer rows, LongByReference countOut);
    int mysqlleader_rows_column_name(Pointer rows, long column, PointerByReference nameOut);
    int mysqlleader_rows_column_kind(Pointer rows, long column, IntByReference kindOut);
    int mysqlleader_rows_value(Pointer rows, long row, long column, PointerByReference dataOut, LongByReference lenOut, ByteByReference isNullOut);
    int mysqlleader_rows_affected_rows(Pointer rows, LongByReference affectedRowsOut);
    int mysqlleader_rows_last_insert_id(Pointer rows, LongByReference lastInsertIdOut);
    void mysqlleader_rows_free(Pointer rows);
    int mysqlleader_elector_new(Pointer client, ElectorConfig config, EventCallback callback, Pointer userdata, PointerByReference electorOut);
    int mysqlleader_elector_is_leader(Pointer elector, ByteByReference isLeaderOut);
    int mysqlleader_elector_term(Pointer elector, LongByReference termOut);
    int mysqlleader_elector_valid_for_ms(Pointer elector, LongByReference validForMsOut);
    int mysqlleader_elector_leader_id(Pointer elector, byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_elector_node_id(Pointer elector, byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_elector_snapshot(Pointer elector, StateRow stateOut);
    int mysqlleader_elector_last_call_error(Pointer elector, byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_elector_metrics_text(Pointer elector, byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_elector_resign(Pointer elector, ByteByReference resignedOut);
    int mysqlleader_elector_handover(Pointer elector, String toNode, ByteByReference handedOverOut);
    int mysqlleader_elector_note_refusal(Pointer elector, long term);
    int mysqlleader_elector_note_refusal_code(Pointer elector, long term, int serverCode);
    int mysqlleader_elector_wait(Pointer elector, long timeoutMs, IntByReference outcomeOut);
    int mysqlleader_elector_wait_for_leadership(Pointer elector, long timeoutMs, ByteByReference leadingOut);
    int mysqlleader_elector_wait_term_end(Pointer elector, long term, long timeoutMs, ByteByReference endedOut, IntByReference reasonOut);
    int mysqlleader_elector_is_healthy(Pointer elector, ByteByReference healthyOut);
    int mysqlleader_elector_txn_begin(Pointer elector, PointerByReference txnOut, LongByReference termOut);
    void mysqlleader_elector_free(Pointer elector);
    String mysqlleader_stop_reason_name(int reason);
    int mysqlleader_session_new(Pointer client, ElectorConfig config, PointerByReference sessionOut);
    int mysqlleader_session_elector(Pointer session, String serviceId, EventCallback callback, Pointer userdata, PointerByReference electorOut);
    int mysqlleader_session_metrics_text(Pointer session, byte[] buf, long bufLen, LongByReference neededOut);
    int mysqlleader_session_metrics_text_detailed(Pointer session, byte[] buf, long bufLen, LongByReference neededOut);
    void mysqlleader_session_free(Pointer session);
    int mysqlleader_set_log_callback(Pointer userdata, LogCallback callback, int maxLevel);
}
