package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.Job;
import dev.sandboxmcp.exec.JobManager;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code list_jobs}: the background jobs this server knows. */
final class ListJobsTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {"type": "object", "properties": {}, "additionalProperties": false}""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "jobs": {"type": "array", "items": {"type": "object", "properties": {
            %s
                }}}
              },
              "required": ["jobs"]
            }""".formatted(JobResults.JOB_PROPERTIES);

    /**
     * The most of a job's command a listing shows: every kept job's command whole (up to
     * {@code Limits.COMMAND_BYTES} each, twice) would make a listing of megabytes, past what the
     * runner may send the server. job_output shows a command whole.
     */
    static final int LISTED_COMMAND_CHARS = 1024;

    private static final ToolSpec SPEC = new ToolSpec("list_jobs", "List background jobs",
            "List the background jobs this server knows, running and finished, oldest first. A command longer than "
                    + LISTED_COMMAND_CHARS + " characters is shown cut (job_output shows it whole).",
            INPUT_SCHEMA, OUTPUT_SCHEMA, Hints.readOnly().idempotent());

    static ToolSpec spec(Limits limits) {
        return SPEC;
    }

    private final JobManager jobs;

    ListJobsTool(JobManager jobs) {
        super(SPEC);
        this.jobs = jobs;
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) {
        List<Job> all = jobs.list();
        StringBuilder text = new StringBuilder(all.isEmpty() ? "no jobs\n" : "");
        all.forEach(job -> text.append(JobResults.describe(job, LISTED_COMMAND_CHARS)).append('\n'));
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("jobs", all.stream().map(job -> JobResults.of(job, LISTED_COMMAND_CHARS)).toList());
        return ToolResponse.success(text.toString(), structured, null, null);
    }
}
