package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * infra/tailscale/funnel.sh against the real Tailscale CLI and daemon ({@link Tailscaled}: built
 * at the pinned version, the daemon in a container with no network, never logged in). Reached
 * here: the CLI missing, the daemon not running, not logged in, and status and off read from the
 * daemon's own --json. Not reachable offline (they need a node logged in to a tailnet): Funnel
 * not permitted, on, already on, the CLI printing an enable URL; {@link FunnelScriptTest} covers
 * those with a fake CLI speaking the same JSON.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FunnelCliTest {

    Tailscaled daemon;

    @BeforeAll
    void start() throws Exception {
        daemon = Tailscaled.start("funnel");
    }

    @AfterAll
    void stop() throws Exception {
        if (daemon != null) {
            daemon.close();
        }
    }

    Commands.Result funnel(String action, Path socket, String path) throws Exception {
        Map<String, String> env = new HashMap<>(Map.of("PATH", path, "TAILSCALE_SOCKET", socket.toString()));
        return Commands.run(List.of("bash", Repo.path("infra/tailscale/funnel.sh").toString(), action), env, Repo.root(), 60);
    }

    @Test
    void theCliIsThePinnedBuildAndTheDaemonIsNotLoggedIn() throws Exception {
        Commands.Result version = daemon.cli("version");
        // build.sh's pin names its directory (tailscale-v1.102.5); built outside tailscale's
        // repository, the binary has no VCS stamp: "1.102.5-ERR-BuildInfo".
        String pinned = daemon.binaries.getFileName().toString().replaceFirst("^tailscale-v", "");
        assertThat(pinned).matches("\\d+\\.\\d+\\.\\d+");
        assertThat(version.output().lines().findFirst().orElseThrow()).startsWith(pinned + "-");
        Commands.Result status = daemon.cli("status", "--json");
        assertThat(status.output()).contains("\"BackendState\": \"NeedsLogin\"");
    }

    @Test
    void withoutTheCliEveryActionSaysItIsNotInstalled() throws Exception {
        for (String action : List.of("on", "status", "off")) {
            Commands.Result result = funnel(action, daemon.socket, "/usr/bin:/bin");
            assertThat(result.exitCode()).as(action).isEqualTo(1);
            assertThat(result.output()).contains("tailscale is not installed");
        }
    }

    @Test
    void withTheDaemonNotRunningEveryActionSaysSoAndWhere() throws Exception {
        Path nowhere = daemon.socketDir.resolve("not-there.sock");
        for (String action : List.of("on", "status", "off")) {
            Commands.Result result = funnel(action, nowhere, daemon.path());
            assertThat(result.exitCode()).as(action + ": " + result.output()).isEqualTo(1);
            assertThat(result.output()).contains("tailscaled is not running or not reachable at " + nowhere)
                    .contains("tailscale up");
        }
    }

    @Test
    void onANodeThatIsNotLoggedInOnFailsAndConfiguresNothing() throws Exception {
        Commands.Result on = funnel("on", daemon.socket, daemon.path());
        assertThat(on.exitCode()).as(on.output()).isEqualTo(1);
        assertThat(on.output()).contains("not logged in to a tailnet (tailscaled says NeedsLogin; run: tailscale up)");
        assertThat(daemon.cli("funnel", "status", "--json").output().strip()).isEqualTo("{}");
    }

    @Test
    void statusAndOffReadTheDaemonsJson() throws Exception {
        Commands.Result status = funnel("status", daemon.socket, daemon.path());
        assertThat(status.exitCode()).as(status.output()).isEqualTo(3);
        assertThat(status.output()).contains("funnel: not pointing at https+insecure://127.0.0.1:443");
        Commands.Result off = funnel("off", daemon.socket, daemon.path());
        assertThat(off.exitCode()).as(off.output()).isZero();
        assertThat(off.output()).contains("funnel: off (it was not on for :443)");
        Commands.Result usage = funnel("sideways", daemon.socket, daemon.path());
        assertThat(usage.exitCode()).isEqualTo(2);
    }
}
