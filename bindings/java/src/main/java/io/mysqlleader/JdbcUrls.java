package io.mysqlleader;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Turns a {@code jdbc:mysql:} or {@code jdbc:mariadb:} URL (with its user name and password)
 * into the library's {@code mysql://user:password@host:port/database}, user name and password
 * percent-encoded. One host only ({@code jdbc:mysql://host[:port]/db?params}, the port 3306 when
 * not given); the user name and password come from the arguments, else from the URL's
 * {@code user} and {@code password} parameters (or its {@code user:password@} part). Of the
 * parameters, TLS is carried over ({@code sslMode} of MySQL Connector/J: DISABLED, REQUIRED,
 * VERIFY_CA, VERIFY_IDENTITY; of MariaDB Connector/J: disable, trust, verify-ca, verify-full;
 * {@code useSSL=true|false}); the other driver parameters have no meaning for the library and are
 * dropped. Anything more (a trust store, a load-balanced URL): give the library's URL itself
 * ({@link Client#connect(String)}; the Spring Boot starter's {@code mysqlleader.url}).
 * {@link Client#connectJdbc(String, String, String)} connects with it.
 */
public final class JdbcUrls {
    private JdbcUrls() {}

    /**
     * The mysqlleader URL of {@code jdbcUrl}.
     *
     * @throws IllegalArgumentException not a single-host {@code jdbc:mysql:} or {@code jdbc:mariadb:} URL
     */
    public static String toMysqlLeaderUrl(String jdbcUrl, String username, String password) {
        if (jdbcUrl == null) throw new IllegalArgumentException("no JDBC URL");
        String rest;
        String lower = jdbcUrl.toLowerCase(Locale.ROOT);
        if (lower.startsWith("jdbc:mysql://")) {
            rest = jdbcUrl.substring("jdbc:mysql://".length());
        } else if (lower.startsWith("jdbc:mariadb://")) {
            rest = jdbcUrl.substring("jdbc:mariadb://".length());
        } else {
            throw new IllegalArgumentException("not a single-host jdbc:mysql:// or jdbc:mariadb:// URL: " + redact(jdbcUrl)
                    + " (give a mysql:// URL instead)");
        }
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        String authority = rest;
        String db = "";
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            authority = rest.substring(0, slash);
            db = rest.substring(slash + 1);
        }
        String urlUser = null, urlPassword = null;
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = userInfo.indexOf(':');
            urlUser = decode(colon >= 0 ? userInfo.substring(0, colon) : userInfo);
            if (colon >= 0) urlPassword = decode(userInfo.substring(colon + 1));
        }
        if (authority.isEmpty() || authority.contains(",") || authority.contains("(")) {
            throw new IllegalArgumentException("not a single-host JDBC URL: " + redact(jdbcUrl) + " (give a mysql:// URL instead)");
        }
        String host = authority;
        String port = "3306";
        int portColon = authority.startsWith("[") ? authority.indexOf(':', authority.indexOf(']')) : authority.lastIndexOf(':');
        if (portColon >= 0) {
            host = authority.substring(0, portColon);
            port = authority.substring(portColon + 1);
            if (port.isEmpty()) port = "3306";
        }
        Map<String, String> params = new LinkedHashMap<>();
        if (query != null) {
            for (String pair : query.split("&")) {
                if (pair.isEmpty()) continue;
                int eq = pair.indexOf('=');
                params.put(decode(eq >= 0 ? pair.substring(0, eq) : pair).toLowerCase(Locale.ROOT), eq >= 0 ? decode(pair.substring(eq + 1)) : "");
            }
        }
        String user = username != null && !username.isEmpty() ? username : params.getOrDefault("user", urlUser);
        String pass = password != null && !password.isEmpty() ? password : params.getOrDefault("password", urlPassword);
        if (user == null || user.isEmpty()) {
            throw new IllegalArgumentException("no user name: give the account (the user argument, spring.datasource.username, or the URL's user parameter)");
        }
        String sslMode = sslMode(params);
        return "mysql://" + encode(user) + (pass == null || pass.isEmpty() ? "" : ":" + encode(pass)) + "@" + host + ":" + port
                + "/" + db + (sslMode == null ? "" : "?ssl-mode=" + sslMode);
    }

    /** The library's ssl-mode for the driver's TLS parameters, or null for none given. */
    private static String sslMode(Map<String, String> params) {
        String mode = params.get("sslmode");
        if (mode != null) {
            switch (mode.toLowerCase(Locale.ROOT).replace('_', '-')) {
                case "disabled", "disable" -> { return "DISABLED"; }
                case "required", "trust", "preferred" -> { return "REQUIRED"; }
                case "verify-ca" -> { return "VERIFY_CA"; }
                case "verify-identity", "verify-full" -> { return "VERIFY_IDENTITY"; }
                default -> throw new IllegalArgumentException("sslMode=" + mode + " of the JDBC URL has no counterpart (give a mysql:// URL instead)");
            }
        }
        String useSsl = params.containsKey("usessl") ? params.get("usessl") : params.get("usesslconnection");
        if (useSsl != null) return Boolean.parseBoolean(useSsl) ? "REQUIRED" : "DISABLED";
        return null;
    }

    /** Percent-encodes everything but RFC 3986's unreserved characters (UTF-8), as a user name or password of the library's URL. */
    public static String encode(String s) {
        StringBuilder out = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16))).append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
        }
        return out.toString();
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** The URL without its query and user info (where a password may stand). */
    private static String redact(String url) {
        String s = url.replaceAll("\\?.*", "");
        return s.replaceAll("//[^/@]*@", "//");
    }
}
