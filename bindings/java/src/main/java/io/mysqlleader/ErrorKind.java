package io.mysqlleader;

/**
 * The kind of a {@link MysqlLeaderException}: the C library's result codes (stable numbers,
 * include/mysqlleader.h), plus {@link #LEADERSHIP_LOST} for {@link Elector#runWhileLeader}.
 */
public enum ErrorKind {
    /** A pointer argument that must not be NULL was: a null Java argument. */
    NULL_ARGUMENT(1),
    /** A value was rejected (SQLSTATE 45000 from the procedures, or the library's own check). */
    INVALID_ARGUMENT(2),
    /** A string is not valid UTF-8. */
    INVALID_UTF8(3),
    /** The node does not lead at the term (SQLSTATE 45001), or an elector asked to fence does not lead. */
    NOT_LEADER(4),
    /** The server could not be reached, the connection broke, or the request timed out. */
    CONNECTION(5),
    /** The schema is missing: {@link Client#migrate()} first. */
    NOT_MIGRATED(6),
    /** Any other error the server reported ({@link MysqlLeaderException#serverCode()}). */
    SERVER(7),
    /** A migration could not be applied. */
    MIGRATION(8),
    /** A result did not fit a buffer (a bug of this binding). */
    BUFFER_TOO_SMALL(9),
    /** A bug inside the library (a Rust panic caught at the boundary). */
    PANIC(10),
    /** The handle cannot do this now: it is closed, or the elector's task has stopped. */
    INVALID_STATE(11),
    /** A mistake no retry mends: e.g. a fence outside a transaction. */
    USAGE(12),
    /** The account may not act on this service (SQLSTATE 45002). */
    ACCESS_DENIED(13),
    /** The server refused the login (error 1045): user name, password, or TLS the account requires. Never transient. */
    AUTHENTICATION(14),
    /** The server denied the account something it needs (1044, 1049, 1142, 1227, 1370: a grant is missing). Never transient. */
    PRIVILEGE(15),
    /** {@link Elector#runWhileLeader}: leadership ended before the work did (no C code). */
    LEADERSHIP_LOST(-1);

    /** The C result code ({@code mysqlleader_result}); -1 for a kind of this binding alone. */
    public final int code;

    ErrorKind(int code) {
        this.code = code;
    }

    static ErrorKind of(int code) {
        for (ErrorKind k : values()) {
            if (k.code == code) return k;
        }
        return SERVER;
    }
}
