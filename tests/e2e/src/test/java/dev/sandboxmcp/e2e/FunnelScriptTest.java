package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * infra/tailscale/funnel.sh against a fake {@code tailscale} on PATH that records its arguments
 * and keeps Funnel's state in a file, speaking the real CLI's JSON: the paths that need a node
 * logged in to a tailnet (Funnel permitted or not, on, already on, the CLI printing an enable URL
 * and configuring nothing), which the real daemon of {@link FunnelCliTest} cannot reach offline.
 */
class FunnelScriptTest {

    static final String TARGET = "https+insecure://127.0.0.1:443";
    static final String RUNNING_WITH_FUNNEL = """
            {"BackendState": "Running", "Self": {"CapMap": {"https://tailscale.com/cap/https": null,
             "https://tailscale.com/cap/funnel": null}}}""";

    @TempDir
    Path dir;
    Path bin;
    Path calls;
    Path state;

    @BeforeEach
    void fakeTailscale() throws Exception {
        bin = Files.createDirectories(dir.resolve("bin"));
        calls = dir.resolve("calls.log");
        state = dir.resolve("funnel-state.json");
        Files.writeString(state, "{}");
        Path fake = bin.resolve("tailscale");
        // status --json prints $FAKE_STATUS; `funnel --bg --yes X` configures X unless
        // FAKE_FUNNEL_NOOP is set (the CLI printing an enable URL and exiting 0).
        Files.writeString(fake, """
                #!/usr/bin/env bash
                echo "$*" >> "$FAKE_CALLS"
                case "$*" in
                  "status --json") [ -n "$FAKE_STATUS" ] || exit 1; printf '%s\\n' "$FAKE_STATUS" ;;
                  "funnel status --json") cat "$FAKE_STATE" ;;
                  "funnel --bg --yes "*)
                    if [ -n "$FAKE_FUNNEL_NOOP" ]; then
                      echo "Funnel is not enabled on your tailnet. To enable, visit: https://login.tailscale.com/f/funnel?node=x"
                      exit 0
                    fi
                    printf '{\\n  "TCP": {"443": {"HTTPS": true}},\\n  "Web": {"node.ts.net:443": {"Handlers": {"/": {\\n    "Proxy": "%s"}}}},\\n  "AllowFunnel": {\\n    "node.ts.net:443": true\\n  }\\n}\\n' "$4" > "$FAKE_STATE" ;;
                  "funnel --https=443 off") echo '{}' > "$FAKE_STATE" ;;
                  *) echo "fake tailscale: unexpected: $*" >&2; exit 64 ;;
                esac
                """);
        Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    Commands.Result funnel(String action, Map<String, String> extra, boolean withTailscale) throws Exception {
        String path = (withTailscale ? bin + ":" : "") + "/usr/bin:/bin";
        Map<String, String> env = new java.util.HashMap<>(Map.of("PATH", path, "FAKE_CALLS", calls.toString(),
                "FAKE_STATE", state.toString(), "FAKE_STATUS", RUNNING_WITH_FUNNEL));
        env.putAll(extra);
        return Commands.run(List.of("bash", Repo.path("infra/tailscale/funnel.sh").toString(), action), env, dir, 30);
    }

    List<String> recordedCalls() throws Exception {
        return Files.exists(calls) ? Files.readAllLines(calls) : List.of();
    }

    @Test
    void turnsFunnelOnPointingAtTraefikAndConfirmsIt() throws Exception {
        Commands.Result on = funnel("on", Map.of(), true);
        assertThat(on.exitCode()).as(on.output()).isZero();
        assertThat(on.output()).contains("on: public HTTPS on :443 -> " + TARGET);
        assertThat(recordedCalls()).contains("funnel --bg --yes " + TARGET).endsWith("funnel status --json");
    }

    @Test
    void runningItAgainChangesNothing() throws Exception {
        assertThat(funnel("on", Map.of(), true).exitCode()).isZero();
        Files.delete(calls);
        Commands.Result again = funnel("on", Map.of(), true);
        assertThat(again.exitCode()).isZero();
        assertThat(again.output()).contains("already on");
        assertThat(recordedCalls()).noneMatch(c -> c.startsWith("funnel --bg"));
    }

    @Test
    void failsClearlyWhenTailscaleIsMissing() throws Exception {
        Commands.Result result = funnel("on", Map.of(), false);
        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.output()).contains("tailscale is not installed");
    }

    @Test
    void failsClearlyWhenLoggedOutOrDaemonDown() throws Exception {
        Commands.Result loggedOut = funnel("on", Map.of("FAKE_STATUS", "{\"BackendState\": \"NeedsLogin\"}"), true);
        assertThat(loggedOut.exitCode()).isEqualTo(1);
        assertThat(loggedOut.output()).contains("not logged in").contains("tailscale up");
        Commands.Result down = funnel("on", Map.of("FAKE_STATUS", ""), true);
        assertThat(down.exitCode()).isEqualTo(1);
        assertThat(down.output()).contains("tailscaled is not running");
        assertThat(recordedCalls()).noneMatch(c -> c.startsWith("funnel --bg"));
    }

    @Test
    void failsClearlyWhenTheNodeMayNotUseFunnel() throws Exception {
        Commands.Result result = funnel("on", Map.of("FAKE_STATUS",
                "{\"BackendState\": \"Running\", \"Self\": {\"CapMap\": {\"https://tailscale.com/cap/https\": null}}}"), true);
        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.output()).contains("may not use Funnel").contains("nodeAttrs");
        assertThat(recordedCalls()).noneMatch(c -> c.startsWith("funnel --bg"));
    }

    @Test
    void doesNotTrustTheExitCodeWhenTheCliConfiguredNothing() throws Exception {
        Commands.Result result = funnel("on", Map.of("FAKE_FUNNEL_NOOP", "1"), true);
        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.output()).contains("Funnel was not configured").contains("login.tailscale.com/f/funnel");
    }

    @Test
    void statusAndOff() throws Exception {
        assertThat(funnel("status", Map.of(), true).exitCode()).isEqualTo(3);
        funnel("on", Map.of(), true);
        Commands.Result status = funnel("status", Map.of(), true);
        assertThat(status.exitCode()).isZero();
        assertThat(status.output()).contains("on:");
        Commands.Result off = funnel("off", Map.of(), true);
        assertThat(off.exitCode()).as(off.output()).isZero();
        assertThat(recordedCalls()).contains("funnel --https=443 off");
        assertThat(funnel("status", Map.of(), true).exitCode()).isEqualTo(3);
        assertThat(funnel("sideways", Map.of(), true).exitCode()).isEqualTo(2);
    }
}
