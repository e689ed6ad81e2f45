package io.mysqlleader.spring;

import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;

/**
 * The starter's settings, under {@code mysqlleader.*}.
 */
@ConfigurationProperties(prefix = "mysqlleader")
public class MysqlLeaderProperties {
    /** Whether to auto-configure the client and the elector. */
    private boolean enabled = true;
    /** The service this node campaigns for (required; 1 to 128 characters). */
    private String service;
    /** This node's id (default: the library's host name and pid, "host:pid"). */
    private String nodeId;
    /** How long a lease lasts after each acquisition or renew (default 10s). */
    private Duration lease;
    /** How often the leader renews (default lease / 5). */
    private Duration renewInterval;
    /** The longest a follower waits between attempts (default lease / 10). */
    private Duration retryInterval;
    /** The longest one call may take (default min(lease / 5, 2s)). */
    private Duration requestTimeout;
    /**
     * The connection URL, mysql://user:password@host:port/database (TLS: ssl-mode, ssl-ca, ...).
     * Default: derived from spring.datasource.url, username and password for a jdbc:mysql: or
     * jdbc:mariadb: URL.
     */
    private String url;

    public boolean isEnabled() { return enabled; }
    public void setEnabled(boolean enabled) { this.enabled = enabled; }
    public String getService() { return service; }
    public void setService(String service) { this.service = service; }
    public String getNodeId() { return nodeId; }
    public void setNodeId(String nodeId) { this.nodeId = nodeId; }
    public Duration getLease() { return lease; }
    public void setLease(Duration lease) { this.lease = lease; }
    public Duration getRenewInterval() { return renewInterval; }
    public void setRenewInterval(Duration renewInterval) { this.renewInterval = renewInterval; }
    public Duration getRetryInterval() { return retryInterval; }
    public void setRetryInterval(Duration retryInterval) { this.retryInterval = retryInterval; }
    public Duration getRequestTimeout() { return requestTimeout; }
    public void setRequestTimeout(Duration requestTimeout) { this.requestTimeout = requestTimeout; }
    public String getUrl() { return url; }
    public void setUrl(String url) { this.url = url; }
}
