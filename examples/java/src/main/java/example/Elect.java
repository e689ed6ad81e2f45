package example;

import io.mysqlleader.Client;
import io.mysqlleader.Elector;
import io.mysqlleader.NotLeaderException;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;

/**
 * Elects a leader for the service "example", then writes one row as leader, fenced by its term
 * on the application's own JDBC connection (a HikariCP connection works the same way).
 *
 * Environment: MYSQLLEADER_URL (mysql://user:pass@host:port/db) for mysqlleader, and
 * MYSQLLEADER_JDBC_URL (jdbc:mariadb://host:port/db?user=...&password=...) for the writes.
 * Exits 0 after the fenced write committed, 1 when this node did not lead within 30 s.
 *
 * The election schema is installed once per database by an operator, before any copy of the
 * program runs: {@code mysqlleader migrate} (the CLI). The application's account
 * ({@code mysqlleader grant ACCOUNT --role app}) may not install it, so the program does not
 * migrate, except with {@code --migrate}, for a development database whose account may
 * (scripts/test-java.sh uses that).
 */
public final class Elect {
    public static void main(String[] args) throws Exception {
        boolean migrate = args.length == 1 && args[0].equals("--migrate");
        String url = System.getenv("MYSQLLEADER_URL");
        if (url == null || args.length > (migrate ? 1 : 0)) {
            System.err.println("usage: MYSQLLEADER_URL=mysql://user:pass@host:port/db "
                    + "MYSQLLEADER_JDBC_URL=jdbc:mariadb://... java example.Elect [--migrate]");
            System.exit(2);
        }
        try (Client client = Client.connect(url)) {
            // The election schema: installed by the operator (`mysqlleader migrate`); here only
            // with --migrate (a no-op when the schema is current).
            if (migrate) {
                client.migrate();
            }

            try (Elector elector = Elector.builder(client, "example")
                    .lease(Duration.ofSeconds(5))
                    .resignOnShutdown(true) // SIGTERM: hand over at once instead of after the lease
                    .listener(e -> System.out.println("event: " + e.kind() + " term " + e.term()))
                    .build();
                 Connection conn = DriverManager.getConnection(System.getenv("MYSQLLEADER_JDBC_URL"))) {

                if (!elector.awaitLeadership(Duration.ofSeconds(30))) {
                    System.err.println("not leading: " + elector.lastCallError());
                    System.exit(1);
                }
                try (Statement st = conn.createStatement()) { // DDL outside the fenced transaction
                    st.execute("CREATE TABLE IF NOT EXISTS example_log (term BIGINT UNSIGNED PRIMARY KEY, node VARCHAR(128))");
                }
                conn.setAutoCommit(false);
                try {
                    long term = elector.fence(conn); // CALL assert_leader(service, node, term)
                    try (PreparedStatement st = conn.prepareStatement("REPLACE INTO example_log (term, node) VALUES (?, ?)")) {
                        st.setLong(1, term);
                        st.setString(2, elector.nodeId());
                        st.executeUpdate();
                    }
                    conn.commit(); // no other node's takeover commits before this
                    System.out.println(elector.nodeId() + " wrote as leader of term " + term);
                } catch (NotLeaderException e) {
                    conn.rollback(); // the server rolled it back already; nothing was written
                    System.err.println("not the leader any more: " + e.getMessage());
                    System.exit(1);
                }
            } // close(): resigns, so another node takes over at once
        }
    }
}
