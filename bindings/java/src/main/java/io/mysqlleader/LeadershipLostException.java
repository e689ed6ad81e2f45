package io.mysqlleader;

/**
 * {@link Elector#runWhileLeader}: leadership of {@link #term()} ended before the work returned,
 * for {@link #reason()} as the library tells it. The work's thread was interrupted at that
 * moment; its result, if any, is dropped.
 */
public class LeadershipLostException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    private final long term;
    private final StopReason reason;

    LeadershipLostException(long term, StopReason reason, Throwable cause) {
        super(ErrorKind.LEADERSHIP_LOST, "mysqlleader: leadership of term " + term + " ended ("
                + reason.label + ") before the work did", null, null, 0, 0, false, cause);
        this.term = term;
        this.reason = reason;
    }

    /** The term that ended. */
    public long term() { return term; }

    /** Why it ended. */
    public StopReason reason() { return reason; }
}
