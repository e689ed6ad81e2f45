package io.mysqlleader;

import java.time.Duration;

/** The checks of Java values that have no C counterpart (C takes whole milliseconds, 0 meaning "the default"). Internal. */
final class Args {
    private Args() {}

    /** {@code d} in whole milliseconds, at least 1: never rounded, never 0 (which C reads as "the default"). */
    static long millis(Duration d, String name) {
        if (d == null) {
            throw new InvalidArgumentException(ErrorKind.NULL_ARGUMENT, "mysqlleader: " + name + " is null", name, null, 0, false, null);
        }
        if (d.isNegative() || d.isZero() || d.getNano() % 1_000_000 != 0 || d.getSeconds() > Long.MAX_VALUE / 1000 - 1) {
            throw new InvalidArgumentException(ErrorKind.INVALID_ARGUMENT, "mysqlleader: invalid argument `" + name
                    + "`: " + d + " is not a whole number of milliseconds of at least 1 ms", name, null, 0, false, null);
        }
        return d.toMillis();
    }

    /** A wait's limit: zero only looks; null or negative is rejected. */
    static long timeoutNanos(Duration d, String name) {
        if (d == null) {
            throw new InvalidArgumentException(ErrorKind.NULL_ARGUMENT, "mysqlleader: " + name + " is null", name, null, 0, false, null);
        }
        if (d.isNegative()) {
            throw new InvalidArgumentException(ErrorKind.INVALID_ARGUMENT, "mysqlleader: invalid argument `" + name
                    + "`: " + d + " is negative", name, null, 0, false, null);
        }
        return d.compareTo(Duration.ofDays(365 * 100)) > 0 ? Long.MAX_VALUE : d.toNanos();
    }

    /** A nullable id of a C row: "" means none. */
    static String id(byte[] buf) {
        String s = Lib.string(buf);
        return s.isEmpty() ? null : s;
    }
}
