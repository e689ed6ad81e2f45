package io.mysqlleader;

import java.time.Duration;

/**
 * A child JVM of {@link MultiProcessTest}: one elector with a shutdown hook that resigns on
 * SIGTERM; prints one line per event ({@code STARTED_LEADING 3}, ...) and {@code READY} once built.
 *
 * <p>Arguments: URL SERVICE NODE LEASE_MS.
 */
public final class ElectorNode {
    public static void main(String[] args) throws Exception {
        Client client = Client.connect(args[0]);
        Elector elector = Elector.builder(client, args[1])
                .nodeId(args[2])
                .lease(Duration.ofMillis(Long.parseLong(args[3])))
                .resignOnShutdown(true)
                .listener(e -> say(e.kind() + " " + e.term() + " " + e.reason()))
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> say("SHUTDOWN")));
        say("READY");
        Thread.sleep(Long.MAX_VALUE); // until killed or terminated
    }

    /** Each line ends with " @" and System.nanoTime(): CLOCK_MONOTONIC on Linux, comparable across processes. */
    private static synchronized void say(String line) {
        System.out.println(line + " @" + System.nanoTime());
        System.out.flush();
    }
}
