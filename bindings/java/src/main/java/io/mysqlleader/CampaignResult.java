package io.mysqlleader;

import java.time.Duration;

/**
 * The row of {@code campaign} and {@code force_leader}.
 *
 * @param isLeader whether the caller holds the seat after the call
 * @param leaderId the node holding a valid lease (the caller when {@code isLeader}); null when nobody does
 * @param term the fencing token of the service
 * @param leaseRemaining time left on the current leader's lease by the database's clock; zero when nobody leads
 */
public record CampaignResult(boolean isLeader, String leaderId, long term, Duration leaseRemaining) {}
