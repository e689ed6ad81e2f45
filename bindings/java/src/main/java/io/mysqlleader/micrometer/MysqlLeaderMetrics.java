package io.mysqlleader.micrometer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.mysqlleader.Elector;
import io.mysqlleader.MysqlLeaderException;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A Micrometer {@link MeterBinder} for one {@link Elector}: the metrics of the library's
 * Prometheus text ({@link Elector#metricsText()}, the CLI's {@code /metrics}) under the same
 * names, dots for underscores, tagged {@code name=<service>} as the text is labelled:
 *
 * <table>
 * <caption>meters</caption>
 * <tr><th>meter</th><th>type</th><th>value</th></tr>
 * <tr><td>{@code mysqlleader.is.leader}</td><td>gauge</td><td>1 while this node leads ({@link Elector#isLeader()}, exact when read), else 0</td></tr>
 * <tr><td>{@code leader.election.master.status}</td><td>gauge</td><td>the same (client-go's {@code leader_election_master_status})</td></tr>
 * <tr><td>{@code mysqlleader.term}</td><td>gauge</td><td>the term seen last: the fencing token while leading ({@link Elector#term()})</td></tr>
 * <tr><td>{@code mysqlleader.leadership.transitions.total}</td><td>function counter</td><td>how often this node started or stopped leading</td></tr>
 * <tr><td>{@code mysqlleader.campaign.errors.total}</td><td>function counter</td><td>campaign calls that failed (an error or a timeout)</td></tr>
 * <tr><td>{@code mysqlleader.campaign.duration.seconds}</td><td>function timer</td><td>count and total time of the campaign calls (the text's histogram without its buckets)</td></tr>
 * </table>
 *
 * <p>Each read asks the elector (never a round trip to the database: the library answers from
 * its atomics). A closed elector reads as not leading, and its other meters as NaN. Micrometer's
 * Prometheus registry renders these under the text's own names
 * ({@code mysqlleader_leadership_transitions_total}, {@code mysqlleader_campaign_duration_seconds_count}, ...).
 *
 * <p>micrometer-core is an optional dependency of the {@code mysqlleader} jar: add it to use this
 * class without Spring Boot:
 * <pre>{@code
 * new MysqlLeaderMetrics(elector).bindTo(registry);
 * }</pre>
 * The Spring Boot starter ({@code mysqlleader-spring-boot-starter}) registers one for its elector
 * when a {@code MeterRegistry} is present.
 *
 * <p>The meters hold the elector weakly, as Micrometer's function meters do: keep a reference to it.
 */
public final class MysqlLeaderMetrics implements MeterBinder {
    private final Elector elector;
    private final Tags tags;

    /** Meters for {@code elector}, tagged {@code name=<its service>}. */
    public MysqlLeaderMetrics(Elector elector) {
        this(elector, Tags.empty());
    }

    /** Meters for {@code elector}, tagged {@code name=<its service>} and {@code extraTags}. */
    public MysqlLeaderMetrics(Elector elector, Iterable<Tag> extraTags) {
        this.elector = Objects.requireNonNull(elector, "elector");
        this.tags = Tags.of("name", elector.serviceId()).and(extraTags);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("mysqlleader.is.leader", elector, e -> e.isLeader() ? 1.0 : 0.0)
                .description("1 while this node leads the election, else 0.")
                .tags(tags)
                .register(registry);
        Gauge.builder("leader.election.master.status", elector, e -> e.isLeader() ? 1.0 : 0.0)
                .description("1 while this node leads the election, else 0 (client-go's name).")
                .tags(tags)
                .register(registry);
        Gauge.builder("mysqlleader.term", elector, MysqlLeaderMetrics::term)
                .description("The term (fencing token) this node saw last.")
                .tags(tags)
                .register(registry);
        FunctionCounter.builder("mysqlleader.leadership.transitions.total", elector,
                        e -> sample(e, "mysqlleader_leadership_transitions_total"))
                .description("How often this node started or stopped leading.")
                .tags(tags)
                .register(registry);
        FunctionCounter.builder("mysqlleader.campaign.errors.total", elector,
                        e -> sample(e, "mysqlleader_campaign_errors_total"))
                .description("Campaign calls that failed (an error or a timeout).")
                .tags(tags)
                .register(registry);
        FunctionTimer.builder("mysqlleader.campaign.duration.seconds", elector,
                        e -> (long) sample(e, "mysqlleader_campaign_duration_seconds_count"),
                        e -> sample(e, "mysqlleader_campaign_duration_seconds_sum"),
                        TimeUnit.SECONDS)
                .description("The duration of each campaign call, answered or not.")
                .tags(tags)
                .register(registry);
    }

    private static double term(Elector e) {
        try {
            return e.term();
        } catch (MysqlLeaderException closed) {
            return Double.NaN;
        }
    }

    /** One unlabelled-by-bucket sample of the elector's Prometheus text, or NaN (closed, or absent). */
    private static double sample(Elector e, String metric) {
        String text;
        try {
            text = e.metricsText();
        } catch (MysqlLeaderException closed) {
            return Double.NaN;
        }
        Double v = samples(text).get(metric);
        return v == null ? Double.NaN : v;
    }

    /**
     * The samples of a Prometheus text, by metric name without labels (one elector's text has one
     * sample per name, except the histogram's buckets, which this skips).
     */
    static Map<String, Double> samples(String text) {
        Map<String, Double> out = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) continue;
            int brace = line.indexOf('{');
            int space = line.lastIndexOf(' ');
            if (space <= 0) continue;
            String name = brace > 0 && brace < space ? line.substring(0, brace) : line.substring(0, space);
            if (name.endsWith("_bucket")) continue;
            try {
                out.put(name, Double.parseDouble(line.substring(space + 1).trim()));
            } catch (NumberFormatException ignored) {
                // not a sample
            }
        }
        return out;
    }
}
