package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import io.mysqlleader.ElectorEvent;

/** This node became leader ({@code STARTED_LEADING}) at {@link #getTerm()}. */
public class LeadershipAcquiredEvent extends MysqlLeaderEvent {
    public LeadershipAcquiredEvent(Elector source, ElectorEvent event) {
        super(source, event);
    }
}
