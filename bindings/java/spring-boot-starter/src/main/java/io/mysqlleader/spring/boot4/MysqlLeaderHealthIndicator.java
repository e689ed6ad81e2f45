package io.mysqlleader.spring.boot4;

import io.mysqlleader.Elector;
import io.mysqlleader.spring.MysqlLeaderHealth;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The health indicator {@code mysqlleader} for Spring Boot 4's Actuator (its
 * {@code spring-boot-health} module): see {@link MysqlLeaderHealth}.
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
