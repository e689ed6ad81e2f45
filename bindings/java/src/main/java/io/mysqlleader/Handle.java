package io.mysqlleader;

import com.sun.jna.Pointer;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A C handle shared by threads: calls hold the read lock while they use the pointer, and
 * {@link #take()} waits for calls in flight, then hands the pointer over exactly once (for
 * {@code _free}, which runs outside the lock). A call on a closed handle fails with
 * {@link InvalidStateException} without touching C. Internal.
 */
final class Handle {
    interface Call<T> {
        T run(Pointer p);
    }

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final String what;
    private volatile Pointer ptr;

    Handle(String what, Pointer ptr) {
        this.what = what;
        this.ptr = ptr;
    }

    boolean closed() {
        return ptr == null;
    }

    <T> T use(Call<T> call) {
        if (ptr == null) throw closedError();
        lock.readLock().lock();
        try {
            Pointer p = ptr;
            if (p == null) throw closedError();
            return call.run(p);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Runs a C call that returns a result code; a failure becomes the matching exception. */
    void check(Call<Integer> call) {
        use(p -> {
            int rc = call.run(p);
            if (rc != 0) throw MysqlLeaderException.last(rc);
            return null;
        });
    }

    /** The pointer, once; null when taken already. New calls fail from now on. */
    Pointer take() {
        lock.writeLock().lock();
        try {
            Pointer p = ptr;
            ptr = null;
            return p;
        } finally {
            lock.writeLock().unlock();
        }
    }

    InvalidStateException closedError() {
        return new InvalidStateException("mysqlleader: the " + what + " is closed");
    }
}
