package io.mysqlleader;

/** The node does not lead at the term (SQLSTATE 45001 from {@code assert_leader}; the server has rolled the transaction back), or an elector asked to fence does not lead now. {@link #currentTerm()} is the service's term when the refusal told it. */
public class NotLeaderException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    NotLeaderException(String message, String sqlState, int serverCode, long currentTerm, Throwable cause) {
        super(ErrorKind.NOT_LEADER, message, null, sqlState, serverCode, currentTerm, false, cause);
    }
}
