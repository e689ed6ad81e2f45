package io.mysqlleader;

/** The account may not act on this service (SQLSTATE 45002, per-service access); nothing was changed. */
public class AccessDeniedException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    AccessDeniedException(String message, String sqlState, int serverCode, Throwable cause) {
        super(ErrorKind.ACCESS_DENIED, message, null, sqlState, serverCode, 0, false, cause);
    }
}
