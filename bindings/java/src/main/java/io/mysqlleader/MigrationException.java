package io.mysqlleader;

/** A migration could not be applied. */
public class MigrationException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    MigrationException(String message, String sqlState, int serverCode, boolean retryable, Throwable cause) {
        super(ErrorKind.MIGRATION, message, null, sqlState, serverCode, 0, retryable, cause);
    }
}
