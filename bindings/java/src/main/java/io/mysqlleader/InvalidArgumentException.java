package io.mysqlleader;

/** A value was rejected: by this binding (a null, a duration that is not a whole number of milliseconds or is out of range), by the library (an empty or over-long id, a malformed URL, an inconsistent elector configuration) or by the procedures (SQLSTATE 45000). {@link #parameter()} names it; {@link #kind()} is {@code INVALID_ARGUMENT}, {@code NULL_ARGUMENT} (a null) or {@code INVALID_UTF8}. */
public class InvalidArgumentException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    InvalidArgumentException(ErrorKind kind, String message, String parameter, String sqlState, int serverCode, boolean retryable, Throwable cause) {
        super(kind, message, parameter, sqlState, serverCode, 0, retryable, cause);
    }
}
