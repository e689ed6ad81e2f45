package io.mysqlleader;

/**
 * The server refused the login (error 1045, {@link #serverCode()}): a wrong user name or
 * password, or the server or the account requires TLS or a client certificate. No retry mends
 * it; an elector reports it from {@link Elector#awaitLeadership}.
 */
public class AuthenticationException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    AuthenticationException(String message, String sqlState, int serverCode, Throwable cause) {
        super(ErrorKind.AUTHENTICATION, message, null, sqlState, serverCode, 0, false, cause);
    }
}
