package io.mysqlleader.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.mysqlleader.Client;
import io.mysqlleader.Elector;
import io.mysqlleader.StopReason;
import io.mysqlleader.micrometer.MysqlLeaderMetrics;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The starter in real application contexts against the server of MYSQLLEADER_TEST_URL: two
 * contexts of one service with different node ids stand for two nodes of a cluster.
 */
@ExtendWith(OutputCaptureExtension.class)
class MysqlLeaderStarterTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    /** 5 s: renews every second, a request timeout of 1 s (slack for a loaded test machine). */
    static final String LEASE = "5s";
    static TestDb db;

    @BeforeAll
    static void createDatabase() throws Exception {
        db = new TestDb("starter");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        if (db != null) db.close();
    }

    static String service(String tag) {
        return tag + "-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
    }

    static ConfigurableApplicationContext node(String service, String node, String... more) {
        String[] props = new String[3 + more.length];
        props[0] = "mysqlleader.url=" + db.url;
        props[1] = "mysqlleader.service=" + service;
        props[2] = "mysqlleader.node-id=" + node;
        System.arraycopy(more, 0, props, 3, more.length);
        return TestApp.run(props);
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting: " + what);
            Thread.sleep(20);
        }
    }

    /** A health as Actuator reports it: its status code and details (Boot 3 and Boot 4 alike). */
    record H(String status, Map<String, Object> details) {}

    /** The health of the indicator bean {@code mysqlleaderHealthIndicator} (Boot 3's or Boot 4's API, by reflection). */
    static H health(ConfigurableApplicationContext ctx) {
        return describe(call(ctx.getBean("mysqlleaderHealthIndicator"), "health"));
    }

    /** The health of the contributor named {@code mysqlleader} in Actuator's health endpoint. */
    static H healthViaEndpoint(ConfigurableApplicationContext ctx) throws Exception {
        Class<?> endpointClass;
        try {
            endpointClass = Class.forName("org.springframework.boot.actuate.health.HealthEndpoint");     // Boot 3
        } catch (ClassNotFoundException boot4) {
            endpointClass = Class.forName("org.springframework.boot.health.actuate.endpoint.HealthEndpoint");
        }
        Object endpoint = ctx.getBean(endpointClass);
        Method m = endpointClass.getMethod("healthForPath", String[].class);
        Object h = m.invoke(endpoint, (Object) new String[] {"mysqlleader"});
        assertNotNull(h, "no health contributor named mysqlleader");
        return describe(h);
    }

    @SuppressWarnings("unchecked")
    static H describe(Object health) {
        String status = (String) call(call(health, "getStatus"), "getCode");
        Map<String, Object> details;
        try {
            details = (Map<String, Object>) call(health, "getDetails");
        } catch (RuntimeException none) {
            details = Map.of();
        }
        return new H(status, details == null ? Map.of() : details);
    }

    static Object call(Object target, String method) {
        try {
            Method m = target.getClass().getMethod(method);
            m.setAccessible(true);
            return m.invoke(target);
        } catch (ReflectiveOperationException e) {
            throw new RuntimeException(target.getClass() + "." + method, e);
        }
    }

    @Test
    void propertiesBindAndTheUrlIsDerivedFromSpringDatasource() throws Exception {
        // An account of its own whose name and password need percent-encoding in a URL.
        String user = "mlspr_" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20)) + "@x";
        String password = "p@ss:w/rd %?#&+é";
        TestDb.exec("CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + password + "'",
                "GRANT ALL PRIVILEGES ON `" + db.name + "`.* TO '" + user + "'@'%'");
        String service = service("derived");
        try (ConfigurableApplicationContext ctx = TestApp.run(
                "spring.datasource.url=" + db.jdbcUrl("connectTimeout=5000"),
                "spring.datasource.username=" + user,
                "spring.datasource.password=" + password,
                "mysqlleader.service=" + service,
                "mysqlleader.node-id=derived-1",
                "mysqlleader.lease=" + LEASE)) {
            MysqlLeaderProperties props = ctx.getBean(MysqlLeaderProperties.class);
            assertEquals(service, props.getService());
            assertEquals("derived-1", props.getNodeId());
            assertEquals(Duration.ofSeconds(5), props.getLease());
            assertNull(props.getUrl());
            String derived = MysqlLeaderAutoConfiguration.resolveUrl(props, ctx.getEnvironment());
            assertEquals("mysql://" + io.mysqlleader.JdbcUrls.encode(user) + ":" + io.mysqlleader.JdbcUrls.encode(password) + "@" + db.host + ":" + db.port + "/" + db.name, derived);
            assertNotNull(ctx.getBean(Client.class));
            Elector elector = ctx.getBean(Elector.class);
            assertEquals(service, elector.serviceId());
            assertEquals("derived-1", elector.nodeId());
            assertTrue(elector.awaitLeadership(WAIT), "the elector over the derived URL did not lead: " + elector.lastCallError());
            // the lease of the property: this node may act for at most 5 s without a renew
            assertTrue(elector.validFor().compareTo(Duration.ofSeconds(5)) <= 0, elector.validFor().toString());
            assertTrue(elector.validFor().compareTo(Duration.ofSeconds(2)) > 0, elector.validFor().toString());
        } finally {
            TestDb.exec("DROP USER '" + user + "'@'%'");
        }
        // Without mysqlleader.node-id: the library's host name and pid.
        try (ConfigurableApplicationContext ctx = TestApp.run("mysqlleader.url=" + db.url, "mysqlleader.service=" + service("default-node"))) {
            String node = ctx.getBean(Elector.class).nodeId();
            assertTrue(node.endsWith(":" + ProcessHandle.current().pid()), node);
            assertTrue(node.length() > (":" + ProcessHandle.current().pid()).length(), node);
        }
    }

    @Test
    void theContextStartsAnElectorThatLeads() throws Exception {
        String service = service("leads");
        try (ConfigurableApplicationContext ctx = node(service, "solo", "mysqlleader.lease=" + LEASE)) {
            Elector elector = ctx.getBean(Elector.class);
            assertTrue(ctx.getBean(MysqlLeaderLifecycle.class).isRunning());
            assertTrue(elector.awaitLeadership(WAIT), "no leadership: " + elector.lastCallError());
            assertTrue(elector.isLeader());
            assertEquals("solo", elector.leaderId());
            try (Client c = Client.connect(db.url)) {
                assertEquals("solo", c.currentLeader(service).leaderId());
            }
        }
    }

    /**
     * The core jar forwards only WARNING and above while nothing is configured for the logger
     * {@code mysqlleader} in java.util.logging (README, "Java", Logging): Spring Boot's Logback
     * set-up sets no level there by itself, and passes {@code logging.level.mysqlleader} on to it.
     */
    @Test
    void loggingLevelMysqlleaderReachesJavaUtilLogging() throws Exception {
        java.util.logging.Logger jul = java.util.logging.Logger.getLogger("mysqlleader");
        try (ConfigurableApplicationContext ctx = node(service("log"), "log-1")) {
            assertNull(jul.getLevel(), "Spring Boot set a level on the JUL logger mysqlleader by itself");
        }
        try (ConfigurableApplicationContext ctx = node(service("log"), "log-1", "logging.level.mysqlleader=info")) {
            assertEquals(java.util.logging.Level.INFO, jul.getLevel(), "logging.level.mysqlleader did not reach java.util.logging");
        }
    }

    @Test
    void leaderOnlyScheduledMethodRunsOnTheLeaderOnly(CapturedOutput output) throws Exception {
        String service = service("job");
        try (ConfigurableApplicationContext a = node(service, "job-a", "mysqlleader.lease=" + LEASE)) {
            assertTrue(a.getBean(Elector.class).awaitLeadership(WAIT));
            try (ConfigurableApplicationContext b = node(service, "job-b", "mysqlleader.lease=" + LEASE)) {
                TestApp.Job jobA = a.getBean(TestApp.Job.class), jobB = b.getBean(TestApp.Job.class);
                assertTrue(AopUtils.isAopProxy(jobB), "the @LeaderOnly bean is not proxied");
                await("b sees a as leader", () -> "job-a".equals(b.getBean(Elector.class).leaderId()));
                int a0 = jobA.runs(), b0 = jobB.runs();
                Thread.sleep(1000);
                assertTrue(jobA.runs() - a0 >= 5, "the leader's job ran " + (jobA.runs() - a0) + " times in 1 s");
                assertEquals(0, jobB.runs(), "the follower's job ran");
                assertEquals(0, b0);
                assertEquals(0, jobB.answer(), "a skipped call returns the primitive default");
                assertEquals(42, jobA.answer());
                assertTrue(output.getAll().contains("skipped Job.tick: node job-b does not lead service " + service),
                        "no debug line for the skipped call");
            }
        }
    }

    @Test
    void aLeaderOnlyMethodsFenceAppliesTheCurrentLeadersTerm() throws Exception {
        String service = service("fence");
        TestDb.exec("CREATE TABLE IF NOT EXISTS `" + db.name + "`.spring_writes (node VARCHAR(128) NOT NULL, term BIGINT NOT NULL)");
        try (ConfigurableApplicationContext a = node(service, "fence-a", "mysqlleader.lease=" + LEASE);
             ConfigurableApplicationContext b = node(service, "fence-b", "mysqlleader.lease=" + LEASE)) {
            Elector ea = a.getBean(Elector.class), eb = b.getBean(Elector.class);
            assertTrue(ea.awaitLeadership(WAIT) || eb.awaitLeadership(WAIT));
            ConfigurableApplicationContext leaderCtx = ea.isLeader() ? a : b, followerCtx = ea.isLeader() ? b : a;
            Elector leader = leaderCtx.getBean(Elector.class), follower = followerCtx.getBean(Elector.class);
            try (java.sql.Connection conn = db.connection()) {
                assertEquals(leader.term(), leaderCtx.getBean(TestApp.Job.class).fencedWrite(leader, conn));
            }
            try (java.sql.Connection conn = db.connection()) {
                assertNull(followerCtx.getBean(TestApp.Job.class).fencedWrite(follower, conn), "the follower's call was not skipped");
            }
            // The seat moves: the old leader's calls are skipped, the new one's fence has the new term.
            long oldTerm = leader.term();
            leader.handover(follower.nodeId());
            assertTrue(follower.awaitLeadership(WAIT), "no takeover after the handover");
            try (java.sql.Connection conn = db.connection()) {
                assertNull(leaderCtx.getBean(TestApp.Job.class).fencedWrite(leader, conn), "the old leader's call was not skipped");
                assertEquals(follower.term(), followerCtx.getBean(TestApp.Job.class).fencedWrite(follower, conn));
            }
            assertTrue(follower.term() > oldTerm);
            try (java.sql.Connection conn = db.connection();
                 java.sql.Statement st = conn.createStatement();
                 java.sql.ResultSet rs = st.executeQuery("SELECT node, term FROM spring_writes ORDER BY term")) {
                assertTrue(rs.next());
                assertEquals(leader.nodeId(), rs.getString(1));
                assertEquals(oldTerm, rs.getLong(2));
                assertTrue(rs.next());
                assertEquals(follower.nodeId(), rs.getString(1));
                assertEquals(follower.term(), rs.getLong(2));
                assertFalse(rs.next(), "a skipped call wrote");
            }
        }
    }

    @Test
    void withoutTheServiceTheContextFailsToStartSayingSo() {
        Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> TestApp.run("mysqlleader.url=" + db.url).close());
        Throwable t = e;
        while (t.getCause() != null && !(t instanceof IllegalStateException)) t = t.getCause();
        assertTrue(String.valueOf(t.getMessage()).contains("mysqlleader.service"), String.valueOf(e));
        Exception noUrl = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> TestApp.run("mysqlleader.service=x").close());
        Throwable u = noUrl;
        while (u.getCause() != null && !(u instanceof IllegalStateException)) u = u.getCause();
        assertTrue(String.valueOf(u.getMessage()).contains("mysqlleader.url"), String.valueOf(noUrl));
    }

    @Test
    void closingTheContextResignsAndTheOtherTakesOver() throws Exception {
        String service = service("close");
        ConfigurableApplicationContext a = node(service, "close-a", "mysqlleader.lease=" + LEASE);
        Elector ea = a.getBean(Elector.class);
        TestApp.EventLog logA = a.getBean(TestApp.EventLog.class);
        try (ConfigurableApplicationContext b = node(service, "close-b", "mysqlleader.lease=" + LEASE)) {
            Elector eb = b.getBean(Elector.class);
            TestApp.Job jobB = b.getBean(TestApp.Job.class);
            assertTrue(ea.awaitLeadership(WAIT), "a did not lead: " + ea.lastCallError());
            await("b sees a as leader", () -> "close-a".equals(eb.leaderId()));
            assertEquals(0, jobB.runs());
            long t0 = System.nanoTime();
            a.close();
            assertTrue(ea.isClosed(), "closing the context did not close the elector");
            assertTrue(eb.awaitLeadership(Duration.ofSeconds(4)), "b did not take over within 4 s (< the 5 s lease): " + eb.lastCallError());
            long tookMs = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("spring: closing the leader's context, the other took over in " + tookMs + " ms");
            assertTrue(logA.events.stream().anyMatch(e -> e instanceof LeadershipLostEvent l
                    && (l.getReason() == StopReason.RESIGNED || l.getReason() == StopReason.SHUTDOWN)), logA.events.toString());
            await("b's job runs once b leads", () -> jobB.runs() > 0);
        } finally {
            a.close();
        }
    }

    @Test
    void healthIsUpWithLeaderDetailsOnLeaderAndFollower() throws Exception {
        String service = service("health");
        try (ConfigurableApplicationContext a = node(service, "health-a", "mysqlleader.lease=" + LEASE)) {
            Elector ea = a.getBean(Elector.class);
            assertTrue(ea.awaitLeadership(WAIT));
            try (ConfigurableApplicationContext b = node(service, "health-b", "mysqlleader.lease=" + LEASE)) {
                Elector eb = b.getBean(Elector.class);
                await("b healthy and seeing a", () -> eb.isHealthy() && "health-a".equals(eb.leaderId()));
                H ha = health(a);
                assertEquals("UP", ha.status(), ha.toString());
                assertEquals(true, ha.details().get("leading"));
                assertEquals("health-a", ha.details().get("leader"));
                assertEquals("health-a", ha.details().get("node"));
                assertEquals(service, ha.details().get("service"));
                assertEquals(ea.term(), ha.details().get("term"));
                H hb = health(b);
                assertEquals("UP", hb.status(), hb.toString());
                assertEquals(false, hb.details().get("leading"));
                assertEquals("health-a", hb.details().get("leader"));
                assertEquals("health-b", hb.details().get("node"));
                // Registered under the name "mysqlleader" in Actuator's health endpoint.
                assertEquals("UP", healthViaEndpoint(b).status());
            }
        }
    }

    @Test
    void healthIsDownWhenTheElectorFails() throws Exception {
        java.net.URI u = java.net.URI.create(db.url);
        String user = u.getRawUserInfo().split(":", 2)[0];
        String wrong = "mysql://" + user + ":pw-Zq7x-wrong@" + u.getHost() + ":" + u.getPort() + u.getRawPath();
        try (ConfigurableApplicationContext ctx = TestApp.run("mysqlleader.url=" + wrong, "mysqlleader.service=" + service("down"),
                "mysqlleader.node-id=down-1", "mysqlleader.lease=" + LEASE)) {
            await("DOWN", () -> health(ctx).status().equals("DOWN"));
            H health = health(ctx);
            assertEquals("down-1", health.details().get("node"));
            assertEquals(false, health.details().get("leading"));
            String error = String.valueOf(health.details().get("error"));
            assertTrue(error.contains("1045") || error.toLowerCase().contains("access denied"), error);
            assertFalse(error.contains("pw-Zq7x-wrong"), "the password is in the health details: " + error);
            assertEquals("DOWN", healthViaEndpoint(ctx).status());
            assertEquals(0, ctx.getBean(TestApp.Job.class).runs(), "the job ran without leadership");
            assertTrue(ctx.getBean(TestApp.EventLog.class).events.stream().anyMatch(e -> e.getKind() == io.mysqlleader.ElectorEvent.Kind.FAILING),
                    "no FAILING event published");
        }
    }

    @Test
    void leaderChangesArriveAsApplicationEvents() throws Exception {
        String service = service("events");
        ConfigurableApplicationContext a = node(service, "ev-a", "mysqlleader.lease=" + LEASE);
        TestApp.EventLog logA = a.getBean(TestApp.EventLog.class);
        Elector ea = a.getBean(Elector.class);
        try (ConfigurableApplicationContext b = node(service, "ev-b", "mysqlleader.lease=" + LEASE)) {
            TestApp.EventLog logB = b.getBean(TestApp.EventLog.class);
            assertTrue(ea.awaitLeadership(WAIT));
            long term = ea.term();
            await("a's LeadershipAcquiredEvent", () -> logA.events.stream().anyMatch(e -> e instanceof LeadershipAcquiredEvent && e.getTerm() == term));
            MysqlLeaderEvent acquired = logA.events.stream().filter(e -> e instanceof LeadershipAcquiredEvent).findFirst().orElseThrow();
            assertEquals(ea, acquired.getElector());
            assertEquals("ev-a", acquired.getEvent().leaderId());
            await("b's LeaderChangedEvent naming a", () -> logB.events.stream().anyMatch(e -> e instanceof LeaderChangedEvent c && "ev-a".equals(c.getLeaderId())));
            a.close();
            await("b's LeadershipAcquiredEvent", () -> logB.events.stream().anyMatch(e -> e instanceof LeadershipAcquiredEvent));
            List<MysqlLeaderEvent> lost = logA.events.stream().filter(e -> e instanceof LeadershipLostEvent).toList();
            assertEquals(1, lost.size(), logA.events.toString());
            assertEquals(term, lost.get(0).getTerm());
            assertTrue(logB.events.stream().filter(e -> e instanceof LeadershipAcquiredEvent).allMatch(e -> e.getTerm() > term), logB.events.toString());
        } finally {
            a.close();
        }
    }

    @Test
    void metricsOnASimpleMeterRegistryWithoutBoot() throws Exception {
        String service = service("metrics");
        try (Client client = Client.connect(db.url);
             Elector leader = Elector.builder(client, service).nodeId("m-a").lease(Duration.ofSeconds(5)).build()) {
            assertTrue(leader.awaitLeadership(WAIT));
            try (Elector follower = Elector.builder(client, service).nodeId("m-b").lease(Duration.ofSeconds(5)).build()) {
                await("the follower sees the leader", () -> "m-a".equals(follower.leaderId()));
                MeterRegistry r = new SimpleMeterRegistry();
                new MysqlLeaderMetrics(leader).bindTo(r);
                MeterRegistry rf = new SimpleMeterRegistry();
                new MysqlLeaderMetrics(follower).bindTo(rf);
                assertEquals(1.0, r.get("mysqlleader.is.leader").tag("name", service).gauge().value());
                assertEquals(1.0, r.get("leader.election.master.status").tag("name", service).gauge().value());
                assertEquals((double) leader.term(), r.get("mysqlleader.term").tag("name", service).gauge().value());
                assertTrue(r.get("mysqlleader.term").gauge().value() >= 1);
                assertTrue(r.get("mysqlleader.leadership.transitions.total").functionCounter().count() >= 1);
                // (a renew that timed out on a loaded machine counts: no exact number)
                double errors = r.get("mysqlleader.campaign.errors.total").functionCounter().count();
                assertTrue(errors >= 0 && errors == Math.floor(errors), "campaign errors: " + errors);
                assertTrue(r.get("mysqlleader.campaign.duration.seconds").functionTimer().count() >= 1);
                assertEquals(0.0, rf.get("mysqlleader.is.leader").gauge().value());
                assertEquals((double) leader.term(), rf.get("mysqlleader.term").gauge().value(), "the follower's term is the leader's");
                assertEquals(0.0, rf.get("mysqlleader.leadership.transitions.total").functionCounter().count());
                follower.close();
                assertEquals(0.0, rf.get("mysqlleader.is.leader").gauge().value(), "a closed elector leads nothing");
                assertTrue(Double.isNaN(rf.get("mysqlleader.term").gauge().value()));
            }
        }
    }

    @Test
    void metricsInTheContextUnderThePrometheusTextsNames() throws Exception {
        String service = service("prom");
        try (ConfigurableApplicationContext a = node(service, "p-a", "mysqlleader.lease=" + LEASE,
                "management.prometheus.metrics.export.enabled=true", "management.defaults.metrics.export.enabled=true")) {
            Elector ea = a.getBean(Elector.class);
            assertTrue(ea.awaitLeadership(WAIT));
            PrometheusMeterRegistry prom = a.getBean(PrometheusMeterRegistry.class);
            String scrape = prom.scrape();
            String label = "{name=\"" + service + "\"}";
            scrape.lines().filter(l -> l.contains(service)).forEach(l -> System.out.println("spring: prometheus: " + l));
            assertTrue(scrape.contains("mysqlleader_is_leader" + label + " 1"), scrape);
            assertTrue(scrape.contains("mysqlleader_term" + label + " " + ea.term()), scrape);
            assertTrue(scrape.contains("mysqlleader_leadership_transitions_total" + label + " "), scrape);
            assertTrue(scrape.contains("mysqlleader_campaign_errors_total" + label + " "), scrape);
            assertFalse(scrape.contains("_total_total"), scrape);
            assertTrue(scrape.contains("mysqlleader_campaign_duration_seconds_count" + label + " "), scrape);
            assertTrue(scrape.contains("leader_election_master_status" + label + " 1"), scrape);
        }
    }
}
