package io.mysqlleader.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.mysqlleader.Client;
import io.mysqlleader.Elector;
import io.mysqlleader.JdbcUrls;
import io.mysqlleader.micrometer.MysqlLeaderMetrics;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The auto-configuration of mysqlleader (on when {@code mysqlleader.enabled} is not false):
 * a {@link Client} from {@code mysqlleader.url} (else {@code spring.datasource.*}), an
 * {@link Elector} for {@code mysqlleader.service} tied to the context's lifecycle
 * ({@link MysqlLeaderLifecycle}: events as {@link MysqlLeaderEvent}s, resigned on close),
 * {@link LeaderOnly} methods, and, when present, the health indicator {@code mysqlleader}
 * (Actuator) and {@link MysqlLeaderMetrics} (Micrometer). Each bean backs off when the
 * application defines its own.
 */
@AutoConfiguration
@ConditionalOnClass(Elector.class)
@ConditionalOnProperty(prefix = "mysqlleader", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(MysqlLeaderProperties.class)
public class MysqlLeaderAutoConfiguration {

    /** The URL the client connects to: {@code mysqlleader.url}, else derived from {@code spring.datasource.*}. */
    public static String resolveUrl(MysqlLeaderProperties properties, Environment env) {
        String url = properties.getUrl();
        if (url != null && !url.isBlank()) return url;
        String jdbc = env.getProperty("spring.datasource.url");
        if (jdbc == null || jdbc.isBlank()) {
            throw new IllegalStateException("mysqlleader: set mysqlleader.url (mysql://user:password@host:port/database), "
                    + "or spring.datasource.url to a jdbc:mysql: or jdbc:mariadb: URL");
        }
        try {
            return JdbcUrls.toMysqlLeaderUrl(jdbc, env.getProperty("spring.datasource.username"), env.getProperty("spring.datasource.password"));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("mysqlleader: cannot derive mysqlleader.url from spring.datasource.url: " + e.getMessage(), e);
        }
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Client mysqlLeaderClient(MysqlLeaderProperties properties, Environment env) {
        return Client.connect(resolveUrl(properties, env));
    }

    @Bean
    @ConditionalOnMissingBean
    public MysqlLeaderLifecycle mysqlLeaderLifecycle(ApplicationEventPublisher publisher,
                                                     ObjectProvider<LeaderOnlyBeanPostProcessor> leaderOnly) {
        LeaderOnlyBeanPostProcessor processor = leaderOnly.getIfAvailable();
        return new MysqlLeaderLifecycle(publisher, processor == null ? null : processor.calls());
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Elector mysqlLeaderElector(Client client, MysqlLeaderProperties properties, MysqlLeaderLifecycle lifecycle) {
        String service = properties.getService();
        if (service == null || service.isBlank()) {
            throw new IllegalStateException("mysqlleader: set mysqlleader.service, the service this node campaigns for");
        }
        Elector.Builder b = Elector.builder(client, service).listener(lifecycle);
        if (properties.getNodeId() != null && !properties.getNodeId().isBlank()) b.nodeId(properties.getNodeId());
        if (properties.getLease() != null) b.lease(properties.getLease());
        if (properties.getRenewInterval() != null) b.renewInterval(properties.getRenewInterval());
        if (properties.getRetryInterval() != null) b.retryInterval(properties.getRetryInterval());
        if (properties.getRequestTimeout() != null) b.requestTimeout(properties.getRequestTimeout());
        Elector elector = b.build();
        lifecycle.setElector(elector);
        return elector;
    }

    @Bean
    @ConditionalOnMissingBean
    public static LeaderOnlyBeanPostProcessor mysqlLeaderOnlyBeanPostProcessor() {
        return new LeaderOnlyBeanPostProcessor();
    }

    /** The health indicator {@code mysqlleader}, with Spring Boot 3's Actuator. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.health.AbstractHealthIndicator")
    @ConditionalOnProperty(prefix = "management.health.mysqlleader", name = "enabled", havingValue = "true", matchIfMissing = true)
    static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "mysqlleaderHealthIndicator")
        MysqlLeaderHealthIndicator mysqlleaderHealthIndicator(Elector elector) {
            return new MysqlLeaderHealthIndicator(elector);
        }
    }

    /** The health indicator {@code mysqlleader}, with Spring Boot 4's Actuator (the {@code spring-boot-health} module). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.AbstractHealthIndicator")
    @ConditionalOnMissingClass("org.springframework.boot.actuate.health.AbstractHealthIndicator")
    @ConditionalOnProperty(prefix = "management.health.mysqlleader", name = "enabled", havingValue = "true", matchIfMissing = true)
    static class Boot4HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "mysqlleaderHealthIndicator")
        io.mysqlleader.spring.boot4.MysqlLeaderHealthIndicator mysqlleaderHealthIndicator(Elector elector) {
            return new io.mysqlleader.spring.boot4.MysqlLeaderHealthIndicator(elector);
        }
    }

    /** The meters of {@link MysqlLeaderMetrics}, with Micrometer (Boot binds every MeterBinder bean to its registries). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class MetricsConfiguration {
        @Bean
        @ConditionalOnMissingBean
        MysqlLeaderMetrics mysqlLeaderMetrics(Elector elector) {
            return new MysqlLeaderMetrics(elector);
        }
    }
}
