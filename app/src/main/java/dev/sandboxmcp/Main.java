package dev.sandboxmcp;

import dev.sandboxmcp.audit.AuditLog;
import dev.sandboxmcp.config.Config;
import dev.sandboxmcp.config.ConfigException;
import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.config.RunnerConfig;
import dev.sandboxmcp.exec.CommandRunner;
import dev.sandboxmcp.exec.DiskFloor;
import dev.sandboxmcp.exec.DiskFloorWatch;
import dev.sandboxmcp.exec.IdleSweep;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.exec.Orphans;
import dev.sandboxmcp.health.HealthProbe;
import dev.sandboxmcp.hostaudit.AuditCommand;
import dev.sandboxmcp.http.RequestBodyBudget;
import dev.sandboxmcp.http.SandboxServer;
import dev.sandboxmcp.runner.Bounds;
import dev.sandboxmcp.runner.ChannelListener;
import dev.sandboxmcp.runner.ChildRunner;
import dev.sandboxmcp.runner.Flock;
import dev.sandboxmcp.runner.RunnerAgent;
import dev.sandboxmcp.runner.RunnerLink;
import dev.sandboxmcp.runner.Secret;
import dev.sandboxmcp.runner.TicketOffice;
import dev.sandboxmcp.tools.ServerInstructions;
import dev.sandboxmcp.tools.ToolCatalog;
import dev.sandboxmcp.tools.ToolDefinitions;
import dev.sandboxmcp.tools.ToolDispatcher;
import dev.sandboxmcp.verify.VerifyCommand;
import dev.sandboxmcp.workspace.Workspace;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.logging.ConsoleHandler;
import java.util.logging.LogManager;
import java.util.logging.Logger;

/**
 * The jar's modes: {@code serve} (the HTTP server; the default), {@code runner} (commands and
 * files, behind a socket), {@code verify <url>} (the deployment checklist) and {@code audit <dir>}
 * (on the host: what in the workspace the host would run by itself).
 */
public final class Main {

    /** How long a health round waits for its checks, and how long one round's answer is reused. */
    static final Duration HEALTH_DEADLINE = Duration.ofSeconds(3);
    static final Duration HEALTH_REUSE = Duration.ofSeconds(5);
    /** Calls the runner serves at once: every command, every job's control call, and file calls. */
    static final int RUNNER_CONNECTIONS = 64;
    /** How long the server waits for a runner it started itself to answer. */
    static final Duration CHILD_RUNNER_READY = Duration.ofSeconds(60);
    /**
     * How long the runner's lock (its init's, PID 1's, freed as that exits) must have been free
     * before the server publishes a ticket: the container of a runner that died is gone by then,
     * with every command it left.
     */
    static final Duration TICKET_GRACE = Duration.ofMillis(1500);
    /** How often a starting runner looks for its ticket: a failed open costs microseconds, a late start costs the pair. */
    static final Duration TICKET_POLL = Duration.ofMillis(10);
    /** The nesting a tool's arguments or structured result may have on the channel. */
    static final int CHANNEL_DEPTH = 64;

    private Main() {
    }

    public static void main(String[] args) {
        String mode = args.length == 0 ? "serve" : args[0];
        switch (mode) {
            case "verify" -> {
                // The SDK client logs each session at INFO; the table is the output.
                System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
                System.exit(VerifyCommand.run(List.of(args).subList(1, args.length), System.getenv(), System.out,
                        System.err));
            }
            case "audit" -> System.exit(AuditCommand.run(List.of(args).subList(1, args.length), System.getenv(), System.out,
                    System.err));
            case "serve" -> launch(() -> {
                Running running = start(Config.fromEnvironment(System.getenv()), System.getenv(), System.out);
                Runtime.getRuntime().addShutdownHook(new Thread(running::close, "shutdown"));
            });
            case "runner" -> launch(() -> {
                RunnerConfig config = RunnerConfig.fromEnvironment(System.getenv());
                AutoCloseable runner = startRunner(config, commandEnvironment(System.getenv()));
                Runtime.getRuntime().addShutdownHook(new Thread(() -> closeQuietly(runner), "shutdown"));
                if (config.parentPipe()) {
                    exitWithParent(config.socket());
                }
            });
            default -> {
                System.err.println("sandbox-mcp: unknown command '" + mode
                        + "'; usage: java -jar sandbox-mcp.jar [serve | runner | verify <base-url>"
                        + " | audit [--accept | --watch] <dir>]");
                System.exit(2);
            }
        }
    }

    private interface Startup {
        void run() throws ConfigException, IOException;
    }

    /**
     * Starts a mode; a configuration error is one line and exit code 2, any other failure exit code
     * 1. From here on every log line is one line, whatever a value in it holds ({@link LogLines}).
     */
    private static void launch(Startup startup) {
        System.setErr(new LogLines(new BufferedOutputStream(new FileOutputStream(FileDescriptor.err), 1 << 13)));
        // java.util.logging (the JDK's own loggers) may hold the standard error it found first: give it this one.
        LogManager.getLogManager().reset();
        Logger.getLogger("").addHandler(new ConsoleHandler());
        try {
            startup.run();
        } catch (ConfigException e) {
            System.err.println("sandbox-mcp: " + e.getMessage());
            System.exit(2);
        } catch (IOException | RuntimeException e) {
            System.err.println("sandbox-mcp: cannot start: " + e.getMessage());
            System.exit(1);
        }
    }

    /** A started server and what carries its calls: the runner it started itself, or the channel a runner connects to. */
    public record Running(SandboxServer server, AutoCloseable channel) implements AutoCloseable {
        @Override
        public void close() {
            server.close();
            closeQuietly(channel);
        }
    }

    /**
     * Wires and starts the server; {@code environment} is what commands inherit, minus secrets,
     * when the server starts the runner itself; audit lines go to {@code auditOut}.
     */
    public static Running start(Config config, Map<String, String> environment, PrintStream auditOut)
            throws IOException {
        // Scrub first: a non-dumpable process's /proc/self/mem belongs to root, and without
        // capabilities the server itself could no longer open it. The runner this process may
        // start is its child, as the same user: it starts only once this process is hardened.
        ProcessHardening.scrubInitialEnvironment(Config.SECRET_VARIABLES.stream().filter(System.getenv()::containsKey).toList());
        CompletableFuture<Boolean> hardened = CompletableFuture.supplyAsync(ProcessHardening::disableDumpable,
                task -> Thread.ofPlatform().name("process-hardening").daemon().start(task));
        Limits limits = config.limits();
        ToolDefinitions definitions = ToolCatalog.definitions(limits);
        RequestBodyBudget messages = RequestBodyBudget.forHeap(limits.bodyBudgetWait());
        RunnerLink runner = new RunnerLink(serverSends(limits), definitions::deadline, messages);
        HealthProbe health = runnerHealth(runner);
        AutoCloseable channel;
        if (config.runnerSocket() == null) {
            hardened.join();
            channel = ChildRunner.start(commandEnvironment(environment), config.workspace(), runner, runnerSends(limits),
                    limits, CHILD_RUNNER_READY);
        } else {
            ChannelListener listener = ChannelListener.start(config.runnerSocket(), runner, runnerSends(limits), limits);
            TicketOffice office = TicketOffice.start(listener, runner, TICKET_GRACE, () -> health.report().healthy());
            channel = () -> {
                office.close();
                listener.close();
            };
        }
        ToolDispatcher tools = new ToolDispatcher(definitions, runner, new AuditLog(auditOut));
        try {
            SandboxServer server = SandboxServer.start(config, tools, ServerInstructions.text(limits, config.toolchains()),
                    version(), health, messages);
            return new Running(server, channel);
        } catch (RuntimeException e) {
            closeQuietly(channel);
            throw e;
        }
    }

    /**
     * What /healthz says of the runner: whether it answers a ping and its own checks pass. A report
     * is reused for a while, but not past the start or end of the runner's connection.
     */
    private static HealthProbe runnerHealth(RunnerLink runner) {
        HealthProbe probe = new HealthProbe(List.of(new HealthProbe.Check("runner", () -> {
            RunnerLink.Health health = runner.ping(HEALTH_DEADLINE);
            switch (health) {
                case RunnerLink.Health.Answered answered when answered.failed().isEmpty() -> { }
                case RunnerLink.Health.Answered answered -> throw new IOException("its checks failed: " + answered.failed());
                case RunnerLink.Health.Unreachable unreachable -> throw new IOException(unreachable.why());
            }
        })), HEALTH_DEADLINE.plusSeconds(1), HEALTH_REUSE);
        runner.onConnectionChange(probe::forget);
        return probe;
    }

    /**
     * Starts the runner: the workspace, connected to the server's channel at {@code config.socket()};
     * its commands, jobs and tools are built under the limits the server's welcome states.
     * {@code environment} is what its commands see.
     */
    public static AutoCloseable startRunner(RunnerConfig config, Map<String, String> environment) throws IOException {
        // Before the secret is read: no process of this user (a command) can read this process's memory.
        if (!ProcessHardening.disableDumpable()) {
            throw new IOException("the runner could not make itself non-dumpable, so commands could read its secret");
        }
        Secret secret;
        if (config.parentPipe()) {
            secret = RunnerAgent.secret(firstLine(System.in));
        } else {
            // The lock that tells the server a runner lives is its init's (PID 1), not this JVM's.
            Path directory = config.socket().toAbsolutePath().getParent();
            secret = RunnerAgent.secret(awaitTicket(directory.resolve(TicketOffice.TICKET),
                    directory.resolve(TicketOffice.LOCK)));
        }
        Workspace workspace = Workspace.open(config.workspace());
        // What commands orphan comes back to the runner, to be reaped here and counted in their usage.
        Orphans.adopt();
        IdleSweep sweep = config.sweepAll() ? IdleSweep.everythingButTheRunner() : IdleSweep.NONE;
        RunnerAgent agent = RunnerAgent.start(config.socket(), secret,
                limits -> runnerService(limits, workspace, environment, sweep), RUNNER_CONNECTIONS, () -> System.exit(3));
        return () -> {
            agent.close();
            workspace.close();
        };
    }

    /** The runner's commands, jobs, tools and health checks under the {@code limits} the server stated. */
    private static RunnerAgent.Service runnerService(Limits limits, Workspace workspace, Map<String, String> environment,
            IdleSweep sweep) {
        CommandRunner commands = CommandRunner.under(limits, environment, sweep);
        JobManager jobs = JobManager.under(limits, environment, sweep);
        DiskFloorWatch floor;
        try {
            floor = DiskFloorWatch.start(DiskFloor.of(limits), writable(workspace.root(), environment), commands, jobs,
                    sweep.sweeps());
        } catch (IOException e) {
            throw new UncheckedIOException("the disk floor cannot measure the workspace's filesystem", e);
        }
        HealthProbe health = new HealthProbe(List.of(
                new HealthProbe.Check("workspace", () -> Files.readAttributes(workspace.root(), BasicFileAttributes.class)),
                new HealthProbe.Check("commands", () -> commands.probe(workspace.root(), HEALTH_DEADLINE))),
                HEALTH_DEADLINE, HEALTH_REUSE);
        var tools = ToolCatalog.local(new ToolCatalog.Parts(workspace, commands, jobs, limits));
        return new RunnerAgent.Service(tools, health, serverSends(limits), () -> {
            floor.close();
            commands.close();
            jobs.close();
        });
    }

    /** What commands can write that the disk floor watches: the workspace, and their $HOME when it is a directory. */
    private static List<Path> writable(Path workspace, Map<String, String> environment) {
        String home = environment.get("HOME");
        return home != null && home.startsWith("/") && Files.isDirectory(Path.of(home))
                ? List.of(workspace, Path.of(home)) : List.of(workspace);
    }

    /** The secret line from the server, read byte by byte so that nothing after it is taken from the pipe. */
    private static String firstLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0 || line.length() > 128) {
                throw new IOException("the server sent no secret line on standard input");
            }
            line.append((char) b);
        }
        return line.toString();
    }

    /**
     * The ticket the server publishes while no runner lives. The runner's init starts this JVM once
     * the ticket is there and holds the lock from then on, and the server publishes none while it is
     * held: a ticket gone by now (the server restarted since and deleted it) never comes back, and
     * this runner exits so that its container restarts. Started some other way (no one holds the
     * lock), it waits for the ticket as long as it takes.
     */
    private static String awaitTicket(Path ticket, Path lock) throws IOException {
        boolean said = false;
        while (true) {
            try {
                return Files.readString(ticket, StandardCharsets.US_ASCII);
            } catch (java.nio.file.NoSuchFileException notYet) {
                if (!said) {
                    if (Files.exists(lock) && Flock.held(lock)) {
                        throw new IOException("no ticket at " + ticket + " while " + lock + " is held (by this runner's"
                                + " init, which saw the ticket): the server deleted it as it restarted, and publishes"
                                + " none while the lock is held");
                    }
                    System.err.println("sandbox-mcp runner: waiting for the server's ticket at " + ticket);
                    said = true;
                }
            }
            sleep(TICKET_POLL);
        }
    }

    private static void sleep(Duration pause) throws IOException {
        try {
            Thread.sleep(pause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting");
        }
    }

    /** What the server accepts in one message from the runner. */
    static Bounds runnerSends(Limits limits) {
        int bytes = Bounds.maxReplyBytes(limits);
        return new Bounds(bytes, tokens(limits), CHANNEL_DEPTH, bytes);
    }

    /** What the runner accepts in one message from the server: a call whose arguments fit a request body. */
    static Bounds serverSends(Limits limits) {
        int bytes = limits.maxRequestBytes() + 64 * 1024;
        return new Bounds(bytes, tokens(limits), CHANNEL_DEPTH, bytes);
    }

    /**
     * JSON tokens in one message: a listing at its entry cap (about ten tokens an entry) with room
     * to spare; a million keys or a line of {@code {}} stop here.
     */
    static long tokens(Limits limits) {
        return 32L * limits.listEntries() + 64 * 1024;
    }

    /** The runner, as the server's child: when the server is gone its pipe ends, and so does the runner. */
    private static void exitWithParent(Path socket) {
        Thread.ofPlatform().name("parent-pipe").daemon().start(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing is sent; only the end matters
                }
            } catch (IOException ended) {
                // the same as the end
            }
            // A server that was killed (SIGKILL) could not remove its socket's private directory.
            try {
                Files.deleteIfExists(socket);
                Files.deleteIfExists(socket.toAbsolutePath().getParent());
            } catch (IOException notEmptyOrGone) {
                // the server's own close removes what is left, if it still runs
            }
            System.exit(0);
        });
    }

    static Map<String, String> commandEnvironment(Map<String, String> environment) {
        Map<String, String> env = new HashMap<>(environment);
        Config.SECRET_VARIABLES.forEach(env::remove);
        env.remove("MCP_RUNNER_SOCKET");
        env.remove("MCP_RUNNER_SWEEP_ALL");
        env.remove(ChildRunner.PARENT_PIPE_VARIABLE);
        return env;
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // the process is ending
        }
    }

    private static String version() {
        try (var in = Main.class.getResourceAsStream("/sandbox-mcp.version")) {
            return in == null ? "dev" : new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return "dev";
        }
    }
}
