package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import io.mysqlleader.MysqlLeaderException;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The health of an {@link Elector}, whichever Actuator shows it (Spring Boot 3's
 * {@link MysqlLeaderHealthIndicator}, Boot 4's {@code boot4.MysqlLeaderHealthIndicator}): UP while
 * the elector works (its last call succeeded within one lease, {@link Elector#isHealthy()}),
 * whether it leads or follows; DOWN when it fails (a refused login, a missing grant, the server
 * unreachable, ...) or no longer campaigns, or is closed; UNKNOWN before its first call has
 * answered. Details: {@code service}, {@code node}, {@code leading}, {@code leader} (the leader
 * seen last; absent for a vacant seat), {@code term}, and {@code error} (the last call's error,
 * which never holds the password) when not UP. Never a round trip: the library answers from its state.
 *
 * @param status {@code UP}, {@code DOWN} or {@code UNKNOWN}
 * @param details in that order
 */
public record MysqlLeaderHealth(String status, Map<String, Object> details) {
    public static MysqlLeaderHealth of(Elector elector) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("service", elector.serviceId());
        d.put("node", elector.nodeId());
        String status;
        if (elector.isClosed()) {
            d.put("leading", false);
            d.put("error", "the elector is closed");
            status = "DOWN";
        } else {
            try {
                boolean healthy = elector.isHealthy();
                d.put("leading", elector.isLeader());
                String leader = elector.leaderId();
                if (leader != null) d.put("leader", leader);
                d.put("term", elector.term());
                String error = elector.lastCallError();
                if (healthy) {
                    status = "UP";
                } else if (error != null || !elector.isCampaigning()) {
                    d.put("error", error != null ? error : "the elector no longer campaigns");
                    status = "DOWN";
                } else {
                    status = "UNKNOWN";
                }
            } catch (MysqlLeaderException closedMeanwhile) {
                d.put("error", closedMeanwhile.getMessage());
                status = "DOWN";
            }
        }
        return new MysqlLeaderHealth(status, Collections.unmodifiableMap(d));
    }
}
