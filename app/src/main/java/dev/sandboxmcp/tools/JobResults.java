package dev.sandboxmcp.tools;

import dev.sandboxmcp.WholeChars;
import dev.sandboxmcp.exec.Job;
import java.util.LinkedHashMap;
import java.util.Map;

/** The structured form of a job, shared by the job tools. */
final class JobResults {

    static final String JOB_PROPERTIES = """
                "id": {"type": "string"},
                "command": {"type": "string"},
                "command_chars": {"type": "integer", "description": "The command's full length, when the listing shows it cut."},
                "cwd": {"type": "string"},
                "cwd_chars": {"type": "integer", "description": "The directory's full length, when the listing shows it cut."},
                "running": {"type": "boolean"},
                "exit_code": {"type": ["integer", "null"]},
                "stopped": {"type": "boolean"},
                "started": {"type": "string"},
                "duration_ms": {"type": "integer"},
                "output_bytes": {"type": "integer"},
                "timed_out": {"type": "boolean"},
                "streams": {"type": "array", "items": {"type": "string"}},
                "stdin_open": {"type": "boolean", "description": "job_input can write to it."},
            """ + Endings.PROPERTIES;

    private JobResults() {
    }

    static Map<String, Object> of(Job job) {
        return of(job, Integer.MAX_VALUE);
    }

    /** The job with its command and its directory each cut to {@code chars}, and the full length beside one cut. */
    static Map<String, Object> of(Job job, int chars) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("id", job.id());
        putCut(map, "command", job.command(), chars);
        putCut(map, "cwd", job.cwd(), chars);
        map.put("running", job.running());
        map.put("exit_code", job.exitCode());
        map.put("stopped", job.stopped());
        map.put("started", job.started().toString());
        map.put("duration_ms", job.durationMillis());
        map.put("output_bytes", job.outputBytes());
        map.put("timed_out", job.timedOut());
        map.put("streams", job.streams());
        map.put("stdin_open", job.stdinOpen());
        Endings.put(map, job.ending());
        return map;
    }

    private static void putCut(Map<String, Object> map, String name, String value, int chars) {
        map.put(name, WholeChars.prefix(value, chars));
        if (value.length() > chars) {
            map.put(name + "_chars", value.length());
        }
    }

    static String describe(Job job) {
        return describe(job, Integer.MAX_VALUE);
    }

    /** One line about the job, its command cut to {@code commandChars} with a note saying so. */
    static String describe(Job job, int commandChars) {
        String command = job.command().length() <= commandChars ? job.command()
                : WholeChars.prefix(job.command(), commandChars) + " [... command cut: " + job.command().length()
                        + " characters; job_output {\"id\": \"" + job.id() + "\"} shows it whole]";
        String reason = job.running() ? null : Endings.reason(job.ending());
        String usage = Endings.usageLine(job.ending());
        return job.id() + " " + (job.running() ? "running"
                : (job.stopped() ? "stopped" : job.timedOut() ? "killed at its deadline"
                        : reason != null ? reason + "," : "exited") + " with code " + job.exitCode())
                + " after " + job.durationMillis() + " ms, " + job.outputBytes() + " bytes of output: " + command
                + (usage == null ? "" : "\n  " + usage);
    }

    static ToolRefusal unknown(String id) {
        return new ToolRefusal("no job '" + id + "'; list_jobs shows the jobs this server knows");
    }
}
