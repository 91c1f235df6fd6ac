package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.Job;
import dev.sandboxmcp.exec.JobManager;
import java.util.Optional;

/** {@code stop_job}: kills a job's whole process tree. */
final class StopJobTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {"type": "object", "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 64}}, "required": ["id"],
             "additionalProperties": false}""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
            %s
              },
              "required": ["id", "running"]
            }""".formatted(JobResults.JOB_PROPERTIES);

    private static final ToolSpec SPEC = new ToolSpec("stop_job", "Stop a background job",
            "Stop a background job: SIGTERM to its whole process tree, SIGKILL after a short grace. Its output stays "
                    + "readable with job_output.",
            INPUT_SCHEMA, OUTPUT_SCHEMA, Hints.destructive().idempotent())
            .target("id");

    static ToolSpec spec(Limits limits) {
        return SPEC;
    }

    private final JobManager jobs;

    StopJobTool(JobManager jobs) {
        super(SPEC);
        this.jobs = jobs;
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolRefusal {
        String id = arguments.requiredString("id");
        Optional<Job> job;
        try {
            job = jobs.stop(id);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ToolRefusal("interrupted while stopping " + id);
        }
        Job stopped = job.orElseThrow(() -> JobResults.unknown(id));
        return ToolResponse.success(JobResults.describe(stopped), JobResults.of(stopped), id, null);
    }
}
