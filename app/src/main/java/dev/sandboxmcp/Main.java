package dev.sandboxmcp;

import dev.sandboxmcp.audit.AuditLog;
import dev.sandboxmcp.config.Config;
import dev.sandboxmcp.config.ConfigException;
import dev.sandboxmcp.exec.CommandRunner;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.exec.LaunchGate;
import dev.sandboxmcp.health.HealthProbe;
import dev.sandboxmcp.http.SandboxServer;
import dev.sandboxmcp.tools.EditFileTool;
import dev.sandboxmcp.tools.JobOutputTool;
import dev.sandboxmcp.tools.ListJobsTool;
import dev.sandboxmcp.tools.StartJobTool;
import dev.sandboxmcp.tools.StopJobTool;
import dev.sandboxmcp.tools.ListDirectoryTool;
import dev.sandboxmcp.tools.LocalTools;
import dev.sandboxmcp.tools.SandboxTool;
import dev.sandboxmcp.tools.ReadFileTool;
import dev.sandboxmcp.tools.RunCommandTool;
import dev.sandboxmcp.tools.ServerInstructions;
import dev.sandboxmcp.tools.ToolDispatcher;
import dev.sandboxmcp.tools.WriteFileTool;
import dev.sandboxmcp.verify.VerifyCommand;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** Reads the configuration from the environment, starts the server, and stops it on SIGTERM. */
public final class Main {

    /** Output kept per background job: the most recent bytes. */
    static final int JOB_LOG_BYTES = 1024 * 1024;
    /** How long /healthz waits for its checks, and how long one round's answer is reused. */
    static final Duration HEALTH_DEADLINE = Duration.ofSeconds(3);
    static final Duration HEALTH_REUSE = Duration.ofSeconds(5);

    private Main() {
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("verify")) {
            // The SDK client logs each session at INFO; the table is the output.
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
            System.exit(VerifyCommand.run(List.of(args).subList(1, args.length), System.getenv(), System.out, System.err));
        }
        if (args.length > 0 && !args[0].equals("serve")) {
            System.err.println("sandbox-mcp: unknown command '" + args[0]
                    + "'; usage: java -jar sandbox-mcp.jar [serve | verify <base-url>]");
            System.exit(2);
        }
        Config config;
        try {
            config = Config.fromEnvironment(System.getenv());
        } catch (ConfigException e) {
            System.err.println("sandbox-mcp: " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            Running running = start(config, System.getenv(), System.out);
            Runtime.getRuntime().addShutdownHook(new Thread(running::close, "shutdown"));
        } catch (IOException | RuntimeException e) {
            System.err.println("sandbox-mcp: cannot start: " + e.getMessage());
            System.exit(1);
        }
    }

    /** A started server and what it owns; closing it stops everything in order. */
    public record Running(SandboxServer server, CommandRunner runner, JobManager jobs, Workspace workspace)
            implements AutoCloseable {
        @Override
        public void close() {
            server.close();
            runner.close();
            jobs.close();
            try {
                workspace.close();
            } catch (IOException ignored) {
                // the process is ending
            }
        }
    }

    /**
     * Wires and starts the server; {@code environment} is what commands inherit, minus secrets, and
     * audit lines go to {@code auditOut}.
     */
    public static Running start(Config config, Map<String, String> environment, PrintStream auditOut)
            throws IOException {
        // Scrub first: a non-dumpable process's /proc/self/mem belongs to root, and without
        // capabilities (the container) the server itself could no longer open it. Then the
        // non-dumpable flag, in the background; commands wait for it at the gate.
        ProcessHardening.scrubInitialEnvironment(Config.SECRET_VARIABLES.stream().filter(System.getenv()::containsKey).toList());
        CompletableFuture<Boolean> nonDumpable = new CompletableFuture<>();
        Thread.ofPlatform().name("process-hardening").daemon().start(() -> {
            try {
                nonDumpable.complete(ProcessHardening.disableDumpable());
            } finally {
                nonDumpable.complete(false); // whatever happened, the gate must not stay shut
            }
        });
        LaunchGate gate = new LaunchGate(nonDumpable);
        Workspace workspace = Workspace.open(config.workspace());
        Map<String, String> commandEnvironment = commandEnvironment(environment);
        CommandRunner runner = new CommandRunner(commandEnvironment, config.limits().outputCapBytes(),
                config.limits().killGrace(), config.limits().maxConcurrentCommands(), gate);
        JobManager jobs = new JobManager(commandEnvironment, JOB_LOG_BYTES, config.limits().killGrace(),
                config.limits().maxJobs(), config.limits().maxJobs() * 4, gate);
        List<SandboxTool> handlers = List.of(
                new RunCommandTool(runner, workspace, config.limits()),
                new ReadFileTool(workspace, config.limits()),
                new WriteFileTool(workspace, config.limits()),
                new EditFileTool(workspace, config.limits()),
                new ListDirectoryTool(workspace),
                new StartJobTool(jobs, workspace),
                new JobOutputTool(jobs),
                new StopJobTool(jobs),
                new ListJobsTool(jobs));
        ToolDispatcher tools = new ToolDispatcher(handlers.stream().map(SandboxTool::definition).toList(),
                new LocalTools(handlers), new AuditLog(auditOut));
        SandboxServer server = SandboxServer.start(config, tools, ServerInstructions.text(config.limits()), version(),
                health(workspace, runner));
        return new Running(server, runner, jobs, workspace);
    }

    /** What /healthz checks: the workspace answers a lookup, and a command can be started. */
    private static HealthProbe health(Workspace workspace, CommandRunner runner) {
        return new HealthProbe(List.of(
                new HealthProbe.Check("workspace", () -> Files.readAttributes(workspace.root(), BasicFileAttributes.class)),
                new HealthProbe.Check("commands", () -> runner.probe(workspace.root(), HEALTH_DEADLINE))),
                HEALTH_DEADLINE, HEALTH_REUSE);
    }

    static Map<String, String> commandEnvironment(Map<String, String> environment) {
        Map<String, String> env = new HashMap<>(environment);
        Config.SECRET_VARIABLES.forEach(env::remove);
        return env;
    }

    private static String version() {
        try (var in = Main.class.getResourceAsStream("/sandbox-mcp.version")) {
            return in == null ? "dev" : new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return "dev";
        }
    }
}
