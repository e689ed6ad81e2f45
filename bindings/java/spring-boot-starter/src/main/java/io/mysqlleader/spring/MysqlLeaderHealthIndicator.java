package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The health indicator {@code mysqlleader} for Spring Boot 3's Actuator (Boot 4:
 * {@link io.mysqlleader.spring.boot4.MysqlLeaderHealthIndicator}): see {@link MysqlLeaderHealth}.
 */
public class MysqlLeaderHealthIndicator extends AbstractHealthIndicator {
    private final Elector elector;

    public MysqlLeaderHealthIndicator(Elector elector) {
        super("mysqlleader health check failed");
        this.elector = elector;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        MysqlLeaderHealth h = MysqlLeaderHealth.of(elector);
        builder.status(h.status()).withDetails(h.details());
    }
}
