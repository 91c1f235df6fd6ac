package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The egress configuration without Docker: the allow-list's validation (infra/proxy/egress-proxy.sh),
 * the override file's flags, and the Makefile laying it over the pair only when a list is set.
 */
class EgressConfigTest {

    static Commands.Result proxyScript(Map<String, String> env, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("bash", Repo.path("infra/proxy/egress-proxy.sh").toString()));
        command.addAll(List.of(args));
        return Commands.run(command, env, Repo.root(), 30);
    }

    @Test
    void theAllowListIsNormalizedAndAWildcardCoversTheNamesUnderIt() throws Exception {
        Commands.Result result = proxyScript(Map.of("SANDBOX_EGRESS_ALLOW", " Example.org ,*.Example.NET,git.example.com",
                "SANDBOX_EGRESS_ALLOW_PRIVATE", "example.org"), "--check");
        assertThat(result.exitCode()).as(result.output()).isZero();
        assertThat(result.output()).isEqualTo("allow: example.org .example.net git.example.com\nallow private: example.org\n");
    }

    @Test
    void entriesThatAnotherCoversAreDroppedSinceSquidRefusesOverlaps() throws Exception {
        Commands.Result result = proxyScript(Map.of("SANDBOX_EGRESS_ALLOW",
                "a.example.org,*.example.org,example.org,a.example.org,b.example,"
                        + "b.example,*.c.b.example,d.c.b.example,xb.example",
                "SANDBOX_EGRESS_ALLOW_PRIVATE", "lan.example.org,*.c.b.example,e.c.b.example"), "--check");
        assertThat(result.exitCode()).as(result.output()).isZero();
        assertThat(result.output()).isEqualTo("allow: .example.org b.example .c.b.example xb.example\n"
                + "allow private: lan.example.org .c.b.example\n");
        Commands.Result wider = proxyScript(Map.of("SANDBOX_EGRESS_ALLOW", "a.example.org",
                "SANDBOX_EGRESS_ALLOW_PRIVATE", "*.example.org"), "--check");
        assertThat(wider.exitCode()).isEqualTo(2);
        assertThat(wider.output()).contains("'*.example.org' is not in SANDBOX_EGRESS_ALLOW");
    }

    @Test
    void whatIsNotAHostNameIsRefusedNamingTheEntryAndNothingIsWritten(@TempDir Path run) throws Exception {
        Map<String, String> refused = Map.ofEntries(
                Map.entry("a.example,b c.example", "'b c.example' is not a host name"),
                Map.entry("a.example\nhttp_access allow all", "control character"),
                Map.entry("a.example,,b.example", "empty entry"),
                Map.entry("a.example,", "empty entry"),
                Map.entry("10.0.0.1", "is an IP address"),
                Map.entry("[::1]", "is an IP address"),
                Map.entry("fd00::1", "is an IP address"),
                Map.entry("example.org\"", "is not a host name"),
                Map.entry("^evil$", "is not a host name"),
                Map.entry("a.*", "is not a host name"),
                Map.entry("*", "is not a host name"),
                Map.entry("all -n", "is not a host name"),
                Map.entry("a..example", "is not a host name"),
                Map.entry("-a.example", "is not a host name"),
                Map.entry("a.example.123", "ends in a number"),
                Map.entry("a".repeat(64) + ".example", "is not a host name"),
                Map.entry("", "SANDBOX_EGRESS_ALLOW is empty"));
        for (Map.Entry<String, String> bad : refused.entrySet()) {
            // Without --check the script is the container's entrypoint: it must stop before writing squid.conf.
            Commands.Result result = proxyScript(Map.of("SANDBOX_EGRESS_ALLOW", bad.getKey(),
                    "EGRESS_RUN_DIR", run.toString()));
            assertThat(result.exitCode()).as("%s: %s", bad.getKey(), result.output()).isEqualTo(2);
            assertThat(result.output()).as(bad.getKey()).startsWith("egress-proxy: ").contains(bad.getValue());
        }
        Commands.Result notListed = proxyScript(Map.of("SANDBOX_EGRESS_ALLOW", "a.example",
                "SANDBOX_EGRESS_ALLOW_PRIVATE", "lan.example", "EGRESS_RUN_DIR", run.toString()));
        assertThat(notListed.exitCode()).isEqualTo(2);
        assertThat(notListed.output()).contains("'lan.example' is not in SANDBOX_EGRESS_ALLOW");
        Commands.Result badHost = proxyScript(Map.of("SANDBOX_EGRESS_ALLOW", "a.example",
                "SANDBOX_EGRESS_HOST_ADDRESSES", "10.0.0.1 all", "EGRESS_RUN_DIR", run.toString()));
        assertThat(badHost.exitCode()).isEqualTo(2);
        assertThat(badHost.output()).contains("'all' is not an IP address");
        try (var written = Files.list(run)) {
            assertThat(written).isEmpty();
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void theOverrideGivesTheRunnerOnlyTheInternalNetworkAndTheProxyItsLockdown() throws Exception {
        Map<String, Object> compose = new Yaml().load(Files.readString(Repo.path("infra/compose/compose.egress.yaml")));
        Map<String, Object> services = InfraFilesTest.map(compose, "services");
        Map<String, Object> runner = InfraFilesTest.map(services, "runner");
        assertThat(runner.get("network_mode")).isEqualTo("${SANDBOX_CONTAINER:-sandbox-mcp}-egress-internal");
        assertThat(runner).doesNotContainKeys("networks", "ports", "volumes", "cap_add", "user", "read_only");
        assertThat(InfraFilesTest.map(runner, "environment"))
                .containsOnlyKeys("SANDBOX_EGRESS_ALLOW", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                "http_proxy", "https_proxy", "no_proxy");
        Map<String, Object> proxy = InfraFilesTest.map(services, "egress-proxy");
        assertThat(proxy).containsEntry("read_only", true).containsEntry("init", true).containsEntry("user", "13:13")
                .containsEntry("pids_limit", 32).containsEntry("mem_limit", "128m")
                .doesNotContainKeys("privileged", "cap_add", "ports", "network_mode");
        // One volume, the record of allowed lines; the runner mounts none of this file's (above).
        assertThat((List<String>) proxy.get("volumes")).containsExactly("egress-log:/var/log/squid");
        assertThat(InfraFilesTest.map(InfraFilesTest.map(compose, "volumes"), "egress-log")).containsEntry("external", true)
                .containsEntry("name", "${SANDBOX_EGRESS_LOG_VOLUME:-sandbox-mcp-egress-log}");
        assertThat((List<String>) proxy.get("cap_drop")).containsExactly("ALL");
        assertThat((List<String>) proxy.get("security_opt")).containsExactly("no-new-privileges:true");
        assertThat((List<String>) proxy.get("networks")).containsExactly("egress-internal", "egress-outside");
        Map<String, Object> internal = InfraFilesTest.map(InfraFilesTest.map(compose, "networks"), "egress-internal");
        assertThat(internal).containsEntry("internal", true)
                .containsEntry("name", "${SANDBOX_CONTAINER:-sandbox-mcp}-egress-internal");
        assertThat(InfraFilesTest.map(internal, "driver_opts")).containsEntry("com.docker.network.bridge.inhibit_ipv4", "true");
    }

    @Test
    void makeUpLaysTheProxyOverThePairOnlyWhenTheAllowListIsSet() throws Exception {
        Commands.Result off = Commands.run(List.of("make", "-n", "up", "SANDBOX_EGRESS_ALLOW="), Map.of(), Repo.root(), 60);
        assertThat(off.exitCode()).as(off.output()).isZero();
        assertThat(off.output()).contains("-f infra/compose/compose.yaml -f infra/compose/protect-git.generated.yaml up -d")
                .doesNotContain("compose.egress.yaml");
        Commands.Result on = Commands.run(List.of("make", "-n", "up", "SANDBOX_EGRESS_ALLOW=a.example"), Map.of(), Repo.root(),
                60);
        assertThat(on.exitCode()).as(on.output()).isZero();
        String files = "-f infra/compose/compose.yaml -f infra/compose/compose.egress.yaml -f infra/compose/protect-git.generated.yaml ";
        assertThat(on.output()).contains(files + "up -d").contains("egress-proxy.sh --check");
        // The networks exist before the command that reads the host's addresses (their gateways among them) starts.
        assertThat(on.output().indexOf(files + "up --no-start")).as(on.output()).isNotNegative()
                .isLessThan(on.output().indexOf(files + "up -d"));
        assertThat(off.output()).doesNotContain("--no-start").doesNotContain("docker volume create");
        // The record of allowed lines is a volume make up makes (compose only mounts it, as external) before compose runs.
        assertThat(on.output().indexOf("docker volume create sandbox-mcp-egress-log")).as(on.output()).isNotNegative()
                .isLessThan(on.output().indexOf(files + "up --no-start"));
    }
}
