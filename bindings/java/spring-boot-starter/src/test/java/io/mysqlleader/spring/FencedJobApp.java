package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The Spring Boot application of {@link ThreeInstancesTest}, run in child JVMs: configured only by
 * {@code spring.datasource.*} and {@code mysqlleader.*} (command-line arguments), a
 * {@code @LeaderOnly @Scheduled} job that does one fenced unit of work through the application's
 * DataSource (Boot's HikariCP pool) with {@code elector.runFenced}: a row in {@code job_runs}
 * (node, term, the highest term committed before it, its start and end on the database's clock,
 * UTC), 200 ms apart inside the transaction. A call that fails is a row in {@code job_failures}.
 * Prints {@code READY node} once the context has started.
 *
 * <p>The tables are the test's ({@link ThreeInstancesTest#TABLES}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
public class FencedJobApp {
    /** The job; a public method for the proxy of {@code @LeaderOnly} and the scheduler. */
    public static class Job {
        private final Elector elector;
        private final DataSource dataSource;

        public Job(Elector elector, DataSource dataSource) {
            this.elector = elector;
            this.dataSource = dataSource;
        }

        @LeaderOnly
        @Scheduled(fixedDelay = 50)
        public void run() {
            try (Connection conn = dataSource.getConnection()) {
                elector.runFenced(conn, (c, term) -> {
                    String startedAt;
                    long maxTermBefore;
                    try (Statement st = c.createStatement();
                         ResultSet rs = st.executeQuery("SELECT CAST(UTC_TIMESTAMP(6) AS CHAR), COALESCE(MAX(term), 0) FROM job_runs")) {
                        rs.next();
                        startedAt = rs.getString(1);
                        maxTermBefore = rs.getLong(2);
                    }
                    try (Statement st = c.createStatement()) {
                        st.execute("DO SLEEP(0.2)"); // the work takes a while
                    }
                    try (PreparedStatement st = c.prepareStatement(
                            "INSERT INTO job_runs (node, term, max_term_before, started_at, ended_at) VALUES (?, ?, ?, ?, UTC_TIMESTAMP(6))")) {
                        st.setString(1, elector.nodeId());
                        st.setLong(2, term);
                        st.setLong(3, maxTermBefore);
                        st.setString(4, startedAt);
                        st.executeUpdate();
                    }
                    return null;
                });
            } catch (SQLException | RuntimeException e) {
                recordFailure(e);
            }
        }

        /** A failed call as a row of its own (autocommit), for the test to judge; and on standard error. */
        private void recordFailure(Exception e) {
            String error = e.getClass().getSimpleName() + ": " + e.getMessage();
            System.err.println("FencedJobApp " + elector.nodeId() + ": the job failed: " + error);
            try (Connection conn = dataSource.getConnection();
                 PreparedStatement st = conn.prepareStatement("INSERT INTO job_failures (node, failed_at, error) VALUES (?, UTC_TIMESTAMP(6), ?)")) {
                st.setString(1, elector.nodeId());
                st.setString(2, error.length() > 1000 ? error.substring(0, 1000) : error);
                st.executeUpdate();
            } catch (SQLException | RuntimeException again) {
                System.err.println("FencedJobApp " + elector.nodeId() + ": recording the failure failed too: " + again);
            }
        }

        @EventListener
        public void ready(ApplicationReadyEvent e) {
            System.out.println("READY " + elector.nodeId());
            System.out.flush();
        }
    }

    @Bean
    Job job(Elector elector, DataSource dataSource) {
        return new Job(elector, dataSource);
    }

    /** Arguments: {@code --spring.datasource.url=... --mysqlleader.service=...} and so on. */
    public static void main(String[] args) {
        new SpringApplicationBuilder(FencedJobApp.class)
                .web(WebApplicationType.NONE)
                .properties("spring.main.banner-mode=off", "spring.jmx.enabled=false", "logging.level.root=warn")
                .run(args);
    }
}
