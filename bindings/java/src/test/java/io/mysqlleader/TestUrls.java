package io.mysqlleader;

import java.net.URI;

/** URL helpers of the tests. */
final class TestUrls {
    private TestUrls() {}

    /** {@code url} with its user's password replaced by {@code password}. */
    static String withPassword(String url, String password) {
        URI u = URI.create(url);
        String user = u.getRawUserInfo().split(":", 2)[0];
        return u.getScheme() + "://" + user + ":" + password + "@" + u.getHost() + ":" + u.getPort() + u.getRawPath()
                + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
    }
}
