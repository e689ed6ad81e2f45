package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import io.mysqlleader.ElectorEvent;

/** Another leader, a vacant seat, or a new term was seen ({@code LEADER_CHANGED}). */
public class LeaderChangedEvent extends MysqlLeaderEvent {
    public LeaderChangedEvent(Elector source, ElectorEvent event) {
        super(source, event);
    }

    /** The new leader's node id, or null for a vacant seat. */
    public String getLeaderId() { return getEvent().leaderId(); }
}
