package io.mysqlleader;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The work of {@link Elector#runFenced(Connection, FencedWork)}: the leader's statements, run on
 * {@code conn} inside the fenced transaction (autocommit off, {@code assert_leader} already run at
 * {@code term}). It must neither commit nor roll back the transaction itself, nor change
 * autocommit: {@code runFenced} does that.
 *
 * @param <T> what the work returns ({@link Void} and {@code null} for none)
 */
@FunctionalInterface
public interface FencedWork<T> {
    /**
     * Runs the leader's statements on {@code conn}; {@code term} is the term the transaction is
     * fenced at (the fencing token: write it next to the data when a reader should know it).
     * Any exception rolls the whole transaction back and is rethrown by {@code runFenced}.
     */
    T run(Connection conn, long term) throws SQLException;
}
