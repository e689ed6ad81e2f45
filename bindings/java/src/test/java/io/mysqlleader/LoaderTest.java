package io.mysqlleader;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/** Where the library comes from: the jar's copy by default, else the system property or MYSQLLEADER_LIB. */
class LoaderTest {
    record Run(int status, String output) {}

    static Run probe(Map<String, String> env, String... jvmArgs) throws Exception {
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(List.of(jvmArgs));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), LoaderProbe.class.getName()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("MYSQLLEADER_LIB");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return new Run(p.exitValue(), out);
    }

    /** The library on the class path (target/classes/linux-x86-64), where the jar has it too. */
    static Path bundled() throws Exception {
        return Path.of(LoaderTest.class.getClassLoader().getResource("linux-x86-64/libmysqlleader.so").toURI());
    }

    @Test
    void byDefaultTheCopyOnTheClassPathLoads() throws Exception {
        Run r = probe(Map.of());
        assertEquals(0, r.status(), r.output());
        assertTrue(r.output().contains("version " + Lib.VERSION), r.output());
        // JNA extracts it from the class path (a jar) or maps it in place (a directory).
        String onClassPath = bundled().toString();
        assertTrue(r.output().lines().anyMatch(l -> l.startsWith("mapped ") && (l.contains(onClassPath) || l.contains("jna"))), r.output());
    }

    @Test
    void thePropertyAndTheEnvironmentNameAnotherFile(@TempDir Path dir) throws Exception {
        Path copy = Files.copy(bundled(), dir.resolve("libmysqlleader.so"));
        Run byProperty = probe(Map.of(), "-Dmysqlleader.library.path=" + copy);
        assertEquals(0, byProperty.status(), byProperty.output());
        assertTrue(byProperty.output().contains("mapped " + copy), byProperty.output());

        Run byEnv = probe(Map.of("MYSQLLEADER_LIB", copy.toString()));
        assertEquals(0, byEnv.status(), byEnv.output());
        assertTrue(byEnv.output().contains("mapped " + copy), byEnv.output());

        Run missing = probe(Map.of(), "-Dmysqlleader.library.path=" + dir.resolve("nothing-here.so"));
        assertNotEquals(0, missing.status());
        assertTrue(missing.output().contains("nothing-here.so"), missing.output());
    }
}
