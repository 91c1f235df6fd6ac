package dev.sandboxmcp.tools;

import dev.sandboxmcp.exec.Job;
import dev.sandboxmcp.exec.JobManager;
import java.util.Optional;

/** {@code stop_job}: kills a job's whole process tree. */
public final class StopJobTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {"type": "object", "properties": {"id": {"type": "string", "minLength": 1}}, "required": ["id"],
             "additionalProperties": false}""";

    private final JobManager jobs;

    public StopJobTool(JobManager jobs) {
        this.jobs = jobs;
        super(Schemas.tool("stop_job", "Stop a background job",
                "Stop a background job: SIGTERM to its whole process tree, SIGKILL after a short grace. Its output stays "
                        + "readable with job_output.",
                INPUT_SCHEMA, "{\"type\":\"object\",\"properties\":{" + JobResults.JOB_PROPERTIES + "},"
                        + "\"required\":[\"id\",\"running\"]}",
                Schemas.annotations("Stop a background job", false, true, true, false)));
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolInputException {
        String id = arguments.requiredString("id");
        Optional<Job> job;
        try {
            job = jobs.stop(id);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ToolResponse.failure(id, "interrupted while stopping " + id);
        }
        return job.map(j -> ToolResponse.success(JobResults.describe(j), JobResults.of(j), id, null))
                .orElseGet(() -> JobResults.unknown(id));
    }
}
