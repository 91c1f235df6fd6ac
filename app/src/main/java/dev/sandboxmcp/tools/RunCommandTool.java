package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.CapturedOutput;
import dev.sandboxmcp.exec.CommandResult;
import dev.sandboxmcp.exec.CommandRunner;
import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.Workspace;
import dev.sandboxmcp.workspace.WorkspaceException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code run_command}: a shell command in the workspace, bounded in time and output. */
public final class RunCommandTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "command": {"type": "string", "minLength": 1,
                  "description": "Shell command line, run with /bin/sh -lc (pipes, &&, redirects work)."},
                "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": %d,
                  "description": "Deadline in seconds (default %d, at most %d). On expiry the command and everything it started are killed."},
                "cwd": {"type": "string",
                  "description": "Working directory relative to the workspace root (default: the root)."},
                "stdin": {"type": "string",
                  "description": "Text written to the command's standard input, which is then closed (default: no input)."}
              },
              "required": ["command"],
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "exit_code": {"type": "integer", "description": "Exit status; 128+n when signal n ended the shell."},
                "stdout": {"type": "string"},
                "stderr": {"type": "string"},
                "timed_out": {"type": "boolean"},
                "stdout_truncated": {"type": "boolean"},
                "stderr_truncated": {"type": "boolean"},
                "stdout_bytes": {"type": "integer", "description": "Bytes the command wrote to stdout in all."},
                "stderr_bytes": {"type": "integer", "description": "Bytes the command wrote to stderr in all."},
                "duration_ms": {"type": "integer"}
              },
              "required": ["exit_code", "stdout", "stderr", "timed_out", "stdout_truncated", "stderr_truncated",
                           "stdout_bytes", "stderr_bytes", "duration_ms"]
            }""";

    static final Duration PROGRESS_INTERVAL = Duration.ofSeconds(5);

    private final CommandRunner runner;
    private final Workspace workspace;
    private final Limits limits;

    public RunCommandTool(CommandRunner runner, Workspace workspace, Limits limits) {
        this.runner = runner;
        this.workspace = workspace;
        this.limits = limits;
        long max = limits.maxTimeout().toSeconds();
        super(Schemas.tool("run_command", "Run a shell command",
                "Run a shell command in the sandbox workspace (the user's development directory) and return its exit "
                        + "code, stdout and stderr. /bin/sh -lc, stdin closed, default timeout "
                        + limits.defaultTimeout().toSeconds() + " s (max " + max + " s); stdout and stderr are each cut at "
                        + limits.outputCapBytes() / 1024 + " KiB (the result says when). Background processes the "
                        + "command leaves behind are killed when it returns; use start_job for work that must keep running. "
                        + "Optional stdin text; progress notifications every 5 s where the transport carries them.",
                INPUT_SCHEMA.formatted(max, limits.defaultTimeout().toSeconds(), max), OUTPUT_SCHEMA,
                Schemas.annotations("Run a shell command", false, true, false, true)));
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolInputException {
        String command = arguments.requiredCommand("command");
        long maxSeconds = limits.maxTimeout().toSeconds();
        long timeoutSeconds = arguments.optionalInteger("timeout_seconds", limits.defaultTimeout().toSeconds());
        if (timeoutSeconds < 1 || timeoutSeconds > maxSeconds) {
            throw new ToolInputException("timeout_seconds must be from 1 to " + maxSeconds + ", got " + timeoutSeconds
                    + "; for longer work split it into steps");
        }
        String cwd = arguments.optionalString("cwd", ".");
        Path directory;
        try {
            directory = workspace.resolveDirectory(cwd);
        } catch (WorkspaceException e) {
            return ToolResponse.failure(command, "cwd: " + e.getMessage());
        } catch (IOException e) {
            return ToolResponse.failure(command, "cwd " + Names.quoted(cwd) + " cannot be used: " + e.getMessage());
        }
        String stdin = arguments.optionalString("stdin", null);
        byte[] input = stdin == null ? null : stdin.getBytes(StandardCharsets.UTF_8);
        if (input != null && input.length > limits.fileMaxBytes()) {
            return ToolResponse.failure(command, "stdin is " + input.length + " bytes, over the limit of " + limits.fileMaxBytes()
                    + "; write it to a file with write_file and redirect it instead");
        }
        Thread ticker = startTicker(progress, timeoutSeconds);
        try {
            CommandResult result = runner.run(command, directory, Duration.ofSeconds(timeoutSeconds), input);
            return describe(command, timeoutSeconds, result);
        } catch (CommandRunner.BusyException e) {
            return ToolResponse.failure(command, "busy: " + e.getMessage());
        } catch (IOException e) {
            return ToolResponse.failure(command, "the command could not be started: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ToolResponse.failure(command, "the server is shutting down; the command was stopped");
        } finally {
            if (ticker != null) {
                ticker.interrupt();
            }
        }
    }

    /** Every few seconds, a progress notification, so that streams stay alive behind proxies. */
    private static Thread startTicker(Progress progress, long timeoutSeconds) {
        if (progress == Progress.NONE) {
            return null;
        }
        long started = System.nanoTime();
        return Thread.ofVirtual().name("progress").start(() -> {
            try {
                while (true) {
                    Thread.sleep(PROGRESS_INTERVAL);
                    long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();
                    progress.report(seconds, (double) timeoutSeconds, "running for " + seconds + " s");
                }
            } catch (InterruptedException done) {
                // the command finished
            }
        });
    }

    private static ToolResponse describe(String command, long timeoutSeconds, CommandResult result) {
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("exit_code", result.exitCode());
        structured.put("stdout", result.stdout().text());
        structured.put("stderr", result.stderr().text());
        structured.put("timed_out", result.timedOut());
        structured.put("stdout_truncated", result.stdout().truncated());
        structured.put("stderr_truncated", result.stderr().truncated());
        structured.put("stdout_bytes", result.stdout().totalBytes());
        structured.put("stderr_bytes", result.stderr().totalBytes());
        structured.put("duration_ms", result.durationMillis());

        StringBuilder text = new StringBuilder();
        if (result.timedOut()) {
            text.append("timed out after ").append(timeoutSeconds)
                    .append(" s; the command and everything it started were killed (exit code ")
                    .append(result.exitCode()).append(")\n");
        } else {
            text.append("exit code ").append(result.exitCode()).append(" after ").append(result.durationMillis()).append(" ms\n");
        }
        appendStream(text, "stdout", result.stdout());
        appendStream(text, "stderr", result.stderr());
        long bytes = result.stdout().totalBytes() + result.stderr().totalBytes();
        return new ToolResponse(false, text.toString(), structured, command, result.exitCode(), bytes, result.timedOut());
    }

    private static void appendStream(StringBuilder text, String name, CapturedOutput output) {
        if (output.totalBytes() == 0) {
            return;
        }
        text.append("--- ").append(name);
        if (output.truncated()) {
            text.append(" (truncated: ").append(output.text().length()).append(" characters kept of ")
                    .append(output.totalBytes()).append(" bytes)");
        }
        text.append(" ---\n").append(output.text());
        if (!output.text().endsWith("\n")) {
            text.append('\n');
        }
    }
}
