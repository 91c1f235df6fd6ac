package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code make deploy} end to end, against a running Traefik that watches TRAEFIK_DYNAMIC_DIR and
 * the real tailscaled, not logged in ({@link Tailscaled}). The pair is started as {@code make up}
 * starts it by {@link ComposeDeployment} (under a project name and port of its own, which
 * {@code make up} cannot take), so make runs with {@code -o up}: deploy's own steps, the route and
 * the Funnel, are what is tested here.
 */
@RequiresDocker
class MakeDeployTest {

    static final String HOST = "localhost";

    @TempDir
    Path dir;

    @Test
    void theRouteIsServedWithinSecondsNothingHiddenIsAndTheFunnelStepFailsCleanly() throws Exception {
        try (ComposeDeployment deployment = ComposeDeployment.start("deploy");
                Traefik traefik = Traefik.start(dir.resolve("traefik"), true);
                Tailscaled daemon = Tailscaled.start("deploy")) {
            assertThat(Files.list(traefik.dynamic)).as("Traefik watches an empty directory").isEmpty();
            long start = System.nanoTime();
            Commands.Result deploy = Commands.run(List.of("make", "--no-print-directory", "-o", "up", "deploy",
                    "TRAEFIK_DYNAMIC_DIR=" + traefik.dynamic, "TAILNET_HOST=" + HOST,
                    "SANDBOX_PORT=" + deployment.port), Map.of("PATH", daemon.path() + ":" + System.getenv("PATH"),
                    "TAILSCALE_SOCKET", daemon.socket.toString()), Repo.root(), 120);
            traefik.awaitRoute(HOST);
            // An upper bound: from the file's write to the first answer, make's Funnel step included.
            Duration served = Duration.between(Files.getLastModifiedTime(traefik.dynamic.resolve("sandbox-mcp.yml"))
                    .toInstant(), java.time.Instant.now());
            System.out.println("make deploy: the route served " + served.toMillis() + " ms after it was written (make took "
                    + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms)");

            assertThat(deploy.exitCode()).as(deploy.output()).isNotZero();
            assertThat(deploy.output()).contains("Traefik route written to " + traefik.dynamic.resolve("sandbox-mcp.yml"))
                    .contains("funnel: this node is not logged in to a tailnet (tailscaled says NeedsLogin; run: tailscale up)")
                    .doesNotContain("public URL");
            assertThat(served).isLessThan(Duration.ofSeconds(10));
            try (var files = Files.list(traefik.dynamic)) {
                assertThat(files.map(p -> p.getFileName().toString())).containsExactly("sandbox-mcp.yml");
            }
            assertThat(Files.readString(traefik.dynamic.resolve("sandbox-mcp.yml"))).doesNotContain(deployment.token)
                    .doesNotContain(ComposeDeployment.sha256Hex(deployment.token));
            assertThat(daemon.cli("funnel", "status", "--json").output().strip()).as("nothing configured").isEqualTo("{}");

            try (RawTls connection = RawTls.open(traefik.websecure)) {
                // What is routed: the prefix, where the health probe is public by design (it
                // reveals only that the pair answers) and everything else asks for the token.
                RawTls.Response health = connection.exchange(RawTls.get(HOST, ComposeDeployment.BASE + "/healthz"));
                assertThat(health.status()).isEqualTo(200);
                assertThat(health.body()).isEqualTo("{\"status\":\"ok\",\"runner\":\"ok\"}");
                assertThat(connection.exchange(RawTls.post(HOST, ComposeDeployment.BASE + "/mcp",
                        "Content-Type: application/json\r\n", "{}")).status()).isEqualTo(401);
                // What is not: the server's root health path, Traefik's API and dashboard, the
                // repository's .env (the token), whatever the path's spelling.
                for (String path : List.of("/healthz", "/.env", "/api/http/routers", "/dashboard/", "/ping",
                        ComposeDeployment.BASE + "/../.env", "/%2e%2e/.env", "/mcp-sandboxx/healthz")) {
                    RawTls.Response answer = connection.exchange(RawTls.get(HOST, path));
                    // 404 from Traefik, or from the server (what the prefix matches); 401 where the token is asked for
                    assertThat(answer.status()).as(path).isIn(400, 401, 404);
                    assertThat(answer.body()).as(path).doesNotContain(deployment.token).doesNotContain("MCP_AUTH_TOKEN");
                }
            }
            traefik.assertNothingLeftTheMachine();
        }
    }
}
