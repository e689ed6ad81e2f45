package io.mysqlleader;

/** The server could not be reached, the connection broke, or the request timed out. The outcome of a write that failed this way is unknown; the call may be tried again. */
public class ConnectionException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    ConnectionException(String message, String sqlState, int serverCode, boolean retryable, Throwable cause) {
        super(ErrorKind.CONNECTION, message, null, sqlState, serverCode, 0, retryable, cause);
    }
}
