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

    private static final ToolSpec SPEC = new ToolSpec("list_jobs", "List background jobs",
            "List the background jobs this server knows, running and finished, oldest first.",
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
        all.forEach(job -> text.append(JobResults.describe(job)).append('\n'));
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("jobs", all.stream().map(JobResults::of).toList());
        return ToolResponse.success(text.toString(), structured, null, null);
    }
}
