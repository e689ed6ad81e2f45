package io.mysqlleader;

import com.sun.jna.CallbackThreadInitializer;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * The library's log records, handed to {@link System.Logger} (the JDK's own logging facade,
 * which routes to java.util.logging by default and to SLF4J, Log4j 2 or Logback when the
 * application has their System.LoggerFinder bridge; no dependency of this jar). Internal.
 *
 * <p>Loggers are named after the Rust module with {@code .} for {@code ::}
 * ({@code mysqlleader.elector.task}). The C side is asked only for the levels that the logger
 * {@code mysqlleader} allows when the library loads (error 1 ... trace 5).
 *
 * <p>Quiet unless asked: when the application has configured nothing for the logger
 * {@code mysqlleader} (the JDK's own LoggerFinder, i.e. java.util.logging, and no level set on that
 * JUL logger), only WARNING and above are forwarded, not the INFO records of every leadership
 * change that JUL's default configuration would print. A level on {@code mysqlleader} (a
 * {@code -Djava.util.logging.config.file} with {@code mysqlleader.level = INFO}, or
 * {@code java.util.logging.Logger.getLogger("mysqlleader").setLevel(...)} before the library
 * loads) or a LoggerFinder of another backend (SLF4J's, Log4j's) decides instead.
 */
final class Logging {
    private Logging() {}

    /** Kept reachable for as long as the library may call it: for the life of the process. */
    private static Lib.LogCallback callback;

    static void install(Lib lib) {
        Logger root = System.getLogger("mysqlleader");
        Level[] levels = {Level.ERROR, Level.WARNING, Level.INFO, Level.DEBUG, Level.TRACE};
        int max = 0;
        for (int i = 0; i < levels.length; i++) {
            if (root.isLoggable(levels[i])) max = i + 1;
        }
        if (unconfigured()) max = Math.min(max, 2); // WARNING and above
        callback = (Pointer userdata, int level, String target, String message) -> {
            try {
                Level l = level >= 1 && level <= 5 ? levels[level - 1] : Level.INFO;
                String name = target == null ? "mysqlleader" : target.replace("::", ".");
                System.getLogger(name).log(l, message);
            } catch (Throwable ignored) {
                // never into the library's threads
            }
        };
        // The library's threads stay attached to the JVM (as daemons) instead of attaching per record.
        Native.setCallbackThreadInitializer(callback, new CallbackThreadInitializer(true, false, "mysqlleader-log"));
        // MYSQLLEADER_INVALID_STATE: a Rust program in this process installed its own subscriber first.
        lib.mysqlleader_set_log_callback(null, max == 0 ? null : callback, max);
    }

    /**
     * Whether the application has configured nothing for the logger {@code mysqlleader}: the
     * LoggerFinder is the JDK's own (java.util.logging's) and the JUL logger {@code mysqlleader}
     * has no level of its own.
     */
    static boolean unconfigured() {
        try {
            Module finder = System.LoggerFinder.getLoggerFinder().getClass().getModule();
            String name = finder.isNamed() ? finder.getName() : "";
            if (!name.equals("java.base") && !name.equals("java.logging")) return false;
            return java.util.logging.Logger.getLogger("mysqlleader").getLevel() == null;
        } catch (Throwable t) {
            return false; // a security manager, or no java.logging module: as before, the finder's levels
        }
    }
}
