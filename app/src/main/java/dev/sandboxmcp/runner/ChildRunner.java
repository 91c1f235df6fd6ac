package dev.sandboxmcp.runner;

import dev.sandboxmcp.config.Limits;
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
 * the tests): the same jar in {@code runner} mode, connecting to the server's channel socket in a
 * private temporary directory. Its secret comes as the first line of its standard input, a pipe
 * from the server no command inherits, with a new secret for each start; it is started again when
 * it exits (a command may kill it), and it exits when the server does, at that pipe's end. This
 * gives the runner its own process, not its own user: the container deployment is what separates
 * the two (here the commands outlive a runner killed under them, which is why no ticket file is
 * used).
 */
public final class ChildRunner implements AutoCloseable {

    /** Set in the child's environment: watch standard input and exit at its end. */
    public static final String PARENT_PIPE_VARIABLE = "MCP_RUNNER_PARENT_PIPE";
    private static final Logger LOG = LoggerFactory.getLogger(ChildRunner.class);
    private static final Duration RESTART_PAUSE = Duration.ofSeconds(1);

    private final Path directory;
    private final ChannelListener listener;
    private final RunnerLink link;
    private final ProcessBuilder builder;
    private volatile Process process;
    private volatile boolean closed;

    private ChildRunner(Path directory, ChannelListener listener, RunnerLink link, ProcessBuilder builder) {
        this.directory = directory;
        this.listener = listener;
        this.link = link;
        this.builder = builder;
    }

    /**
     * Starts the child on {@code workspace} with {@code environment} (what its commands will see),
     * and waits until it has connected to {@code link} through a channel listening in a private
     * directory, which welcomes it with {@code limits} as a runner in a container is welcomed, and
     * reads its messages within {@code runnerSends}.
     */
    public static ChildRunner start(Map<String, String> environment, Path workspace, RunnerLink link, Bounds runnerSends,
            Limits limits, Duration ready) throws IOException {
        Path directory = Files.createTempDirectory("sandbox-mcp-runner-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        ChannelListener listener = ChannelListener.start(directory.resolve("runner.sock"), link, runnerSends, limits);
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
        builder.environment().put("MCP_WORKSPACE", workspace.toString());
        builder.environment().put("MCP_RUNNER_SOCKET", listener.socket().toString());
        builder.environment().put(PARENT_PIPE_VARIABLE, "true");
        ChildRunner child = new ChildRunner(directory, listener, link, builder);
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

    /** Starts the child with a new secret, the first line of its standard input (the pipe stays open). */
    private void launch() throws IOException {
        Secret secret = listener.rotate();
        Process started = builder.start();
        started.getOutputStream().write((secret.hex() + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        started.getOutputStream().flush();
        process = started;
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
        long deadline = System.nanoTime() + ready.toNanos();
        while (System.nanoTime() < deadline) {
            if (link.connected()) {
                return;
            }
            if (!process.isAlive()) {
                close();
                throw new IOException("the runner exited with code " + process.exitValue() + " while starting (its "
                        + "log is above)");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        close();
        throw new IOException("the runner did not connect within " + ready.toSeconds() + " s");
    }

    /** Where the server listens for the child. */
    public Path socket() {
        return listener.socket();
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
        listener.close();
        try {
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            LOG.debug("removing {}: {}", directory, e.toString());
        }
    }
}
