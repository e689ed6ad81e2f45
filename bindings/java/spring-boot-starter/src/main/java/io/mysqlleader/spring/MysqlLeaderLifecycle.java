package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import io.mysqlleader.ElectorEvent;
import io.mysqlleader.ElectorListener;
import io.mysqlleader.MysqlLeaderException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

import java.util.ArrayList;
import java.util.List;

/**
 * Ties the auto-configured {@link Elector} to the application context's lifecycle, and publishes
 * its events as {@link MysqlLeaderEvent}s.
 *
 * <p>The elector campaigns from its creation during the context's refresh (building it never
 * waits for the database). Its events are held back until {@link #start()} (when every
 * {@code @EventListener} is registered), then published in order; from then on as they come.
 * {@link #stop()} (the context closing or stopping) lets no new {@link LeaderOnly} call run,
 * waits for those in flight (at most as long as this node still leads: past that their fences
 * could only be refused), then closes the elector: it resigns, so another node takes over at
 * once, and publishes its last events. The phase, {@link #PHASE}, is below the web server's and
 * the task schedulers', so these stop first; the schedulers do not wait for a task in flight
 * (Spring's default), this does: the leader's work ends before the seat is given up.
 */
public class MysqlLeaderLifecycle implements SmartLifecycle, ElectorListener {
    /** Stops after the web server ({@code DEFAULT_PHASE - 2048}) and the task schedulers ({@code DEFAULT_PHASE}). */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;
    private static final Log LOG = LogFactory.getLog(MysqlLeaderLifecycle.class);

    private final ApplicationEventPublisher publisher;
    /** The {@link LeaderOnly} calls to wait for at {@link #stop()}; null: none to wait for. */
    private final LeaderOnlyCalls calls;
    private volatile Elector elector;
    private volatile boolean running;
    /** Events held until start (and until the elector is known); null once publishing. */
    private List<ElectorEvent> held = new ArrayList<>();

    public MysqlLeaderLifecycle(ApplicationEventPublisher publisher) {
        this(publisher, null);
    }

    /** With the {@link LeaderOnly} calls that {@link #stop()} waits for. */
    public MysqlLeaderLifecycle(ApplicationEventPublisher publisher, LeaderOnlyCalls calls) {
        this.publisher = publisher;
        this.calls = calls;
    }

    /** The elector whose events this publishes (the listener is given to its builder, before it exists). */
    void setElector(Elector elector) {
        this.elector = elector;
    }

    /** The elector's callback thread: publish, or hold until started. */
    @Override
    public void onEvent(ElectorEvent event) {
        synchronized (this) {
            if (held != null) {
                held.add(event);
                return;
            }
        }
        publish(event);
    }

    private void publish(ElectorEvent event) {
        Elector e = elector;
        try {
            publisher.publishEvent(MysqlLeaderEvent.of(e, event));
        } catch (RuntimeException ex) {
            LOG.warn("publishing " + event + " failed", ex);
        }
    }

    @Override
    public void start() {
        if (elector == null) return;
        if (elector.isClosed()) {
            LOG.warn("the elector of service " + elector.serviceId() + " was closed (context stopped): it does not campaign again until the context is refreshed anew");
        }
        // Publish the held events in order on this thread, while the callback thread holds new ones.
        while (true) {
            List<ElectorEvent> batch;
            synchronized (this) {
                if (held == null) break;
                if (held.isEmpty()) {
                    held = null;
                    break;
                }
                batch = held;
                held = new ArrayList<>();
            }
            for (ElectorEvent ev : batch) publish(ev);
        }
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        Elector e = elector;
        if (e == null) return;
        if (calls != null && !e.isClosed()) {
            int left = calls.closeAndAwait(e.isLeader() ? e.validFor() : java.time.Duration.ZERO);
            if (left > 0) {
                LOG.warn(left + " @LeaderOnly call(s) of service " + e.serviceId() + " still running as this node's leadership ends; "
                        + "their fenced writes will be refused");
            }
        }
        try {
            e.close(); // resigns (the builder's default), delivers the last events
        } catch (MysqlLeaderException ex) {
            LOG.warn("closing the elector of service " + e.serviceId() + " failed; its lease will lapse: " + ex.getMessage());
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
