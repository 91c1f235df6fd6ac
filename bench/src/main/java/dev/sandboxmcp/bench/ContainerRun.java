package dev.sandboxmcp.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

/**
 * The server as deployed: the {@code sandbox-mcp:local} image with the compose file's flags
 * (read-only root, no capabilities, 1 GiB, 2 CPUs, /tmp tmpfs noexec). Measures the time from
 * {@code docker start} to the first healthy answer, the server's idle RSS, and plain-client round
 * trips through the published loopback port.
 */
final class ContainerRun implements AutoCloseable {

    static final String IMAGE = "sandbox-mcp:local";

    final long startMillis;
    final double idleRssMib;
    final String mcpUrl;
    private final String name;
    private final Path workspace;

    private ContainerRun(String name, Path workspace, long startMillis, double idleRssMib, String mcpUrl) {
        this.name = name;
        this.workspace = workspace;
        this.startMillis = startMillis;
        this.idleRssMib = idleRssMib;
        this.mcpUrl = mcpUrl;
    }

    static boolean imageAvailable() {
        try {
            Processes.run(List.of("docker", "image", "inspect", IMAGE));
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    /** Starts the container with a workspace holding {@code file-4k.txt}. */
    static ContainerRun start(String token, String basePath) throws Exception {
        String name = "sandbox-mcp-bench-" + ProcessHandle.current().pid();
        Path workspace = Files.createTempDirectory("sandbox-mcp-bench-ws-");
        Files.writeString(workspace.resolve("file-4k.txt"), "0123456789abcdef".repeat(256));
        for (Path path : List.of(workspace, workspace.resolve("file-4k.txt"))) {
            Files.setAttribute(path, "unix:uid", 1000);
            Files.setAttribute(path, "unix:gid", 1000);
        }
        int port = Processes.freePort();
        String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        Processes.run(List.of("docker", "create", "--name", name, "--init", "--read-only", "--cap-drop", "ALL",
                "--security-opt", "no-new-privileges:true", "--pids-limit", "128", "--memory", "1g", "--cpus", "2",
                "--user", "1000:1000", "--tmpfs", "/tmp:rw,noexec,nosuid,nodev,size=256m,uid=1000,gid=1000",
                "-v", workspace + ":/workspace:rw", "-e", "MCP_AUTH_TOKEN_SHA256=" + digest,
                "-p", "127.0.0.1:" + port + ":8000", IMAGE));
        try {
            long started = System.nanoTime();
            Processes.run(List.of("docker", "start", name));
            long millis = Processes.millisUntilAnswers(started,
                    () -> Processes.healthy("http://127.0.0.1:" + port + "/healthz"), Duration.ofSeconds(60));
            Thread.sleep(2_000);
            double rss = Processes.rssMib(serverPid(name));
            return new ContainerRun(name, workspace, millis, rss, "http://127.0.0.1:" + port + basePath + "/mcp");
        } catch (Exception e) {
            remove(name);
            deleteTree(workspace);
            throw e;
        }
    }

    /** The host pid of the container's java process (the init is its parent). */
    private static long serverPid(String name) throws Exception {
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
            Processes.run(List.of("docker", "rm", "-f", name));
        } catch (Exception ignored) {
            // already gone
        }
    }

    private static void deleteTree(Path dir) {
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (Exception ignored) {
            // a temporary directory; the system cleans it eventually
        }
    }

    @Override
    public void close() {
        remove(name);
        deleteTree(workspace);
    }
}
