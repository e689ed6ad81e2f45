package io.mysqlleader;

import java.util.OptionalLong;

/**
 * Every error of mysqlleader: unchecked, one subclass per kind, with the error contract as
 * fields (never to be parsed out of the message): {@link #kind()}, {@link #parameter()},
 * {@link #sqlState()}, {@link #serverCode()}, {@link #currentTerm()}, {@link #isRetryable()}.
 * The values come from the C library's {@code mysqlleader_last_error_*} of the failed call.
 */
public class MysqlLeaderException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorKind kind;
    private final String parameter;
    private final String sqlState;
    private final int serverCode;
    private final long currentTerm; // 0: unknown (terms start at 1)
    private final boolean retryable;

    MysqlLeaderException(ErrorKind kind, String message, String parameter, String sqlState, int serverCode,
                         long currentTerm, boolean retryable, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.parameter = parameter;
        this.sqlState = sqlState == null || sqlState.isEmpty() ? null : sqlState;
        this.serverCode = serverCode;
        this.currentTerm = currentTerm;
        this.retryable = retryable;
    }

    /** An error found by this binding alone, before any call into the library. */
    MysqlLeaderException(ErrorKind kind, String message, String parameter) {
        this(kind, message, parameter, null, 0, 0, false, null);
    }

    /** What went wrong, as a value to switch on. */
    public ErrorKind kind() { return kind; }

    /** The rejected parameter as the binding or C names it ({@code "service_id"}, {@code "lease"}, {@code "url"}), or null. */
    public String parameter() { return parameter; }

    /** The SQLSTATE the server reported ({@code "45000"} rejected input, {@code "45001"} not the leader, {@code "45002"} access denied, ...), or null. */
    public String sqlState() { return sqlState; }

    /** The server's error number (e.g. 1213 for a deadlock), or 0 when the server reported none. */
    public int serverCode() { return serverCode; }

    /** For {@link NotLeaderException}: the service's term as the refusal told it; empty when unknown. */
    public OptionalLong currentTerm() { return currentTerm == 0 ? OptionalLong.empty() : OptionalLong.of(currentTerm); }

    /** Whether simply trying again may succeed (lost connection, timeout, deadlock); the failed attempt's outcome is unknown. */
    public boolean isRetryable() { return retryable; }

    /** The exception for the failure the C library reports for the call that just failed on this thread. */
    static MysqlLeaderException last(int rc) {
        return last(rc, null);
    }

    /**
     * The exception the library gives a server's error that reached the application's own JDBC
     * driver (the fence): the C core classifies it, by the rule it applies to its own calls
     * ({@code mysqlleader_error_classify}). {@code message} from its {@code mysqlleader: } on
     * (Connector/J puts {@code (conn=N) } before it).
     */
    static MysqlLeaderException classified(java.sql.SQLException e) {
        String text = e.getMessage() == null ? "" : e.getMessage();
        int at = text.indexOf("mysqlleader: ");
        int rc = Lib.C.mysqlleader_error_classify(e.getErrorCode(), e.getSQLState(), at >= 0 ? text.substring(at) : text);
        return last(rc, e);
    }

    /** {@link #last(int)}, with {@code cause} as the exception's cause. */
    static MysqlLeaderException last(int rc, Throwable cause) {
        Lib c = Lib.C;
        byte[] buf = new byte[1024];
        com.sun.jna.ptr.LongByReference needed = new com.sun.jna.ptr.LongByReference();
        if (c.mysqlleader_last_error_copy(buf, buf.length, needed) != 0 && needed.getValue() > buf.length) {
            buf = new byte[(int) needed.getValue()];
            c.mysqlleader_last_error_copy(buf, buf.length, needed);
        }
        String message = Lib.string(buf);
        String parameter = javaName(Lib.string(c.mysqlleader_last_error_parameter()));
        String sqlState = Lib.string(c.mysqlleader_last_error_sqlstate());
        long term = c.mysqlleader_last_error_current_term();
        int server = c.mysqlleader_last_error_server_code();
        boolean transient_ = c.mysqlleader_last_error_is_transient() != 0;
        return of(ErrorKind.of(rc), message, parameter, sqlState, server, term, transient_, cause);
    }

    /**
     * The C ABI's names of the configuration's fields ({@code config->lease_ms}) as a Java user
     * wrote them: the builder's method ({@code lease}). One table; other names ({@code service_id},
     * {@code url}, ...) are the same in Java.
     */
    private static final java.util.Map<String, String> JAVA_NAMES = java.util.Map.of(
            "config->service_id", "serviceId",
            "config->node_id", "nodeId",
            "config->lease_ms", "lease",
            "config->renew_ms", "renewInterval",
            "config->retry_ms", "retryInterval",
            "config->retry_jitter", "retryJitter",
            "config->request_timeout_ms", "requestTimeout",
            "config->drift_margin_ms", "driftMargin",
            "config->fallback_clients", "fallbackClients");

    /** {@code parameter} as the Java API names it (null stays null). */
    static String javaName(String parameter) {
        return parameter == null ? null : JAVA_NAMES.getOrDefault(parameter, parameter);
    }

    /** The subclass for {@code kind}. */
    static MysqlLeaderException of(ErrorKind kind, String message, String parameter, String sqlState, int serverCode,
                                   long currentTerm, boolean retryable, Throwable cause) {
        return switch (kind) {
            case NULL_ARGUMENT, INVALID_ARGUMENT, INVALID_UTF8 ->
                    new InvalidArgumentException(kind, message, parameter, sqlState, serverCode, retryable, cause);
            case NOT_LEADER -> new NotLeaderException(message, sqlState, serverCode, currentTerm, cause);
            case CONNECTION -> new ConnectionException(message, sqlState, serverCode, retryable, cause);
            case NOT_MIGRATED -> new NotMigratedException(message, sqlState, serverCode, cause);
            case SERVER -> new ServerException(message, sqlState, serverCode, retryable, cause);
            case MIGRATION -> new MigrationException(message, sqlState, serverCode, retryable, cause);
            case INVALID_STATE -> new InvalidStateException(message);
            case USAGE -> new UsageException(message, sqlState, serverCode, cause);
            case ACCESS_DENIED -> new AccessDeniedException(message, sqlState, serverCode, cause);
            case AUTHENTICATION -> new AuthenticationException(message, sqlState, serverCode, cause);
            case PRIVILEGE -> new PrivilegeException(message, sqlState, serverCode, cause);
            case BUFFER_TOO_SMALL, PANIC -> new InternalException(kind, message);
            case LEADERSHIP_LOST -> new MysqlLeaderException(kind, message, null, sqlState, serverCode, currentTerm, false, cause);
        };
    }
}
