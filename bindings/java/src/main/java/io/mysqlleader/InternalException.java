package io.mysqlleader;

/** A bug inside the library or this binding ({@code PANIC}, {@code BUFFER_TOO_SMALL}): the handle involved may be inconsistent; close it. */
public class InternalException extends MysqlLeaderException {
    private static final long serialVersionUID = 1L;

    InternalException(ErrorKind kind, String message) {
        super(kind, message, null);
    }
}
