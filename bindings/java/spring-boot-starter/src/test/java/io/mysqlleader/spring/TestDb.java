package io.mysqlleader.spring;

import io.mysqlleader.Client;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A database of the test's own on the server of MYSQLLEADER_TEST_URL (mysql://user:pass@host:port/db,
 * set by scripts/testdb.sh), created through JDBC (MariaDB Connector/J, or MySQL Connector/J when
 * MYSQLLEADER_TEST_KIND is mysql) and migrated with {@link Client#migrate()}.
 */
final class TestDb implements AutoCloseable {
    final String name;
    /** The mysqlleader URL of this database. */
    final String url;
    final String host;
    final int port;

    TestDb(String tag) throws SQLException {
        this.name = "mlspring_" + tag + "_" + ProcessHandle.current().pid() + "_" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
        URI u = URI.create(baseUrl());
        this.host = u.getHost();
        this.port = u.getPort() < 0 ? 3306 : u.getPort();
        this.url = u.getScheme() + "://" + u.getRawUserInfo() + "@" + host + ":" + port + "/" + name
                + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
        exec("CREATE DATABASE `" + name + "`");
        try (Client client = Client.connect(url)) {
            client.migrate();
        }
    }

    static String baseUrl() {
        String url = System.getenv("MYSQLLEADER_TEST_URL");
        if (url == null || url.isEmpty()) {
            throw new IllegalStateException("MYSQLLEADER_TEST_URL is not set: run scripts/test-java.sh (it starts a throwaway server), "
                    + "or set it to mysql://user:pass@host:port/db of an account that may create databases and users");
        }
        return url;
    }

    static boolean mysql() {
        return "mysql".equals(System.getenv("MYSQLLEADER_TEST_KIND"));
    }

    /** The JDBC URL scheme of the server's kind: jdbc:mysql: for MySQL, jdbc:mariadb: for MariaDB. */
    String jdbcUrl(String params) {
        return (mysql() ? "jdbc:mysql://" : "jdbc:mariadb://") + host + ":" + port + "/" + name
                + (params.isEmpty() ? "" : "?" + params);
    }

    /** The JDBC URL of this database for the test account: MySQL's default authentication without TLS needs the server's RSA key. */
    String jdbcUrl() {
        return jdbcUrl(mysql() ? "allowPublicKeyRetrieval=true" : "");
    }

    /** The test account's user name (MYSQLLEADER_TEST_URL's, decoded). */
    static String user() {
        return URLDecoder.decode(URI.create(baseUrl()).getRawUserInfo().split(":", 2)[0], StandardCharsets.UTF_8);
    }

    /** The test account's password (MYSQLLEADER_TEST_URL's, decoded; empty when it has none). */
    static String password() {
        String[] userPass = URI.create(baseUrl()).getRawUserInfo().split(":", 2);
        return userPass.length > 1 ? URLDecoder.decode(userPass[1], StandardCharsets.UTF_8) : "";
    }

    /** A JDBC connection to this database as the test account. */
    Connection connection() throws SQLException {
        return DriverManager.getConnection(jdbcUrl(), user(), password());
    }

    /** Runs statements as the test account (MYSQLLEADER_TEST_URL's) on a fresh autocommit connection. */
    static void exec(String... statements) throws SQLException {
        URI u = URI.create(baseUrl());
        String[] userPass = u.getRawUserInfo().split(":", 2);
        String jdbc = (mysql() ? "jdbc:mysql://" : "jdbc:mariadb://") + u.getHost() + ":" + (u.getPort() < 0 ? 3306 : u.getPort()) + "/"
                + (mysql() ? "?allowPublicKeyRetrieval=true" : "");
        String user = URLDecoder.decode(userPass[0], StandardCharsets.UTF_8);
        String pass = userPass.length > 1 ? URLDecoder.decode(userPass[1], StandardCharsets.UTF_8) : "";
        try (Connection c = DriverManager.getConnection(jdbc, user, pass); Statement s = c.createStatement()) {
            for (String sql : statements) s.execute(sql);
        }
    }

    @Override
    public void close() throws SQLException {
        exec("DROP DATABASE IF EXISTS `" + name + "`");
    }
}
