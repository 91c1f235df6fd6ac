package dev.sandboxmcp.tools;

import dev.sandboxmcp.exec.Job;
import dev.sandboxmcp.exec.JobManager;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code list_jobs}: the background jobs this server knows. */
public final class ListJobsTool extends DefinedTool {

    private final JobManager jobs;

    public ListJobsTool(JobManager jobs) {
        this.jobs = jobs;
        super(Schemas.tool("list_jobs", "List background jobs",
                "List the background jobs this server knows, running and finished, oldest first.",
                "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
                "{\"type\":\"object\",\"properties\":{\"jobs\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
                        + "\"properties\":{" + JobResults.JOB_PROPERTIES + "}}}},\"required\":[\"jobs\"]}",
                Schemas.annotations("List background jobs", true, false, true, false)));
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
