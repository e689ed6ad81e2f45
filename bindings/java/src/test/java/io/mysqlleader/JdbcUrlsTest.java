package io.mysqlleader;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The library's URL derived from a JDBC URL (Client.connectJdbc, the starter's spring.datasource.*), without a server. */
class JdbcUrlsTest {
    @Test
    void mysqlAndMariadbUrlsWithPercentEncodedCredentials() {
        assertEquals("mysql://app:secret@db.example:3307/billing",
                JdbcUrls.toMysqlLeaderUrl("jdbc:mysql://db.example:3307/billing", "app", "secret"));
        assertEquals("mysql://app:secret@db:3306/billing",
                JdbcUrls.toMysqlLeaderUrl("jdbc:mariadb://db/billing?useUnicode=true&characterEncoding=utf8", "app", "secret"));
        assertEquals("mysql://a%40b%3Ac:p%40ss%3Aw%2Frd%20%25%3F%23%26%2B%C3%A9@10.0.0.5:3306/db",
                JdbcUrls.toMysqlLeaderUrl("jdbc:mysql://10.0.0.5:3306/db", "a@b:c", "p@ss:w/rd %?#&+é"));
        assertEquals("mysql://app@[::1]:3306/db", JdbcUrls.toMysqlLeaderUrl("jdbc:mariadb://[::1]:3306/db", "app", null));
    }

    @Test
    void credentialsFromTheUrlWhenNotGivenApart() {
        assertEquals("mysql://u%2B1:p%26w@h:3306/d", JdbcUrls.toMysqlLeaderUrl("jdbc:mysql://h/d?user=u%2B1&password=p%26w", null, ""));
        assertEquals("mysql://u:p@h:3306/d", JdbcUrls.toMysqlLeaderUrl("jdbc:mariadb://u:p@h/d", null, null));
        // spring.datasource.username and password win over the URL's
        assertEquals("mysql://x:y@h:3306/d", JdbcUrls.toMysqlLeaderUrl("jdbc:mysql://h/d?user=u&password=p", "x", "y"));
    }

    @Test
    void tlsParametersCarryOverAndTheOthersAreDropped() {
        assertEquals("mysql://u:p@h:3306/d?ssl-mode=VERIFY_IDENTITY",
                JdbcUrls.toMysqlLeaderUrl("jdbc:mysql://h/d?sslMode=VERIFY_IDENTITY&serverTimezone=UTC", "u", "p"));
        assertEquals("mysql://u:p@h:3306/d?ssl-mode=VERIFY_CA", JdbcUrls.toMysqlLeaderUrl("jdbc:mariadb://h/d?sslMode=verify-ca", "u", "p"));
        assertEquals("mysql://u:p@h:3306/d?ssl-mode=REQUIRED", JdbcUrls.toMysqlLeaderUrl("jdbc:mariadb://h/d?sslMode=trust", "u", "p"));
        assertEquals("mysql://u:p@h:3306/d?ssl-mode=DISABLED", JdbcUrls.toMysqlLeaderUrl("jdbc:mysql://h/d?useSSL=false", "u", "p"));
        assertEquals("mysql://u:p@h:3306/d?ssl-mode=DISABLED", JdbcUrls.toMysqlLeaderUrl("jdbc:mysql://h/d?sslMode=DISABLED", "u", "p"));
    }

    @Test
    void otherUrlsAreRefusedWithoutThePassword() {
        for (String url : new String[] {"jdbc:postgresql://h/d", "jdbc:mysql:loadbalance://h1,h2/d", "jdbc:mysql://h1,h2/d",
                "jdbc:mariadb:replication://h1,h2/d", "jdbc:h2:mem:x"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JdbcUrls.toMysqlLeaderUrl(url, "u", "pw-secret"));
            assertTrue(e.getMessage().contains("mysql:// URL"), e.getMessage());
            assertTrue(!e.getMessage().contains("pw-secret"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> JdbcUrls.toMysqlLeaderUrl("jdbc:mysql://h/d", null, null));
    }

    /** Client.connectJdbc with the JDBC URL the tests' own JDBC connections use (the account in its parameters): it elects. */
    @Test
    void aClientFromTheApplicationsJdbcUrlElects() throws Exception {
        try (TestDb db = TestDb.migrated("jdbcurl"); Client client = Client.connectJdbc(db.jdbcUrl, null, null)) {
            CampaignResult won = client.campaign("jdbc", "n1", java.time.Duration.ofSeconds(10));
            assertTrue(won.isLeader(), won.toString());
        }
        InvalidArgumentException bad = assertThrows(InvalidArgumentException.class,
                () -> Client.connectJdbc("jdbc:postgresql://h/d", "u", "pw-secret"));
        assertEquals("url", bad.parameter());
        assertTrue(!bad.getMessage().contains("pw-secret"), bad.getMessage());
    }
}
