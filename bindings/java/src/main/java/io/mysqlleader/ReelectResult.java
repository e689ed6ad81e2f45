package io.mysqlleader;

/**
 * The row of {@code reelect}.
 *
 * @param previousLeaderId the node whose valid lease was ended; null when nobody led
 * @param term the term of the service (unchanged by {@code reelect})
 */
public record ReelectResult(String previousLeaderId, long term) {}
