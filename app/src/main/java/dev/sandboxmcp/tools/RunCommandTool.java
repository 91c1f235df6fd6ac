package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.CommandResult;
import dev.sandboxmcp.exec.CommandRunner;
import dev.sandboxmcp.exec.Ending;
import dev.sandboxmcp.exec.Job;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.exec.OutputView;
import dev.sandboxmcp.exec.RunningCommand;
import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code run_command}: a shell command in the workspace, bounded in time and output. */
final class RunCommandTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "command": {"type": "string", "minLength": 1},
                "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": %d,
                  "description": "Default %d. At the deadline the command and all it started are killed."},
                "cwd": {"type": "string", "maxLength": %d, "description": "Relative to the workspace root (default: the root)."},
                "stdin": {"type": "string", "description": "Written to the command's stdin, then closed."}
              },
              "required": ["command"],
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "exit_code": {"type": ["integer", "null"], "description": "128+n: signal n; null while still_running."},
                "stdout": {"type": "string", "description": "All, or head and tail around a [...] line on what was left out."},
                "stderr": {"type": "string"},
                "timed_out": {"type": "boolean"},
                "stdout_truncated": {"type": "boolean"},
                "stderr_truncated": {"type": "boolean"},
                "stdout_bytes": {"type": "integer"},
                "stderr_bytes": {"type": "integer"},
                "duration_ms": {"type": "integer"},
                "still_running": {"type": "boolean"},
                "job_id": {"type": "string"},
                "output_id": {"type": "string"},
            %s
              },
              "required": ["exit_code", "stdout", "stderr", "timed_out", "stdout_truncated", "stderr_truncated",
                           "stdout_bytes", "stderr_bytes", "duration_ms", "still_running"]
            }""".formatted(Endings.PROPERTIES);

    static ToolSpec spec(Limits limits) {
        return new ToolSpec("run_command", "Run a shell command",
                "Run /bin/sh -lc in the workspace: exit code, stdout, stderr, and what it took (usage: CPU, peak memory, "
                        + "bytes written; an end by the out-of-memory killer is named). Still running after "
                        + limits.callBudget().toSeconds() + " s: returns still_running and job_id, and goes on as a job "
                        + "until its timeout. Shows " + limits.outputViewBytes() / 1024 + " KiB of output as JSON escapes "
                        + "it (head and tail); job_output with output_id reads the rest. Leftover background processes are "
                        + "killed."
                        + DiskFloorText.stopsWriters(limits),
                INPUT_SCHEMA.formatted(limits.maxTimeout().toSeconds(), limits.defaultTimeout().toSeconds(),
                        Names.MAX_PATH_CHARS), OUTPUT_SCHEMA,
                Hints.destructive().openWorld())
                .target("command").length(CallLength.OWN_TIMEOUT)
                .instructions("run_command: /bin/sh -lc in the workspace root (or cwd, a directory inside it). stdin is "
                        + "closed (a program that asks for input: start_job with stdin_open, then job_input). Default "
                        + "timeout " + limits.defaultTimeout().toSeconds() + " s, at most "
                        + limits.maxTimeout().toSeconds() + " s; at the deadline the command and everything it started are "
                        + "killed, and so is anything it leaves in the background. A call returns within "
                        + limits.callBudget().toSeconds() + " s: a command still running then goes on as a job (still_running, "
                        + "job_id; read it with job_output, end it with stop_job). A result shows "
                        + limits.outputViewBytes() / 1024 + " KiB of output as JSON escapes it, head and tail; a [...] line "
                        + "says what was left out and the job_output call that reads it (output_id, stream, offset). At most "
                        + limits.maxConcurrentCommands() + " commands run at once." + DiskFloorText.stopsWriters(limits));
    }

    private final CommandRunner runner;
    private final JobManager jobs;
    private final Workspace workspace;
    private final Limits limits;

    RunCommandTool(CommandRunner runner, JobManager jobs, Workspace workspace, Limits limits) {
        super(spec(limits));
        this.runner = runner;
        this.jobs = jobs;
        this.workspace = workspace;
        this.limits = limits;
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolRefusal {
        String command = arguments.requiredCommand("command");
        long maxSeconds = limits.maxTimeout().toSeconds();
        long timeoutSeconds = arguments.optionalInteger("timeout_seconds", limits.defaultTimeout().toSeconds());
        if (timeoutSeconds < 1 || timeoutSeconds > maxSeconds) {
            throw new ToolRefusal("timeout_seconds must be from 1 to " + maxSeconds + ", got " + timeoutSeconds
                    + "; for longer work split it into steps");
        }
        String cwd = arguments.optionalString("cwd", ".");
        Path directory;
        try {
            directory = workspace.resolveDirectory(cwd);
        } catch (IOException e) {
            throw WorkspaceErrors.cwd(cwd, e);
        }
        String stdin = arguments.optionalString("stdin", null);
        byte[] input = stdin == null ? null : stdin.getBytes(StandardCharsets.UTF_8);
        if (input != null && input.length > limits.fileMaxBytes()) {
            throw new ToolRefusal("stdin is " + input.length + " bytes, over the limit of " + limits.fileMaxBytes()
                    + "; write it to a file with write_file and redirect it instead");
        }
        Thread ticker = startTicker(progress, limits.progressInterval(),
                Math.min(timeoutSeconds, limits.callBudget().toSeconds()));
        try {
            return switch (runner.run(command, directory, Duration.ofSeconds(timeoutSeconds), input, limits.callBudget())) {
                case CommandResult result -> finished(command, cwd, timeoutSeconds, result);
                case RunningCommand running -> handedOver(command, timeoutSeconds, running, jobs.adopt(running, command, cwd));
            };
        } catch (CommandRunner.BusyException e) {
            throw new ToolRefusal("busy: " + e.getMessage());
        } catch (IOException e) {
            throw new ToolRefusal("the command could not be started: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ToolRefusal("cancelled: the command and everything it started were killed");
        } finally {
            if (ticker != null) {
                ticker.interrupt();
            }
        }
    }

    /** Every {@code interval}, a progress notification, so that streams stay alive behind proxies. */
    private static Thread startTicker(Progress progress, Duration interval, long timeoutSeconds) {
        if (progress == Progress.NONE) {
            return null;
        }
        long started = System.nanoTime();
        return Thread.ofVirtual().name("progress").start(() -> {
            try {
                while (true) {
                    Thread.sleep(interval);
                    long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();
                    progress.report(seconds, (double) timeoutSeconds, "running for " + seconds + " s");
                }
            } catch (InterruptedException done) {
                // the command finished
            }
        });
    }

    private ToolResponse finished(String command, String cwd, long timeoutSeconds, CommandResult result) {
        OutputView[] views = OutputView.of(result.stdout(), result.stderr(), limits.outputViewBytes());
        String outputId = views[0].cut() || views[1].cut() ? jobs.keep(command, cwd, result) : null;
        String reason = Endings.reason(result.ending());
        String headline = result.timedOut()
                ? "timed out after " + timeoutSeconds + " s; the command and everything it started were killed (exit code "
                        + result.exitCode() + ")"
                : reason != null ? reason + ": exit code " + result.exitCode() + " after " + result.durationMillis()
                        + " ms"
                : "exit code " + result.exitCode() + " after " + result.durationMillis() + " ms";
        String usage = Endings.usageLine(result.ending());
        return describe(command, usage == null ? headline : headline + "\n" + usage, views, outputId,
                result.durationMillis(), result.ending(), null);
    }

    private ToolResponse handedOver(String command, long timeoutSeconds, RunningCommand running, Job job) {
        OutputView[] views = OutputView.of(running.streams().get("stdout"), running.streams().get("stderr"),
                limits.outputViewBytes());
        String headline = "still running after " + limits.callBudget().toSeconds() + " s (the call budget): it goes on as "
                + job.id() + " until its " + timeoutSeconds + " s timeout; call job_output {\"id\": \"" + job.id()
                + "\"} for its output from the start and its exit code";
        return describe(command, headline, views, job.id(), running.elapsedMillis(), null, job);
    }

    /**
     * The result: the headline, then each stream as shown; the structured form says the same.
     * {@code ending} is null while the command runs on as {@code job}.
     */
    private ToolResponse describe(String command, String headline, OutputView[] views, String outputId,
            long durationMillis, Ending ending, Job job) {
        Integer exitCode = ending == null ? null : ending.exitCode();
        boolean timedOut = ending != null && ending.timedOut();
        String stdout = shown(views[0], outputId, "stdout");
        String stderr = shown(views[1], outputId, "stderr");
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("exit_code", exitCode);
        structured.put("stdout", stdout);
        structured.put("stderr", stderr);
        structured.put("timed_out", timedOut);
        structured.put("stdout_truncated", views[0].cut());
        structured.put("stderr_truncated", views[1].cut());
        structured.put("stdout_bytes", views[0].totalBytes());
        structured.put("stderr_bytes", views[1].totalBytes());
        structured.put("duration_ms", durationMillis);
        structured.put("still_running", job != null);
        if (job != null) {
            structured.put("job_id", job.id());
        }
        if (outputId != null) {
            structured.put("output_id", outputId);
        }
        Endings.put(structured, ending);
        StringBuilder text = new StringBuilder(headline).append('\n');
        appendStream(text, "stdout", views[0], stdout);
        appendStream(text, "stderr", views[1], stderr);
        long bytes = views[0].totalBytes() + views[1].totalBytes();
        return new ToolResponse(false, text.toString(), structured, command, exitCode, bytes, timedOut);
    }

    /** The stream as shown: all of it, or its head, a line saying what was left out and how to read it, and its tail. */
    private String shown(OutputView view, String outputId, String stream) {
        if (!view.cut()) {
            return view.head();
        }
        StringBuilder shown = new StringBuilder(view.head());
        if (!view.head().isEmpty() && !view.head().endsWith("\n")) {
            shown.append('\n');
        }
        shown.append("[... ").append(view.omittedTo() - view.omittedFrom()).append(" bytes (").append(view.omittedLines())
                .append(" lines) left out: bytes ").append(view.omittedFrom()).append(" to ").append(view.omittedTo());
        if (view.droppedBytes() > 0) {
            shown.append(", of which ").append(view.droppedBytes()).append(" were not kept (a stream keeps its first ")
                    .append(limits.outputViewBytes() / 1024).append(" KiB and last ").append(limits.outputCapBytes() / 1024)
                    .append(" KiB)");
        }
        shown.append("; read them with job_output {\"id\": \"").append(outputId).append("\", \"stream\": \"")
                .append(stream).append("\", \"offset\": ").append(view.omittedFrom()).append("} ...]\n").append(view.tail());
        return shown.toString();
    }

    private static void appendStream(StringBuilder text, String name, OutputView view, String shown) {
        if (view.totalBytes() == 0) {
            return;
        }
        text.append("--- ").append(name).append(view.cut() ? " (" + view.totalBytes() + " bytes)" : "").append(" ---\n")
                .append(shown);
        if (!shown.endsWith("\n")) {
            text.append('\n');
        }
    }
}
