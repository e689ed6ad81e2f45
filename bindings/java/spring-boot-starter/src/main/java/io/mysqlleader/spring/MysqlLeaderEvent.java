package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import io.mysqlleader.ElectorEvent;
import org.springframework.context.ApplicationEvent;

/**
 * An event of the auto-configured {@link Elector}, published in the application context (in
 * order, on the elector's callback thread: listeners should return promptly). Leadership changes
 * come as the subclasses {@link LeadershipAcquiredEvent}, {@link LeadershipLostEvent} and
 * {@link LeaderChangedEvent}; the others ({@code MISSED}, {@code FAILING},
 * {@code ELECTOR_STOPPED}) as this class. The source is the elector.
 *
 * <pre>{@code
 * @EventListener
 * void onLeading(LeadershipAcquiredEvent e) { log.info("leading {} at term {}", e.getElector().serviceId(), e.getTerm()); }
 * }</pre>
 */
public class MysqlLeaderEvent extends ApplicationEvent {
    private final transient ElectorEvent event;

    public MysqlLeaderEvent(Elector source, ElectorEvent event) {
        super(source);
        this.event = event;
    }

    /** The event for {@code event}'s kind: one of the subclasses for a leadership change. */
    public static MysqlLeaderEvent of(Elector source, ElectorEvent event) {
        return switch (event.kind()) {
            case STARTED_LEADING -> new LeadershipAcquiredEvent(source, event);
            case STOPPED_LEADING -> new LeadershipLostEvent(source, event);
            case LEADER_CHANGED -> new LeaderChangedEvent(source, event);
            default -> new MysqlLeaderEvent(source, event);
        };
    }

    /** The elector's event. */
    public ElectorEvent getEvent() { return event; }

    /** The elector that sent it. */
    public Elector getElector() { return (Elector) getSource(); }

    /** What happened. */
    public ElectorEvent.Kind getKind() { return event.kind(); }

    /** The term the event is about. */
    public long getTerm() { return event.term(); }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + event + "]";
    }
}
