package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.Job;
import dev.sandboxmcp.exec.JobManager;
import dev.sandboxmcp.exec.OutputPage;
import java.util.Map;
import java.util.Optional;

/**
 * {@code job_output}: a page of a job's output (or of a finished command's kept output, by its
 * output_id), and whether it still runs.
 */
final class JobOutputTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "A job id or an output_id."},
                "stream": {"type": "string", "enum": ["output", "stdout", "stderr"],
                  "description": "Default: output for start_job, else stdout."},
                "offset": {"type": "integer", "minimum": 0, "description": "Bytes; next_offset continues."}
              },
              "required": ["id"],
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
            %s,
                "stream": {"type": "string"},
                "output": {"type": "string"},
                "offset": {"type": "integer"},
                "next_offset": {"type": "integer"},
                "dropped_bytes": {"type": "integer"},
                "has_more": {"type": "boolean"}
              },
              "required": ["id", "running", "stream", "output", "offset", "next_offset", "has_more"]
            }""".formatted(JobResults.JOB_PROPERTIES);

    static ToolSpec spec(Limits limits) {
        return new ToolSpec("job_output", "Read a job's output",
                "Read a job's output, or a run_command's by its output_id, from a byte offset (" + limits.pageBytes() / 1024
                        + " KiB a page as JSON escapes it), with whether it still runs, its exit code, and once ended what "
                        + "it took (usage) and whether the out-of-memory killer ended it.",
                INPUT_SCHEMA, OUTPUT_SCHEMA, Hints.readOnly())
                .target("id");
    }

    private final JobManager jobs;
    private final int pageBytes;

    JobOutputTool(JobManager jobs, Limits limits) {
        super(spec(limits));
        this.jobs = jobs;
        this.pageBytes = limits.pageBytes();
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolRefusal {
        String id = arguments.requiredString("id");
        long offset = arguments.optionalInteger("offset", 0);
        if (offset < 0) {
            throw new ToolRefusal("offset must be 0 or more");
        }
        // Read the state before the output, so "not running" guarantees the page holds the end.
        Optional<Job> job = jobs.get(id);
        if (job.isEmpty()) {
            throw JobResults.unknown(id);
        }
        String stream = arguments.optionalString("stream", job.get().streams().getFirst());
        Optional<OutputPage> found = jobs.output(id, stream, offset, pageBytes);
        if (found.isEmpty()) {
            throw new ToolRefusal(id + " has no stream '" + stream + "'; it has " + String.join(" and ",
                    job.get().streams()));
        }
        OutputPage page = found.get();
        Map<String, Object> structured = JobResults.of(job.get());
        structured.put("stream", stream);
        structured.put("output", page.text());
        structured.put("offset", page.start());
        structured.put("next_offset", page.next());
        structured.put("dropped_bytes", page.dropped());
        boolean hasMore = page.next() < page.total();
        structured.put("has_more", hasMore);
        String text = JobResults.describe(job.get()) + "\n"
                + (page.dropped() > 0 ? "[" + page.dropped() + " bytes before offset " + page.start()
                        + " are no longer kept]\n" : "")
                + page.text()
                + (hasMore ? "\n[" + stream + " bytes " + page.start() + " to " + page.next() + " of " + page.total()
                        + "; more: job_output {\"id\": \"" + id + "\", \"stream\": \"" + stream + "\", \"offset\": "
                        + page.next() + "}]" : "");
        return ToolResponse.success(text, structured, id, (long) page.text().length());
    }
}
