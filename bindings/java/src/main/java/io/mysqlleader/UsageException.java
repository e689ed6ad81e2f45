package io.mysqlleader;

/** A mistake no retry mends, such as a fence on a connection with autocommit on (it would fence nothing). */
public class UsageException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    UsageException(String message, String sqlState, int serverCode, Throwable cause) {
        super(ErrorKind.USAGE, message, null, sqlState, serverCode, 0, false, cause);
    }
}
