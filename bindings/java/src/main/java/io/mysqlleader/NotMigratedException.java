package io.mysqlleader;

/** The election procedures or tables are missing from the database: call {@link Client#migrate()} (or run {@code mysqlleader migrate}) first. */
public class NotMigratedException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    NotMigratedException(String message, String sqlState, int serverCode, Throwable cause) {
        super(ErrorKind.NOT_MIGRATED, message, null, sqlState, serverCode, 0, false, cause);
    }
}
