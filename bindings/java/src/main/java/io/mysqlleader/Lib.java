package io.mysqlleader;

import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The C ABI as JNA sees it, and where the library comes from. Internal.
 *
 * <p>The declarations (constants, structures, callbacks, every function of
 * include/mysqlleader.h) are in {@link CApi}, generated from the header by the repository's
 * tests/ffi_header.rs, which states the type rules once (C {@code bool} is a {@code byte}: JNA
 * would map {@code boolean} to a 4-byte int; {@code uint64_t} a {@code long} read as unsigned where
 * it matters; {@code size_t} a {@code long}, 64-bit only; strings UTF-8 whatever the platform
 * charset). This interface adds the loader and the string helpers.
 * The {@code mysqlleader_last_error*} values are per OS thread; a JNA call runs on the calling
 * Java thread, so they are read on the thread of the call that failed.
 */
interface Lib extends CApi {
    String VERSION = loadVersion();
    Lib C = load();

    /** A NUL-terminated UTF-8 string in {@code buf}. */
    static String string(byte[] buf) {
        int n = 0;
        while (n < buf.length && buf[n] != 0) n++;
        return new String(buf, 0, n, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** A borrowed NUL-terminated UTF-8 string, or null. */
    static String string(Pointer p) {
        return p == null ? null : p.getString(0, "UTF-8");
    }

    /** The binding's version (the pom's, which equals Cargo.toml's). */
    private static String loadVersion() {
        try (InputStream in = Lib.class.getResourceAsStream("version.properties")) {
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException | NullPointerException e) {
            throw new ExceptionInInitializerError("io/mysqlleader/version.properties is missing from the jar");
        }
    }

    /**
     * Loads libmysqlleader: the file named by the system property {@code mysqlleader.library.path},
     * else by the environment variable {@code MYSQLLEADER_LIB}, else the copy inside this jar
     * ({@code linux-x86-64/libmysqlleader.so}, extracted by JNA to a temporary file). Never a
     * system-wide copy of another version: the library's version must equal the binding's.
     */
    private static Lib load() {
        String path = System.getProperty("mysqlleader.library.path");
        if (path == null || path.isEmpty()) path = System.getenv("MYSQLLEADER_LIB");
        File file;
        boolean extracted = false;
        if (path != null && !path.isEmpty()) {
            file = new File(path);
        } else {
            try {
                file = Native.extractFromResourcePath("mysqlleader", Lib.class.getClassLoader());
            } catch (IOException e) {
                throw new UnsatisfiedLinkError("libmysqlleader is not in this jar for " + com.sun.jna.Platform.RESOURCE_PREFIX
                        + " (set -Dmysqlleader.library.path=/path/to/libmysqlleader.so or MYSQLLEADER_LIB): " + e.getMessage());
            }
            // From a jar JNA writes a temporary copy (under jna.tmpdir, by default ~/.cache/JNA/temp)
            // and never removes it on Linux: one copy per JVM start, tens of MB each, until the disk
            // fills. From a directory on the class path it returns the file in place.
            extracted = fromJar() && file.getName().startsWith("jna");
        }
        Lib lib;
        try {
            lib = Native.load(file.getAbsolutePath(), Lib.class, OPTIONS);
        } finally {
            // The mapping outlives the file's name: on Unix a loaded library can be unlinked.
            if (extracted && !com.sun.jna.Platform.isWindows() && !file.delete()) {
                System.err.println("mysqlleader: could not remove the temporary copy " + file);
            }
        }
        String version = lib.mysqlleader_version();
        if (!VERSION.equals(version)) {
            throw new UnsatisfiedLinkError("libmysqlleader at " + file + " is version " + version
                    + ", this binding is version " + VERSION + ": use the library of the same release");
        }
        Logging.install(lib);
        return lib;
    }

    /** Whether the class path holds the library inside a jar (JNA then copies it out), not in a directory. */
    private static boolean fromJar() {
        java.net.URL url = Lib.class.getClassLoader().getResource(com.sun.jna.Platform.RESOURCE_PREFIX + "/libmysqlleader.so");
        return url != null && !"file".equals(url.getProtocol());
    }
}
