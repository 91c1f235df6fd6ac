package dev.sandboxmcp.runner;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runner as a child process of the server, for the jar without containers ({@code make run},
 * the tests): the same jar in {@code runner} mode, on a socket in a private temporary
 * directory. It is started again when it exits (a command may kill it), and it exits when the
 * server does: its standard input is a pipe from the server, and it stops at that pipe's end.
 * This gives the runner its own process, not its own user: the container deployment is what
 * separates the two.
 */
public final class ChildRunner implements AutoCloseable {

    /** Set in the child's environment: watch standard input and exit at its end. */
    public static final String PARENT_PIPE_VARIABLE = "MCP_RUNNER_PARENT_PIPE";
    private static final Logger LOG = LoggerFactory.getLogger(ChildRunner.class);
    private static final Duration RESTART_PAUSE = Duration.ofSeconds(1);

    private final Path directory;
    private final Path socket;
    private final ProcessBuilder builder;
    private volatile Process process;
    private volatile boolean closed;

    private ChildRunner(Path directory, ProcessBuilder builder) {
        this.directory = directory;
        this.socket = directory.resolve("runner.sock");
        this.builder = builder;
    }

    /**
     * Starts the child with {@code environment} (what its commands will see) plus its settings
     * ({@code settings}: the workspace and the bounds), and waits until it answers on its socket.
     */
    public static ChildRunner start(Map<String, String> environment, Map<String, String> settings, Duration ready)
            throws IOException {
        Path directory = Files.createTempDirectory("sandbox-mcp-runner-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse(
                Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(jvmOptions());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), "dev.sandboxmcp.Main", "runner"));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.appendTo(new File("/dev/stderr")));
        builder.environment().clear();
        builder.environment().putAll(environment);
        builder.environment().putAll(settings);
        builder.environment().put("MCP_RUNNER_SOCKET", directory.resolve("runner.sock").toString());
        builder.environment().put(PARENT_PIPE_VARIABLE, "true");
        ChildRunner child = new ChildRunner(directory, builder);
        child.launch();
        Thread.ofVirtual().name("runner-supervisor").start(child::supervise);
        child.awaitReady(ready);
        return child;
    }

    /** The heap and GC settings of this JVM, so the runner lives under the same bounds. */
    private static List<String> jvmOptions() {
        List<String> options = new ArrayList<>(List.of("--enable-native-access=ALL-UNNAMED",
                "-XX:+DisableAttachMechanism", "-XX:-EnableDynamicAgentLoading"));
        for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (argument.startsWith("-Xm") || (argument.startsWith("-XX:") && !argument.contains("AOT")
                    && !argument.contains("Attach") && !argument.contains("DynamicAgent"))) {
                options.add(argument);
            }
        }
        return options;
    }

    private void launch() throws IOException {
        process = builder.start();
    }

    private void supervise() {
        while (!closed) {
            try {
                int code = process.waitFor();
                if (closed) {
                    return;
                }
                LOG.warn("the runner exited with code {}; starting it again", code);
                Thread.sleep(RESTART_PAUSE);
                if (!closed) {
                    launch();
                }
            } catch (InterruptedException e) {
                return;
            } catch (IOException e) {
                LOG.error("the runner could not be started again: {}", e.toString());
                return;
            }
        }
    }

    private void awaitReady(Duration ready) throws IOException {
        RunnerClient probe = new RunnerClient(socket, 64 * 1024, (tool, arguments) -> Duration.ofSeconds(5));
        long deadline = System.nanoTime() + ready.toNanos();
        while (System.nanoTime() < deadline) {
            if (probe.ping(Duration.ofSeconds(5)) instanceof RunnerClient.Health.Answered) {
                return;
            }
            if (!process.isAlive()) {
                close();
                throw new IOException("the runner exited with code " + process.exitValue() + " while starting (its "
                        + "log is above)");
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        close();
        throw new IOException("the runner did not answer within " + ready.toSeconds() + " s");
    }

    /** Where the child listens. */
    public Path socket() {
        return socket;
    }

    /** Stops the child (its commands and jobs are killed by its own shutdown) and removes its directory. */
    @Override
    public void close() {
        closed = true;
        Process child = process;
        if (child != null && child.isAlive()) {
            child.destroy();
            try {
                if (!child.waitFor(10, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
            } catch (InterruptedException e) {
                child.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        try {
            Files.deleteIfExists(socket);
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            LOG.debug("removing {}: {}", directory, e.toString());
        }
    }
}
