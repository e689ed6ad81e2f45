package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import io.mysqlleader.ElectorEvent;
import io.mysqlleader.StopReason;

/** This node stopped leading ({@code STOPPED_LEADING}) the term {@link #getTerm()}, for {@link #getReason()}. */
public class LeadershipLostEvent extends MysqlLeaderEvent {
    public LeadershipLostEvent(Elector source, ElectorEvent event) {
        super(source, event);
    }

    /** Why: lost seat, deadline passed, resigned, shutdown, failed, handed over. */
    public StopReason getReason() { return getEvent().reason(); }
}
