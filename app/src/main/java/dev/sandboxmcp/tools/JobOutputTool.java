package dev.sandboxmcp.tools;

import dev.sandboxmcp.exec.Job;
import dev.sandboxmcp.exec.JobManager;
import java.util.Map;
import java.util.Optional;

/** {@code job_output}: a page of a job's combined output, and whether it still runs. */
public final class JobOutputTool extends DefinedTool {

    static final int PAGE_BYTES = 256 * 1024;

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "id": {"type": "string", "minLength": 1},
                "offset": {"type": "integer", "minimum": 0,
                  "description": "Byte offset to read from (default 0); pass the previous next_offset to continue."}
              },
              "required": ["id"],
              "additionalProperties": false
            }""";

    private final JobManager jobs;

    public JobOutputTool(JobManager jobs) {
        this.jobs = jobs;
        super(Schemas.tool("job_output", "Read a job's output",
                "Read a background job's combined stdout and stderr from a byte offset (at most " + PAGE_BYTES / 1024
                        + " KiB a call), with whether it is still running and its exit code. The job keeps its most recent "
                        + "output; dropped_bytes says how much older output is gone.",
                INPUT_SCHEMA, "{\"type\":\"object\",\"properties\":{" + JobResults.JOB_PROPERTIES + ","
                        + "\"output\":{\"type\":\"string\"},\"offset\":{\"type\":\"integer\"},\"next_offset\":{\"type\":\"integer\"},"
                        + "\"dropped_bytes\":{\"type\":\"integer\"},\"has_more\":{\"type\":\"boolean\"}},"
                        + "\"required\":[\"id\",\"running\",\"output\",\"offset\",\"next_offset\",\"has_more\"]}",
                Schemas.annotations("Read a job's output", true, false, false, false)));
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolInputException {
        String id = arguments.requiredString("id");
        long offset = arguments.optionalInteger("offset", 0);
        if (offset < 0) {
            throw new ToolInputException("offset must be 0 or more");
        }
        // Read the state before the output, so "not running" guarantees the page holds the end.
        Optional<Job> job = jobs.get(id);
        var page = jobs.output(id, offset, PAGE_BYTES);
        if (job.isEmpty() || page.isEmpty()) {
            return JobResults.unknown(id);
        }
        Map<String, Object> structured = JobResults.of(job.get());
        structured.put("output", page.get().text());
        structured.put("offset", page.get().start());
        structured.put("next_offset", page.get().next());
        structured.put("dropped_bytes", page.get().dropped());
        boolean hasMore = page.get().next() < page.get().total();
        structured.put("has_more", hasMore);
        String text = JobResults.describe(job.get()) + "\n"
                + (page.get().dropped() > 0 ? "[" + page.get().dropped() + " older bytes were dropped]\n" : "")
                + page.get().text()
                + (hasMore ? "\n[more output: call again with offset=" + page.get().next() + "]" : "");
        return ToolResponse.success(text, structured, id, (long) page.get().text().length());
    }
}
