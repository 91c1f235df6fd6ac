package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.testcontainers.DockerClientFactory;

/**
 * The real images started by the real compose file (infra/compose/compose.yaml) through the
 * local compose binary: the server and the runner, under names and a port of their own so they
 * never collide with a deployment left by {@code make up}. Closing it runs {@code compose down}.
 */
final class ComposeDeployment implements AutoCloseable {

    static final String SERVER_IMAGE = System.getProperty("sandbox.server.image", "sandbox-mcp-server:local");
    static final String RUNNER_IMAGE = System.getProperty("sandbox.runner.image", "sandbox-mcp-runner:local");
    static final String PROXY_IMAGE = System.getProperty("sandbox.proxy.image", "sandbox-mcp-proxy:local");
    static final int SERVER_UID = 65532;
    static final String BASE = "/mcp-sandbox";

    final String project;
    /** The server's container (HTTP); {@link #runner} is the runner's (commands and files). */
    final String container;
    final String runner;
    final String network;
    final int port;
    final Path workspace;
    /** The directory behind the runner's home volume ({@link #homeVolume}), as {@code make up} makes it. */
    final Path home;
    final String homeVolume;
    /** The egress proxy's record of allowed lines, a volume {@code make up} makes (only with compose.egress.yaml). */
    final String egressLogVolume;
    private final boolean egress;
    final String token;
    final int uid = Repo.sandboxUid();
    final int gid = Repo.sandboxGid();
    private final Map<String, String> env;
    private final List<String> compose;
    private Path gitOverride;

    private ComposeDeployment(String suffix, Map<String, String> extraEnv, List<String> overrides)
            throws IOException, InterruptedException {
        this.project = "sandbox-mcp-e2e-" + suffix;
        this.container = project;
        this.runner = project + "-runner";
        this.network = project + "-net";
        this.port = freePort();
        this.workspace = Files.createTempDirectory("sandbox-mcp-e2e-workspace-");
        Files.setAttribute(workspace, "unix:uid", uid);
        Files.setAttribute(workspace, "unix:gid", gid);
        this.home = Files.createTempDirectory("sandbox-mcp-e2e-home-");
        Files.setAttribute(home, "unix:uid", uid);
        Files.setAttribute(home, "unix:gid", gid);
        this.homeVolume = project + "-home";
        this.egressLogVolume = project + "-egress-log";
        this.egress = overrides.contains("infra/compose/compose.egress.yaml");
        byte[] random = new byte[24];
        new SecureRandom().nextBytes(random);
        this.token = HexFormat.of().formatHex(random);
        this.env = new HashMap<>(Map.of(
                "SANDBOX_SERVER_IMAGE", SERVER_IMAGE,
                "SANDBOX_RUNNER_IMAGE", RUNNER_IMAGE,
                "SANDBOX_CONTAINER", container,
                "SANDBOX_NETWORK", network,
                "SANDBOX_PORT", Integer.toString(port),
                "SANDBOX_UID", Integer.toString(uid),
                "SANDBOX_GID", Integer.toString(gid),
                "SANDBOX_WORKSPACE", workspace.toString(),
                "MCP_AUTH_TOKEN_SHA256", sha256Hex(token)));
        env.put("SANDBOX_HOME_VOLUME", homeVolume);
        env.put("SANDBOX_EGRESS_LOG_VOLUME", egressLogVolume);
        env.put("SANDBOX_PROXY_IMAGE", PROXY_IMAGE);
        env.putAll(extraEnv);
        this.compose = new ArrayList<>(Commands.compose());
        compose.addAll(List.of("-p", project, "-f", Repo.path("infra/compose/compose.yaml").toString()));
        for (String override : overrides) {
            compose.addAll(List.of("-f", Repo.path(override).toString()));
        }
    }

    /** What is in the workspace before the pair starts, as the user's tree is there before {@code make up}. */
    interface WorkspaceSetup {
        void prepare(Path workspace) throws Exception;
    }

    static ComposeDeployment start(String suffix) throws Exception {
        return start(suffix, workspace -> { }, Map.of(), List.of());
    }

    static ComposeDeployment start(String suffix, WorkspaceSetup setup) throws Exception {
        return start(suffix, setup, Map.of(), List.of());
    }

    /** With {@code settings} (variables compose passes on, such as MCP_CALL_BUDGET_SECONDS) in its environment. */
    static ComposeDeployment start(String suffix, Map<String, String> settings) throws Exception {
        return start(suffix, workspace -> { }, settings, List.of());
    }

    static ComposeDeployment start(String suffix, Map<String, String> extraEnv, List<String> overrides) throws Exception {
        return start(suffix, workspace -> { }, extraEnv, overrides);
    }

    /**
     * The pair as {@code make up} starts it: {@code setup} fills the workspace first, the git
     * protection override is generated for it, then compose runs with {@code overrides} (paths in
     * the repository) laid over compose.yaml and {@code extraEnv} added to what it interpolates
     * (e.g. the egress allow-list).
     */
    static ComposeDeployment start(String suffix, WorkspaceSetup setup, Map<String, String> extraEnv,
            List<String> overrides) throws Exception {
        requireImage();
        if (!overrides.isEmpty()) {
            requireImage(PROXY_IMAGE);
        }
        ComposeDeployment deployment = new ComposeDeployment(suffix + "-" + ProcessHandle.current().pid(), extraEnv, overrides);
        setup.prepare(deployment.workspace);
        deployment.protectGit();
        deployment.compose("down", "--volumes", "--remove-orphans");
        Commands.Result volume = Commands.run(List.of("bash", Repo.path("infra/compose/home-volume.sh").toString(), "create",
                deployment.homeVolume, deployment.home.toString(), deployment.uid + ":" + deployment.gid), 60);
        if (volume.exitCode() != 0) {
            deployment.close();
            throw new AssertionError("infra/compose/home-volume.sh create failed:\n" + volume.output());
        }
        if (deployment.egress) {
            Commands.Result logVolume = Commands.run(List.of("docker", "volume", "create", deployment.egressLogVolume), 60);
            if (logVolume.exitCode() != 0) {
                deployment.close();
                throw new AssertionError("docker volume create " + deployment.egressLogVolume + " failed:\n" + logVolume.output());
            }
        }
        Commands.Result up = deployment.compose("up", "-d");
        if (up.exitCode() != 0) {
            deployment.close();
            throw new AssertionError("compose up failed:\n" + up.output());
        }
        try {
            deployment.awaitHealthy(Duration.ofSeconds(60));
        } catch (AssertionError | Exception notHealthy) {
            // Torn down here, as no test will: its containers' restart policy would otherwise bring
            // them back, crash-looping, every time dockerd starts.
            deployment.close();
            throw notHealthy;
        }
        return deployment;
    }

    /**
     * What {@code make up} does before compose: the workspace is handed to the sandbox user, and
     * infra/compose/protect-git.sh writes the override that mounts its git config and hooks read-only.
     */
    private void protectGit() throws IOException, InterruptedException {
        Commands.Result chown = Commands.run(List.of("chown", "-R", uid + ":" + gid, workspace.toString()), 60);
        assertThat(chown.exitCode()).as(chown.output()).isZero();
        gitOverride = Files.createTempFile("sandbox-mcp-e2e-git-", ".yaml");
        Commands.Result generated = Commands.run(List.of(Repo.path("infra/compose/protect-git.sh").toString(),
                workspace.toString(), gitOverride.toString()), Map.of(), Repo.root(), 120);
        assertThat(generated.exitCode()).as(generated.output()).isZero();
        compose.addAll(List.of("-f", gitOverride.toString()));
    }

    /**
     * Starts the server again with {@code settings} added to what compose interpolates (the
     * runner stays), as an operator changing a variable and running {@code make up} again does.
     */
    void recreateServer(Map<String, String> settings) throws Exception {
        env.putAll(settings);
        Commands.Result up = compose("up", "-d", "--no-deps", "server");
        assertThat(up.exitCode()).as(up.output()).isZero();
        awaitHealthy(Duration.ofSeconds(60));
    }

    /** Whether /healthz answers 200 and says the runner is ok too. */
    boolean pairHealthy() {
        try {
            HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create(baseUrl() + "/healthz")).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 && response.body().contains("\"runner\":\"ok\"");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static void requireImage() {
        requireImage(SERVER_IMAGE, RUNNER_IMAGE);
    }

    static void requireImage(String... images) {
        for (String image : images) {
            try {
                DockerClientFactory.instance().client().inspectImageCmd(image).exec();
            } catch (RuntimeException e) {
                throw new AssertionError("image " + image + " is missing: build it with `make image` (make test does this "
                        + "whenever a Docker daemon answers)", e);
            }
        }
    }

    Commands.Result compose(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(compose);
        command.addAll(List.of(args));
        return Commands.run(command, env, Repo.root(), 180);
    }

    /** Runs the jar's {@code verify} (with {@code flags}) against this deployment. */
    Commands.Result verify(String... flags) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", Repo.path("app/target/sandbox-mcp.jar").toString(), "verify"));
        command.addAll(List.of(flags));
        command.add(baseUrl());
        return Commands.run(command, Map.of("MCP_AUTH_TOKEN", token), Repo.root(), 120);
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port + BASE;
    }

    int health() {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(baseUrl() + "/healthz"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    void awaitHealthy(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (pairHealthy()) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        throw new AssertionError("the pair did not become healthy in " + timeout + ":\n" + logs() + "\n--- runner:\n"
                + logs(runner));
    }

    /** The override protect-git.sh wrote for this deployment, as make up writes its own; null when none was. */
    Path gitOverride() {
        return gitOverride;
    }

    /** The server's log. */
    String logs() throws IOException, InterruptedException {
        return logs(container);
    }

    /** How many times Docker's restart policy has restarted {@code container}. */
    static int restarts(String container) throws IOException, InterruptedException {
        return Integer.parseInt(Commands.run(List.of("docker", "inspect", "-f", "{{.RestartCount}}", container), 30)
                .output().strip());
    }

    static String logs(String container) throws IOException, InterruptedException {
        return Commands.run(List.of("docker", "logs", "--tail", "200", container), 30).output();
    }

    /** The server container's IP address on its own network. */
    String ipAddress() throws IOException, InterruptedException {
        Commands.Result inspect = Commands.run(List.of("docker", "inspect", "-f",
                "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", container), 30);
        assertThat(inspect.exitCode()).as(inspect.output()).isZero();
        return inspect.output().strip();
    }

    /** An SDK client over Streamable HTTP to this deployment, initialized. */
    McpSyncClient streamableClient() {
        return Mcp.streamable("http://127.0.0.1:" + port, BASE, token);
    }

    @Override
    public void close() throws Exception {
        Commands.Result down = compose("down", "--volumes", "--remove-orphans", "--timeout", "10");
        if (down.exitCode() != 0) {
            System.err.println("compose down failed for " + project + ":\n" + down.output());
        }
        Commands.run(List.of("docker", "volume", "rm", homeVolume), 60);
        if (egress) {
            Commands.run(List.of("docker", "volume", "rm", egressLogVolume), 60);
        }
        // Files the container wrote belong to the sandbox user; the test user may not remove them all.
        Commands.run(List.of("rm", "-rf", workspace.toString(), home.toString()), 60);
        if (gitOverride != null) {
            Files.deleteIfExists(gitOverride);
        }
    }

    static String sha256Hex(String value) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
