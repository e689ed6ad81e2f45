package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import io.mysqlleader.MysqlLeaderException;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The health indicator {@code mysqlleader} (Spring Boot Actuator): UP while the elector works
 * (its last call succeeded within one lease, {@link Elector#isHealthy()}), whether it leads or
 * follows; DOWN when it fails (a refused login, a missing grant, the server unreachable, ...)
 * or no longer campaigns; UNKNOWN before its first call has answered. Details: {@code service},
 * {@code node}, {@code leading}, {@code leader} (the leader seen last, absent for a vacant seat),
 * {@code term}, and {@code error} (the last call's error) when not UP. Never a round trip: the
 * library answers from its state.
 */
public class MysqlLeaderHealthIndicator extends AbstractHealthIndicator {
    private final Elector elector;

    public MysqlLeaderHealthIndicator(Elector elector) {
        super("mysqlleader health check failed");
        this.elector = elector;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("service", elector.serviceId()).withDetail("node", elector.nodeId());
        if (elector.isClosed()) {
            builder.down().withDetail("error", "the elector is closed");
            return;
        }
        try {
            boolean healthy = elector.isHealthy();
            boolean leading = elector.isLeader();
            String leader = elector.leaderId();
            builder.withDetail("leading", leading);
            if (leader != null) builder.withDetail("leader", leader);
            builder.withDetail("term", elector.term());
            String error = elector.lastCallError();
            if (healthy) {
                builder.up();
            } else if (error != null || !elector.isCampaigning()) {
                builder.down().withDetail("error", error != null ? error : "the elector no longer campaigns");
            } else {
                builder.unknown();
            }
        } catch (MysqlLeaderException closed) {
            builder.down().withDetail("error", closed.getMessage());
        }
    }
}
