package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.Job;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
import java.nio.file.Path;

/** {@code start_job}: a command in the background, for work that outlives one call. */
final class StartJobTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "command": {"type": "string", "minLength": 1, "description": "Run with /bin/sh -lc."},
                "cwd": {"type": "string", "maxLength": %d, "description": "Relative to the workspace root (default: the root)."},
                "stdin_open": {"type": "boolean",
                  "description": "Keep its stdin open for job_input (a prompt, a REPL). Default false: end of file."}
              },
              "required": ["command"],
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
            %s
              },
              "required": ["id", "command", "running"]
            }""".formatted(JobResults.JOB_PROPERTIES);

    static ToolSpec spec(Limits limits) {
        return new ToolSpec("start_job", "Start a background job",
                "Start a shell command in the background (servers, builds, REPLs) with no deadline and return its id at "
                        + "once; job_output reads its combined output, job_input writes to its stdin (with stdin_open), "
                        + "stop_job ends it. A job's result says what it took once it has ended."
                        + DiskFloorText.stopsWriters(limits),
                INPUT_SCHEMA.formatted(Names.MAX_PATH_CHARS), OUTPUT_SCHEMA, Hints.destructive().openWorld())
                .target("command")
                .instructions("start_job / job_output / stop_job / list_jobs: background work with no deadline (servers, "
                        + "watchers). Jobs survive reconnects and are killed when the server stops. job_output pages by byte "
                        + "offset, " + limits.pageBytes() / 1024 + " KiB a page as JSON escapes it. An ended job (and every "
                        + "run_command result) says what it took: CPU, peak memory, bytes written, and whether the out-of-memory "
                        + "killer ended it.");
    }

    private final JobManager jobs;
    private final Workspace workspace;

    StartJobTool(JobManager jobs, Workspace workspace, Limits limits) {
        super(spec(limits));
        this.jobs = jobs;
        this.workspace = workspace;
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolRefusal {
        String command = arguments.requiredCommand("command");
        String cwd = arguments.optionalString("cwd", ".");
        boolean stdinOpen = arguments.optionalBoolean("stdin_open", false);
        Path directory;
        try {
            directory = workspace.resolveDirectory(cwd);
        } catch (IOException e) {
            throw WorkspaceErrors.cwd(cwd, e);
        }
        try {
            Job job = jobs.start(command, directory, cwd, stdinOpen);
            return ToolResponse.success("started " + job.id() + ": " + command + "\nread its output with job_output {\"id\": \""
                    + job.id() + "\"}" + (stdinOpen ? "; write to its stdin with job_input {\"id\": \"" + job.id()
                    + "\", \"input\": \"...\\n\"}" : ""), JobResults.of(job), command, null);
        } catch (JobManager.TooManyJobsException e) {
            throw new ToolRefusal("busy: " + e.limit() + " jobs are already running (the limit); "
                    + "stop one with stop_job or wait for one to finish");
        } catch (IOException e) {
            throw new ToolRefusal("the job could not be started: " + e.getMessage());
        }
    }
}
