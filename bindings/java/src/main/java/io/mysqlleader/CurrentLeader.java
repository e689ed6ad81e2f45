package io.mysqlleader;

import java.time.Duration;

/**
 * The row of {@code current_leader}.
 *
 * @param leaderId the node holding a valid lease; null when the seat is vacant or the lease expired
 * @param term the current term, or the last there was
 * @param leaseRemaining time left on the lease; zero when nobody leads
 */
public record CurrentLeader(String leaderId, long term, Duration leaseRemaining) {}
