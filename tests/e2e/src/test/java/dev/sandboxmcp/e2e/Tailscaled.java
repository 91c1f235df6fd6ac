package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The real Tailscale daemon, built from the Go module proxy at the pinned version
 * (infra/tailscale/build.sh), in a container with no network at all (network_mode none), on the
 * server's base image with the static binary mounted read-only: userspace networking, state in
 * memory, no log upload. It is never logged in, so the paths of infra/tailscale/funnel.sh that
 * need a logged-in node (Funnel permitted or not, on, already on) cannot be reached here; the
 * fake CLI of {@link FunnelScriptTest} covers those. Its socket lies in {@link #socketDir}, which
 * the host's CLI ({@link #cli}) shares.
 */
final class Tailscaled implements AutoCloseable {

    static final String IMAGE = System.getProperty("sandbox.tailscaled.image", "sandbox-mcp-server-base:local");

    final Path binaries;
    final Path socketDir;
    final Path socket;
    final String container;

    private Tailscaled(Path binaries, Path socketDir, String container) {
        this.binaries = binaries;
        this.socketDir = socketDir;
        this.socket = socketDir.resolve("tailscaled.sock");
        this.container = container;
    }

    /** Where build.sh put tailscale and tailscaled (it builds them on first use: .ci/run does it first). */
    static Path binaries() throws IOException, InterruptedException {
        return Commands.installed("infra/tailscale/build.sh", 1800);
    }

    static Tailscaled start(String suffix) throws Exception {
        ComposeDeployment.requireImage(IMAGE);
        Path binaries = binaries();
        Path socketDir = Files.createTempDirectory("sandbox-mcp-e2e-tailscaled-");
        String container = "sandbox-mcp-e2e-tailscaled-" + suffix + "-" + ProcessHandle.current().pid();
        Tailscaled daemon = new Tailscaled(binaries, socketDir, container);
        Commands.run(List.of("docker", "rm", "-f", container), 30);
        Commands.Result run = Commands.run(List.of("docker", "run", "-d", "--name", container,
                "--network", "none", "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges:true",
                "--user", Repo.hostUid() + ":" + Repo.hostGid(), "--tmpfs", "/tmp:rw,nosuid,nodev,size=16m",
                "-e", "HOME=/tmp",
                "-v", binaries + ":/opt/tailscale:ro", "-v", socketDir + ":/run/tailscale",
                "--entrypoint", "/opt/tailscale/tailscaled", IMAGE,
                "--tun=userspace-networking", "--state=mem:", "--no-logs-no-support",
                "--socket=/run/tailscale/tailscaled.sock"), 60);
        assertThat(run.exitCode()).as(run.output()).isZero();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (Files.exists(daemon.socket) && daemon.cli("version").exitCode() == 0
                    && daemon.cli("status", "--json").output().contains("BackendState")) {
                return daemon;
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        String logs = daemon.logs();
        daemon.close();
        throw new AssertionError("tailscaled did not answer on its socket in 30 s:\n" + logs);
    }

    Path cli() {
        return binaries.resolve("tailscale");
    }

    Commands.Result cli(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of(cli().toString(), "--socket=" + socket));
        command.addAll(List.of(args));
        return Commands.run(command, 30);
    }

    /** PATH with the built CLI first, for scripts that call {@code tailscale}. */
    String path() {
        return binaries + ":/usr/local/bin:/usr/bin:/bin";
    }

    String logs() throws IOException, InterruptedException {
        return Commands.run(List.of("docker", "logs", container), 30).output();
    }

    @Override
    public void close() throws Exception {
        Commands.run(List.of("docker", "rm", "-f", container), 60);
        Commands.run(List.of("rm", "-rf", socketDir.toString()), 30);
    }
}
