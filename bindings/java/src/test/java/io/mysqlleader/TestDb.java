package io.mysqlleader;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A database of the test's own on the server of MYSQLLEADER_TEST_URL (mysql://user:pass@host:port/db,
 * set by scripts/testdb.sh), created through JDBC and migrated with {@link Client#migrate()}.
 */
final class TestDb implements AutoCloseable {
    final String name;
    /** The mysqlleader URL of this database. */
    final String url;
    /** The MariaDB Connector/J URL of this database. */
    final String jdbcUrl;

    private TestDb(String name, boolean migrate) throws SQLException {
        this.name = name;
        this.url = urlWithDb(baseUrl(), name);
        this.jdbcUrl = jdbc(url);
        try (Connection c = DriverManager.getConnection(jdbc(baseUrl())); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE `" + name + "`");
        }
        if (migrate) {
            try (Client client = Client.connect(url)) {
                client.migrate();
            }
        }
    }

    static TestDb migrated(String tag) throws SQLException {
        return new TestDb(dbName(tag), true);
    }

    static TestDb empty(String tag) throws SQLException {
        return new TestDb(dbName(tag), false);
    }

    private static String dbName(String tag) {
        return "mljava_" + tag + "_" + ProcessHandle.current().pid() + "_" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
    }

    static String baseUrl() {
        String url = System.getenv("MYSQLLEADER_TEST_URL");
        if (url == null || url.isEmpty()) {
            throw new IllegalStateException("MYSQLLEADER_TEST_URL is not set: run scripts/test-java.sh (it starts a throwaway server), "
                    + "or set it to mysql://user:pass@host:port/db of an account that may create databases");
        }
        return url;
    }

    static String urlWithDb(String base, String db) {
        URI u = URI.create(base);
        return u.getScheme() + "://" + u.getRawUserInfo() + "@" + u.getHost() + ":" + u.getPort() + "/" + db
                + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
    }

    /**
     * The JDBC URL of a mysql:// URL (user and password as properties; no TLS options): MariaDB
     * Connector/J's, or MySQL Connector/J's when MYSQLLEADER_TEST_KIND is mysql (scripts/testdb.sh
     * sets it for a MySQL server). The test servers offer no TLS, and MySQL's default
     * authentication (caching_sha2_password) then sends the password under the server's RSA
     * key, which MySQL Connector/J fetches only when allowed to.
     */
    static String jdbc(String mysqlUrl) {
        URI u = URI.create(mysqlUrl);
        String[] userPass = u.getUserInfo().split(":", 2);
        boolean mysql = "mysql".equals(System.getenv("MYSQLLEADER_TEST_KIND"));
        return (mysql ? "jdbc:mysql://" : "jdbc:mariadb://") + u.getHost() + ":" + u.getPort() + u.getPath()
                + "?user=" + userPass[0] + (userPass.length > 1 ? "&password=" + userPass[1] : "")
                + (mysql ? "&allowPublicKeyRetrieval=true" : "");
    }

    Connection connection() throws SQLException {
        return DriverManager.getConnection(jdbcUrl);
    }

    /** Runs statements on a fresh autocommit connection. */
    void exec(String... statements) throws SQLException {
        try (Connection c = connection(); Statement s = c.createStatement()) {
            for (String sql : statements) s.execute(sql);
        }
    }

    @Override
    public void close() throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbc(baseUrl())); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS `" + name + "`");
        }
    }
}
