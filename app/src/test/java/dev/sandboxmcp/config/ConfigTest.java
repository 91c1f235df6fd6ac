package dev.sandboxmcp.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigTest {

    static final String TOKEN = "t".repeat(Config.MIN_TOKEN_LENGTH);

    @TempDir
    Path workspace;

    Map<String, String> env(String... pairs) {
        Map<String, String> env = new HashMap<>(Map.of("MCP_WORKSPACE", workspace.toString(), "MCP_AUTH_TOKEN", TOKEN));
        for (int i = 0; i < pairs.length; i += 2) {
            if (pairs[i + 1] == null) {
                env.remove(pairs[i]);
            } else {
                env.put(pairs[i], pairs[i + 1]);
            }
        }
        return env;
    }

    @Test
    void runnerModeNeedsItsSocketPath() {
        assertThatThrownBy(() -> RunnerConfig.fromEnvironment(Map.of())).isInstanceOf(ConfigException.class)
                .hasMessageContaining("MCP_RUNNER_SOCKET");
    }

    @Test
    void defaultsMatchTheDesign() throws Exception {
        Config config = Config.fromEnvironment(env());
        assertThat(config.basePath()).isEqualTo("/mcp-sandbox");
        assertThat(config.path("/mcp")).isEqualTo("/mcp-sandbox/mcp");
        assertThat(config.host()).isEqualTo("127.0.0.1");
        assertThat(config.limits()).isEqualTo(Limits.defaults());
        assertThat(config.limits().defaultTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(config.limits().maxTimeout()).isEqualTo(Duration.ofSeconds(120));
        assertThat(config.limits().outputCapBytes()).isEqualTo(256 * 1024);
        assertThat(config.limits().fileMaxBytes()).isEqualTo(1024 * 1024);
        assertThat(config.allowedOrigins()).isEmpty();
    }

    @Test
    void tokenLengthHoldsAtTheEdge() throws Exception {
        assertThat(Config.fromEnvironment(env("MCP_AUTH_TOKEN", "a".repeat(32))).tokenDigest())
                .isEqualTo(TokenDigest.of("a".repeat(32)));
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_AUTH_TOKEN", "a".repeat(31))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("31 characters");
    }

    @Test
    void tokenMustBePrintableWithoutSpaces() {
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_AUTH_TOKEN", "a".repeat(20) + " " + "b".repeat(20))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("printable");
    }

    @Test
    void tokenComesFromAFileWithTrailingNewlineStripped() throws Exception {
        Path file = Files.writeString(workspace.resolve("secret"), TOKEN + "\n");
        Config config = Config.fromEnvironment(env("MCP_AUTH_TOKEN", null, "MCP_AUTH_TOKEN_FILE", file.toString()));
        assertThat(config.tokenDigest().matches(TOKEN)).isTrue();
        assertThat(config.tokenDigest().matches(TOKEN + "\n")).isFalse();
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_AUTH_TOKEN_FILE", file.toString())))
                .hasMessageContaining("only one");
    }

    @Test
    void tokenCanBeGivenAsItsDigestAlone() throws Exception {
        String hex = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(TOKEN.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        Config config = Config.fromEnvironment(env("MCP_AUTH_TOKEN", null, "MCP_AUTH_TOKEN_SHA256", hex.toUpperCase()));
        assertThat(config.tokenDigest().matches(TOKEN)).isTrue();
        assertThat(config.tokenDigest().matches(hex)).isFalse();
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_AUTH_TOKEN", null, "MCP_AUTH_TOKEN_SHA256", "abc")))
                .hasMessageContaining("64 hexadecimal");
    }

    @Test
    void tokenNeverAppearsInToString() throws Exception {
        assertThat(Config.fromEnvironment(env()).toString()).doesNotContain(TOKEN).contains("digest only");
    }

    @Test
    void addressForms() throws Exception {
        assertThat(Config.fromEnvironment(env("MCP_ADDR", ":8000")).host()).isEqualTo("0.0.0.0");
        assertThat(Config.fromEnvironment(env("MCP_ADDR", ":8000")).port()).isEqualTo(8000);
        assertThat(Config.fromEnvironment(env("MCP_ADDR", "[::1]:9")).host()).isEqualTo("::1");
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_ADDR", "8000"))).hasMessageContaining("MCP_ADDR");
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_ADDR", ":70000"))).hasMessageContaining("65535");
    }

    @Test
    void basePathIsNormalised() throws Exception {
        assertThat(Config.fromEnvironment(env("MCP_BASE_PATH", "/tools/sandbox/")).basePath()).isEqualTo("/tools/sandbox");
        assertThat(Config.fromEnvironment(env("MCP_BASE_PATH", "sandbox")).basePath()).isEqualTo("/sandbox");
        assertThat(Config.fromEnvironment(env("MCP_BASE_PATH", "/")).basePath()).isEmpty();
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_BASE_PATH", "/a?b"))).hasMessageContaining("MCP_BASE_PATH");
    }

    @Test
    void limitsAreReadAndCheckedAtTheirEdges() throws Exception {
        Config config = Config.fromEnvironment(env("MCP_COMMAND_TIMEOUT_SECONDS", "10",
                "MCP_COMMAND_TIMEOUT_MAX_SECONDS", "10", "MCP_OUTPUT_LIMIT_BYTES", "1024", "MCP_MAX_CONCURRENT_COMMANDS", "1"));
        assertThat(config.limits().defaultTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(config.limits().outputCapBytes()).isEqualTo(1024);
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_COMMAND_TIMEOUT_SECONDS", "11",
                "MCP_COMMAND_TIMEOUT_MAX_SECONDS", "10"))).hasMessage("MCP_COMMAND_TIMEOUT_SECONDS must be a whole number "
                + "from 1 to 10 (at most MCP_COMMAND_TIMEOUT_MAX_SECONDS), got '11'");
        assertThat(Config.fromEnvironment(env("MCP_COMMAND_TIMEOUT_MAX_SECONDS", "10")).limits().defaultTimeout())
                .as("an unset default under a smaller maximum takes the maximum").isEqualTo(Duration.ofSeconds(10));
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_OUTPUT_LIMIT_BYTES", "1023")))
                .hasMessageContaining("MCP_OUTPUT_LIMIT_BYTES");
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_MAX_CONCURRENT_COMMANDS", "0")))
                .hasMessageContaining("from 1");
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_KEEPALIVE_SECONDS", "20s")))
                .hasMessageContaining("whole number");
    }

    @Test
    void connectionCapHoldsAtItsEdges() throws Exception {
        assertThat(Config.fromEnvironment(env()).limits().maxConnections()).isEqualTo(1024);
        assertThat(Config.fromEnvironment(env("MCP_MAX_CONNECTIONS", "1")).limits().maxConnections()).isEqualTo(1);
        assertThat(Config.fromEnvironment(env("MCP_MAX_CONNECTIONS", "65536")).limits().maxConnections()).isEqualTo(65536);
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_MAX_CONNECTIONS", "0")))
                .hasMessage("MCP_MAX_CONNECTIONS must be a whole number from 1 to 65536, got '0'");
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_MAX_CONNECTIONS", "65537")))
                .hasMessageContaining("MCP_MAX_CONNECTIONS");
    }

    @Test
    void callBudgetAndOutputViewHoldAtTheirEdges() throws Exception {
        assertThat(Config.fromEnvironment(env()).limits().callBudget()).isEqualTo(Duration.ofSeconds(50));
        assertThat(Config.fromEnvironment(env()).limits().outputViewBytes()).isEqualTo(16 * 1024);
        assertThat(Config.fromEnvironment(env("MCP_CALL_BUDGET_SECONDS", "1")).limits().callBudget())
                .isEqualTo(Duration.ofSeconds(1));
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_CALL_BUDGET_SECONDS", "0")))
                .hasMessage("MCP_CALL_BUDGET_SECONDS must be a whole number from 1 to 3600, got '0'");
        assertThat(Config.fromEnvironment(env("MCP_OUTPUT_VIEW_BYTES", "1024")).limits().outputViewBytes()).isEqualTo(1024);
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_OUTPUT_VIEW_BYTES", "1023")))
                .hasMessageContaining("MCP_OUTPUT_VIEW_BYTES");
        assertThat(Config.fromEnvironment(env("MCP_OUTPUT_LIMIT_BYTES", "4096", "MCP_OUTPUT_VIEW_BYTES", "4096")).limits()
                .outputViewBytes()).isEqualTo(4096);
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_OUTPUT_LIMIT_BYTES", "4096", "MCP_OUTPUT_VIEW_BYTES", "4097")))
                .hasMessage("MCP_OUTPUT_VIEW_BYTES must be a whole number from 1024 to 4096 (at most MCP_OUTPUT_LIMIT_BYTES), "
                        + "got '4097'");
        assertThat(Config.fromEnvironment(env("MCP_OUTPUT_LIMIT_BYTES", "4096")).limits().outputViewBytes()).isEqualTo(4096);
    }

    @Test
    void idleTimeoutHoldsAtItsEdges() throws Exception {
        assertThat(Config.fromEnvironment(env()).limits().idleTimeout()).isEqualTo(Duration.ofSeconds(120));
        assertThat(Config.fromEnvironment(env("MCP_IDLE_TIMEOUT_SECONDS", "1")).limits().idleTimeout())
                .isEqualTo(Duration.ofSeconds(1));
        assertThat(Config.fromEnvironment(env("MCP_IDLE_TIMEOUT_SECONDS", "3600")).limits().idleTimeout())
                .isEqualTo(Duration.ofSeconds(3600));
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_IDLE_TIMEOUT_SECONDS", "0")))
                .hasMessage("MCP_IDLE_TIMEOUT_SECONDS must be a whole number from 1 to 3600, got '0'");
        assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_IDLE_TIMEOUT_SECONDS", "3601")))
                .hasMessageContaining("MCP_IDLE_TIMEOUT_SECONDS");
    }

    @Test
    void trustedProxiesAreLoopbackUnlessSet() throws Exception {
        TrustedProxies proxies = Config.fromEnvironment(env()).trustedProxies();
        assertThat(proxies.contains(InetAddress.ofLiteral("127.0.0.1"))).isTrue();
        assertThat(proxies.contains(InetAddress.ofLiteral("127.255.255.255"))).isTrue();
        assertThat(proxies.contains(InetAddress.ofLiteral("::1"))).isTrue();
        assertThat(proxies.contains(InetAddress.ofLiteral("128.0.0.1"))).isFalse();
        assertThat(proxies.contains(InetAddress.ofLiteral("172.17.0.1"))).isFalse();
        assertThat(proxies.contains(InetAddress.ofLiteral("::2"))).isFalse();
        TrustedProxies none = Config.fromEnvironment(env("MCP_TRUSTED_PROXIES", "none")).trustedProxies();
        assertThat(none.contains(InetAddress.ofLiteral("127.0.0.1"))).isFalse();
    }

    @Test
    void trustedProxyBlocksHoldAtTheirEdges() throws Exception {
        TrustedProxies proxies = Config.fromEnvironment(env("MCP_TRUSTED_PROXIES",
                " 172.16.0.0/12 ,192.0.2.7,, 2001:db8::/33, ::ffff:198.51.100.9,")).trustedProxies();
        assertThat(proxies.contains(InetAddress.ofLiteral("172.16.0.0"))).isTrue();
        assertThat(proxies.contains(InetAddress.ofLiteral("172.31.255.255"))).isTrue();
        assertThat(proxies.contains(InetAddress.ofLiteral("172.32.0.0"))).isFalse();
        assertThat(proxies.contains(InetAddress.ofLiteral("172.15.255.255"))).isFalse();
        assertThat(proxies.contains(InetAddress.ofLiteral("192.0.2.7"))).isTrue();
        assertThat(proxies.contains(InetAddress.ofLiteral("192.0.2.8"))).isFalse();
        assertThat(proxies.contains(InetAddress.ofLiteral("2001:db8:7fff:ffff::1"))).isTrue();
        assertThat(proxies.contains(InetAddress.ofLiteral("2001:db8:8000::"))).isFalse();
        assertThat(proxies.contains(InetAddress.ofLiteral("198.51.100.9"))).as("IPv4-mapped is IPv4").isTrue();
        assertThat(proxies.contains(InetAddress.ofLiteral("127.0.0.1"))).as("the list replaces the default").isFalse();
        assertThat(Config.fromEnvironment(env("MCP_TRUSTED_PROXIES", "0.0.0.0/0")).trustedProxies()
                .contains(InetAddress.ofLiteral("203.0.113.9"))).isTrue();
        assertThat(Config.fromEnvironment(env("MCP_TRUSTED_PROXIES", "10.1.2.3/32")).trustedProxies()
                .contains(InetAddress.ofLiteral("10.1.2.4"))).isFalse();
        assertThat(Config.fromEnvironment(env("MCP_TRUSTED_PROXIES", "::/128")).trustedProxies()
                .contains(InetAddress.ofLiteral("::"))).isTrue();
    }

    @Test
    void trustedProxiesRefuseAnythingButAddressesAndBlocksInOneLine() {
        for (String bad : new String[] {"10.0.0.0/33", "::/129", "proxy.example", "10.0.0.0/", "10.0.0.0/-1",
                "10.0.0", "1.2.3.4.5", "fe80::1%eth0", "10.0.0.0/8 10.1.0.0/16", "*"}) {
            assertThatThrownBy(() -> Config.fromEnvironment(env("MCP_TRUSTED_PROXIES", bad)))
                    .as(bad).isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith("MCP_TRUSTED_PROXIES must be comma-separated IP addresses or CIDR blocks")
                    .hasMessageNotContaining("\n");
        }
    }

    @Test
    void originsAreAList() throws Exception {
        assertThat(Config.fromEnvironment(env("MCP_ALLOWED_ORIGINS", "https://a.example, https://b.example")).allowedOrigins())
                .containsExactly("https://a.example", "https://b.example");
    }
}
