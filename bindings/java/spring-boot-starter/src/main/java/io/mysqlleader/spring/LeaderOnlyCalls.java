package io.mysqlleader.spring;

import java.time.Duration;

/**
 * The {@link LeaderOnly} calls running now, so that the context's shutdown lets the leader's work
 * end before the seat is given up: {@link MysqlLeaderLifecycle#stop()} closes the gate (no new call
 * runs), waits for the calls in flight, at most as long as this node still leads (work past that
 * could only be refused by its fence), then resigns.
 */
public final class LeaderOnlyCalls {
    private int running;
    private boolean closed;

    /** Enters a call: false when the gate is closed (the call is skipped). */
    synchronized boolean enter() {
        if (closed) return false;
        running++;
        return true;
    }

    /** Leaves a call that {@link #enter()} let in. */
    synchronized void exit() {
        if (--running == 0) notifyAll();
    }

    /** The calls running now. */
    public synchronized int running() {
        return running;
    }

    /**
     * Lets no new call in, and waits until none runs or {@code limit} has passed (an interrupt
     * ends the wait early, the thread's interrupt status kept). Returns the calls still running.
     */
    public synchronized int closeAndAwait(Duration limit) {
        closed = true;
        long deadline = System.nanoTime() + Math.max(0, limit.toNanos());
        try {
            while (running > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) break;
                wait(Math.max(1, left / 1_000_000));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return running;
    }
}
