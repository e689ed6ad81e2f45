package io.mysqlleader;

/**
 * The server denied the account something it needs, a grant is missing ({@link #serverCode()}:
 * 1044 the database, 1049 a database unknown to it, 1142 a table, 1227 a privilege the
 * statement needs, 1370 EXECUTE on a routine).
 * No retry mends it; an elector reports it from {@link Elector#awaitLeadership}.
 */
public class PrivilegeException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    PrivilegeException(String message, String sqlState, int serverCode, Throwable cause) {
        super(ErrorKind.PRIVILEGE, message, null, sqlState, serverCode, 0, false, cause);
    }
}
