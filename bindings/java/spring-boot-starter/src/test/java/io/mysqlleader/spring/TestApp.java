package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** The application of the tests: the starter, a @LeaderOnly @Scheduled job and an event log. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
class TestApp {
    /** The job: runs every 50 ms, on the leader only. */
    static class Job {
        private final AtomicInteger runs = new AtomicInteger();

        /** How often tick ran (a method: the bean is a proxy, whose fields are not the target's). */
        public int runs() {
            return runs.get();
        }

        @LeaderOnly
        @Scheduled(fixedDelay = 50)
        public void tick() {
            runs.incrementAndGet();
        }

        /**
         * A fenced write on the leader only: CALL assert_leader at the current term inside the
         * transaction, then a row with that term. Returns the term written, or null when skipped.
         */
        @LeaderOnly
        public Long fencedWrite(Elector elector, java.sql.Connection conn) throws java.sql.SQLException {
            conn.setAutoCommit(false);
            long term = elector.fence(conn);
            try (java.sql.PreparedStatement st = conn.prepareStatement("INSERT INTO spring_writes (node, term) VALUES (?, ?)")) {
                st.setString(1, elector.nodeId());
                st.setLong(2, term);
                st.executeUpdate();
            }
            conn.commit();
            return term;
        }

        /** Not scheduled: a @LeaderOnly method with a result (null or zero when skipped). */
        @LeaderOnly
        public int answer() {
            return 42;
        }
    }

    /** Every MysqlLeaderEvent this context published, in order. */
    static class EventLog {
        final List<MysqlLeaderEvent> events = new CopyOnWriteArrayList<>();

        @EventListener
        public void on(MysqlLeaderEvent e) {
            events.add(e);
        }
    }

    @Bean
    Job job() {
        return new Job();
    }

    @Bean
    EventLog eventLog() {
        return new EventLog();
    }

    /** Boot's DataSource auto-configuration: Boot 3's class, Boot 4's (an exclusion that is not on the class path is ignored). */
    static final String[] DATASOURCE_AUTO_CONFIGURATIONS = {
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    };

    /** A context of this application with {@code properties} ("key=value"). */
    static ConfigurableApplicationContext run(String... properties) {
        return new SpringApplicationBuilder(TestApp.class)
                .web(WebApplicationType.NONE)
                .properties("spring.main.banner-mode=off", "spring.jmx.enabled=false",
                        "management.endpoint.health.show-details=always", "logging.level.root=warn",
                        "logging.level.io.mysqlleader.spring.LeaderOnly=debug",
                        // no DataSource (spring-boot-starter-jdbc is on the class path for FencedJobApp):
                        // these contexts have no spring.datasource.url, or one only to derive the URL from
                        "spring.autoconfigure.exclude=" + String.join(",", DATASOURCE_AUTO_CONFIGURATIONS))
                .properties(properties)
                .run();
    }
}
