package io.mysqlleader;

/**
 * The row of {@code resign}.
 *
 * @param resigned whether the node led and its lease has been ended
 * @param term the term of the service
 */
public record ResignResult(boolean resigned, long term) {}
