package io.mysqlleader;

/** Any other error the server reported: {@link #serverCode()} is its number, {@link #isRetryable()} whether a retry may succeed (a deadlock, a lock wait). */
public class ServerException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    ServerException(String message, String sqlState, int serverCode, boolean retryable, Throwable cause) {
        super(ErrorKind.SERVER, message, null, sqlState, serverCode, 0, retryable, cause);
    }
}
