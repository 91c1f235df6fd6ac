package dev.sandboxmcp.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

/**
 * The pair as deployed: the server and runner images with the compose file's flags (read-only
 * roots, no capabilities, the runner without network, the socket on a shared tmpfs volume).
 * Measures the time from {@code docker start} of both to the first answer that says the runner
 * is ok too, the pair's resident memory, and plain-client round trips through the published port.
 */
final class ContainerRun implements AutoCloseable {

    /** The images measured; {@code -Dsandbox.server.image} and {@code -Dsandbox.runner.image} pick others, as in tests/e2e. */
    static final String SERVER_IMAGE = System.getProperty("sandbox.server.image", "sandbox-mcp-server:local");
    static final String RUNNER_IMAGE = System.getProperty("sandbox.runner.image", "sandbox-mcp-runner:local");

    final long startMillis;
    /** Both JVMs' RSS together. */
    final Resident resident;
    final String mcpUrl;
    /** The published loopback port, where a front door reaches the server. */
    final int port;
    private final String name;
    private final TempTree workspace;

    private ContainerRun(String name, TempTree workspace, long startMillis, Resident resident, String mcpUrl, int port) {
        this.name = name;
        this.workspace = workspace;
        this.startMillis = startMillis;
        this.resident = resident;
        this.mcpUrl = mcpUrl;
        this.port = port;
    }

    static boolean imageAvailable() {
        try {
            Processes.run(List.of("docker", "image", "inspect", SERVER_IMAGE, RUNNER_IMAGE));
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    /** "server N MB, runner M MB (toolchains: ...)", as Docker counts them, or why not. */
    static String imageSizes() {
        try {
            String[] server = Processes.run(List.of("docker", "image", "inspect", "--format", "{{.Size}}", SERVER_IMAGE)).strip()
                    .split("\n");
            String runner = Processes.run(List.of("docker", "image", "inspect", "--format",
                    "{{.Size}}|{{index .Config.Labels \"dev.sandboxmcp.toolchains\"}}", RUNNER_IMAGE)).strip();
            String[] fields = runner.split("\\|", 2);
            return String.format(java.util.Locale.ROOT, "server %d MB, runner %d MB (toolchains: %s)",
                    Long.parseLong(server[0]) / 1_000_000, Long.parseLong(fields[0]) / 1_000_000,
                    fields.length > 1 && !fields[1].isEmpty() ? fields[1] : "none");
        } catch (java.io.IOException | RuntimeException e) {
            return "not measured (" + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "not measured (interrupted)";
        }
    }

    /** Starts the pair with a workspace holding {@code file-4k.txt}. */
    static ContainerRun start(String token, String basePath) throws Exception {
        String name = "sandbox-mcp-bench-" + ProcessHandle.current().pid();
        TempTree workspace = TempTree.create("sandbox-mcp-bench-ws-");
        Files.writeString(workspace.resolve("file-4k.txt"), "0123456789abcdef".repeat(256));
        for (Path path : List.of(workspace.path(), workspace.resolve("file-4k.txt"))) {
            Files.setAttribute(path, "unix:uid", 1000);
            Files.setAttribute(path, "unix:gid", 1000);
        }
        int port = Processes.freePort();
        String digest = HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        // The runner's image brings its own init (PID 1); the server's is Docker's, as in compose.
        List<String> locked = List.of("--read-only", "--cap-drop", "ALL", "--security-opt",
                "no-new-privileges:true", "-v", name + ":/run/sandbox-mcp");
        Processes.run(List.of("docker", "volume", "create", "--driver", "local", "--opt", "type=tmpfs", "--opt",
                "device=tmpfs", "--opt", "o=mode=1777,size=1m", name));
        List<String> runner = new java.util.ArrayList<>(List.of("docker", "create", "--name", name + "-runner",
                "--pids-limit", "128", "--memory", "1g", "--cpus", "2", "--network", "none", "--user", "1000:1000",
                "--tmpfs", "/tmp:rw,noexec,nosuid,nodev,size=256m,uid=1000,gid=1000", "--shm-size", "16m",
                // Stands in for the home volume: writable by the user, as compose mounts it.
                "--tmpfs", "/home/sandbox:rw,nosuid,nodev,size=64m,uid=1000,gid=1000",
                "-e", "MCP_RUNNER_SWEEP_ALL=true", "-v", workspace.path() + ":/workspace:rw"));
        runner.addAll(locked);
        runner.add(RUNNER_IMAGE);
        Processes.run(runner);
        List<String> server = new java.util.ArrayList<>(List.of("docker", "create", "--name", name, "--init", "--pids-limit", "64",
                "--memory", "512m", "--cpus", "1", "--user", "65532:65532",
                "--tmpfs", "/tmp:rw,noexec,nosuid,nodev,size=16m,uid=65532,gid=65532",
                "-e", "MCP_AUTH_TOKEN_SHA256=" + digest, "-p", "127.0.0.1:" + port + ":8000"));
        server.addAll(locked);
        server.add(SERVER_IMAGE);
        Processes.run(server);
        try {
            long started = System.nanoTime();
            Processes.run(List.of("docker", "start", name + "-runner", name));
            long millis = Processes.millisUntilAnswers(started,
                    () -> Processes.body("http://127.0.0.1:" + port + "/healthz").contains("\"runner\":\"ok\""),
                    Duration.ofSeconds(60));
            long serverPid = javaPid(name);
            long runnerPid = javaPid(name + "-runner");
            Resident resident = Resident.measure(started + Duration.ofMillis(millis).toNanos(),
                    () -> Processes.rssMib(serverPid) + Processes.rssMib(runnerPid));
            return new ContainerRun(name, workspace, millis, resident, "http://127.0.0.1:" + port + basePath + "/mcp", port);
        } catch (Exception e) {
            remove(name);
            workspace.close();
            throw e;
        }
    }

    /** The host pid of the container's java process (the init is its parent). */
    private static long javaPid(String name) throws Exception {
        for (String line : Processes.run(List.of("docker", "top", name, "-eo", "pid,comm")).lines().skip(1).toList()) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length == 2 && fields[1].equals("java")) {
                return Long.parseLong(fields[0]);
            }
        }
        throw new IllegalStateException("no java process in container " + name);
    }

    private static void remove(String name) {
        try {
            Processes.run(List.of("docker", "rm", "-f", name, name + "-runner"));
            Processes.run(List.of("docker", "volume", "rm", "-f", name));
        } catch (Exception ignored) {
            // already gone
        }
    }

    @Override
    public void close() {
        remove(name);
        workspace.close();
    }
}
