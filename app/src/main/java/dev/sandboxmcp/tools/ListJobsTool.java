package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.Job;
import dev.sandboxmcp.exec.JobManager;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code list_jobs}: the background jobs this server knows. */
public final class ListJobsTool extends DefinedTool {

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
     * The most of a job's command (and of its directory) a listing shows: every kept job's command
     * whole (up to {@code Limits.COMMAND_BYTES} each, twice) would make a listing of megabytes, past
     * what the runner may send the server. job_output shows a command whole.
     */
    private static final int MOST_LISTED_CHARS = 1024;
    /** Fewer would not say which command it was; a listing cut this far may pass the budget ({@link #largestListingBytes}). */
    private static final int LEAST_LISTED_CHARS = 64;
    /** What a job's entry takes as JSON besides its command and directory: its other fields, in the text and the structure. */
    private static final int JOB_FIELDS_BYTES = 1536;

    /**
     * How much of each job's command and directory a listing shows: at most {@link
     * #MOST_LISTED_CHARS}, and less when the jobs held are so many that the listing of every one,
     * commands (twice: text and structure) and directories of characters JSON writes as six bytes,
     * would pass what a result's text may take ({@link Limits#resultTextBytes}, as a directory listing).
     */
    private static int listedChars(Limits limits) {
        long share = limits.resultTextBytes() / limits.mostJobsHeld() - JOB_FIELDS_BYTES;
        return (int) Math.clamp(share / (3 * 6), LEAST_LISTED_CHARS, MOST_LISTED_CHARS);
    }

    /**
     * The most a listing takes as JSON: every job the table may hold, at {@link #JOB_FIELDS_BYTES}
     * and its cut command and directory each. Within the budget unless so many jobs are held that
     * the cut is at its floor: then more, and the channel's bound makes room for it.
     */
    public static long largestListingBytes(Limits limits) {
        return (long) limits.mostJobsHeld() * (JOB_FIELDS_BYTES + 3 * 6 * listedChars(limits));
    }

    static ToolSpec spec(Limits limits) {
        return new ToolSpec("list_jobs", "List background jobs",
                "List the background jobs this server knows, running and finished, oldest first. A command or directory "
                        + "longer than " + listedChars(limits) + " characters is shown cut (job_output shows it whole).",
                INPUT_SCHEMA, OUTPUT_SCHEMA, Hints.readOnly().idempotent());
    }

    private final JobManager jobs;
    private final int listedChars;

    ListJobsTool(JobManager jobs, Limits limits) {
        super(spec(limits));
        this.jobs = jobs;
        this.listedChars = listedChars(limits);
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) {
        List<Job> all = jobs.list();
        StringBuilder text = new StringBuilder(all.isEmpty() ? "no jobs\n" : "");
        all.forEach(job -> text.append(JobResults.describe(job, listedChars)).append('\n'));
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("jobs", all.stream().map(job -> JobResults.of(job, listedChars)).toList());
        return ToolResponse.success(text.toString(), structured, null, null);
    }
}
