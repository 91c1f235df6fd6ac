package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.InputOutcome;
import dev.sandboxmcp.exec.Job;
import dev.sandboxmcp.exec.JobManager;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/** {@code job_input}: text written to a running job's stdin (a prompt's answer, a REPL's next line), or its end. */
final class JobInputTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "A job started with stdin_open: true."},
                "input": {"type": "string", "description": "Written as UTF-8, as is: end a line with \\\\n. Default: nothing."},
                "close": {"type": "boolean", "description": "Then close the job's stdin: it reads end of file. Default false."}
              },
              "required": ["id"],
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "id": {"type": "string"},
                "bytes_written": {"type": "integer"},
                "bytes_pending": {"type": "integer", "description": "Not yet read by the job; written in order as it reads."},
                "stdin_open": {"type": "boolean"},
                "output_offset": {"type": "integer", "description": "Where the job's output stood when the input went: \
            job_output from here shows what came back."}
              },
              "required": ["id", "bytes_written", "bytes_pending", "stdin_open", "output_offset"]
            }""";

    static ToolSpec spec(Limits limits) {
        return new ToolSpec("job_input", "Write to a job's stdin",
                "Write text to the stdin of a job started with stdin_open: true (answer a prompt, feed a REPL), at most "
                        + limits.jobInputBytes() / 1024 + " KiB a call; close: true then ends its input. job_output from "
                        + "output_offset reads what came back.",
                INPUT_SCHEMA, OUTPUT_SCHEMA, Hints.destructive().openWorld())
                .target("id")
                .instructions("job_input: for a program that waits for input (a y/N prompt, npm init, python3 -i): start it "
                        + "with start_job stdin_open: true, read its prompt with job_output, answer with job_input (include "
                        + "the \\n), read the reply with job_output from output_offset; close: true sends end of file. At most "
                        + limits.jobInputBytes() / 1024 + " KiB a call. Prefer a non-interactive flag (--yes) when the "
                        + "program has one.");
    }

    private final JobManager jobs;
    private final int maxBytes;

    JobInputTool(JobManager jobs, Limits limits) {
        super(spec(limits));
        this.jobs = jobs;
        this.maxBytes = limits.jobInputBytes();
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolRefusal {
        String id = arguments.requiredString("id");
        byte[] input = arguments.optionalString("input", "").getBytes(StandardCharsets.UTF_8);
        boolean close = arguments.optionalBoolean("close", false);
        if (input.length > maxBytes) {
            throw new ToolRefusal("input is " + input.length + " bytes, over the limit of " + maxBytes
                    + " bytes a call; send it in several calls, or write it to a file with write_file and have the job "
                    + "read that");
        }
        if (input.length == 0 && !close) {
            throw new ToolRefusal("nothing to do: give input, or close: true to end the job's input");
        }
        Optional<Job> before = jobs.get(id);
        if (before.isEmpty()) {
            throw JobResults.unknown(id);
        }
        String stream = before.get().streams().getFirst();
        long offset = jobs.output(id, stream, Long.MAX_VALUE, 0).map(page -> page.total()).orElse(0L);
        Optional<InputOutcome> outcome;
        try {
            outcome = jobs.input(id, input, close);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ToolRefusal("interrupted while writing to " + id + "'s stdin; job_output shows whether "
                    + "it read the input");
        }
        if (outcome.isEmpty()) {
            throw JobResults.unknown(id);
        }
        return switch (outcome.get()) {
            case InputOutcome.Written written -> written(id, stream, offset, written);
            case InputOutcome.Refused refused -> throw refused(id, refused);
        };
    }

    private static ToolResponse written(String id, String stream, long offset, InputOutcome.Written written) {
        String text = "wrote " + written.bytes() + " bytes to " + id + "'s stdin"
                + (written.pending() > 0 ? "; " + written.pending() + " more wait for the job to read them (they go in "
                        + "order; the next job_input waits until they have)" : "")
                + (written.closed() ? "; its stdin is closed: it reads end of file after them" : "")
                + "\nread what came back with job_output {\"id\": \"" + id + "\", \"stream\": \"" + stream
                + "\", \"offset\": " + offset + "}";
        return ToolResponse.success(text, Map.of("id", id, "bytes_written", written.bytes(), "bytes_pending",
                written.pending(), "stdin_open", !written.closed(), "output_offset", offset), id, written.bytes());
    }

    private ToolRefusal refused(String id, InputOutcome.Refused refused) {
        return new ToolRefusal(switch (refused.reason()) {
            case NOT_OPEN -> id + " was started without stdin_open, so its stdin is at end of file; start the command "
                    + "again with start_job and stdin_open: true";
            case CLOSED -> id + "'s stdin is closed (a job_input with close: true closed it); it can take no more input: "
                    + "start it again to give it more";
            case ENDED -> id + " has ended (" + jobs.get(id).map(JobResults::describe).orElse(id) + "); it reads no more "
                    + "input, and its output stays readable with job_output";
            case BUSY -> id + " has not yet read the previous input: " + refused.bytes() + " bytes of it still wait; "
                    + "read its output with job_output (it may be waiting for something else), then try again";
            case BROKEN -> id + " closed its stdin after reading " + refused.bytes() + " bytes: it reads no more input; "
                    + "job_output shows why";
        });
    }
}
