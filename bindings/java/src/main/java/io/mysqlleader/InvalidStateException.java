package io.mysqlleader;

/** The handle cannot do this now: it is closed (or being closed), or the elector no longer campaigns or its background task has stopped. */
public class InvalidStateException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    InvalidStateException(String message) {
        super(ErrorKind.INVALID_STATE, message, null);
    }
}
