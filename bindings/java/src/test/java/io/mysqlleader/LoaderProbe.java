package io.mysqlleader;

import java.nio.file.Files;
import java.nio.file.Path;

/** A child JVM of {@link LoaderTest}: loads the library, prints its version and the file mapped. */
public final class LoaderProbe {
    public static void main(String[] args) throws Exception {
        System.out.println("version " + Lib.C.mysqlleader_version());
        Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(l -> l.contains("mysqlleader") && l.contains(".so"))
                .map(l -> "mapped " + l.substring(l.indexOf('/')))
                .distinct()
                .forEach(System.out::println);
    }
}
