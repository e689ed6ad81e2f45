package io.mysqlleader;

/**
 * Receives an elector's events on its callback thread, one at a time and in order. It should
 * return promptly (later events wait); an exception it throws is logged and the elector goes
 * on. Decide on leadership with {@link Elector#isLeader()}, which also checks the local deadline.
 */
@FunctionalInterface
public interface ElectorListener {
    void onEvent(ElectorEvent event);
}
