package io.mysqlleader;

import java.time.Duration;

/**
 * The row of {@code am_i_leader} and {@code assert_leader}.
 *
 * @param isLeader whether the node holds a valid lease
 * @param term the current term, or the last there was when nobody leads
 * @param leaseRemaining time left on the current leader's lease; zero when nobody leads
 */
public record LeaderCheck(boolean isLeader, long term, Duration leaseRemaining) {}
