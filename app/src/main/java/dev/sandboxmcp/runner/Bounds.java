package dev.sandboxmcp.runner;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.tools.ListJobsTool;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.json.JsonFactory;

/**
 * What one side accepts in one message from the other: every parse of the channel is bounded in
 * bytes (the line), nesting depth, tokens and string length, so that no line, however shaped,
 * becomes more than a bounded amount of memory or work.
 *
 * @param lineBytes   a message's bytes, its newline not counted
 * @param tokens      JSON tokens in one message ({@code {}} is two)
 * @param depth       nesting of objects and arrays
 * @param stringChars the longest string
 */
public record Bounds(int lineBytes, long tokens, int depth, int stringChars) {

    /** Field names are ours or a tool's schema's: short. */
    static final int NAME_CHARS = 256;
    /** Numbers in the protocol are ids, sizes and exit codes. */
    static final int NUMBER_CHARS = 32;

    public Bounds {
        if (lineBytes < 1024 || tokens < 64 || depth < 4 || stringChars < 256) {
            throw new IllegalArgumentException("bounds too small to carry the protocol: " + lineBytes + " bytes, " + tokens
                    + " tokens, depth " + depth + ", " + stringChars + " chars");
        }
    }

    /**
     * The largest reply line the server reads from the runner: its largest result, plus 64 KiB
     * for paths, messages and fields. A result carries its text twice (the text block and the
     * structured content). File and command text, and the listings, are held to {@link
     * Limits#resultTextBytes} as JSON escapes them; a job's command and an edit's diff are not, so JSON may escape each of their
     * bytes (or characters) as six: job_output names the job's command twice beside its page. A
     * list_jobs listing passes the text's share only when the job table holds so many jobs that
     * even their cut commands do not fit ({@link ListJobsTool#largestListingBytes}).
     */
    public static int maxReplyBytes(Limits limits) {
        long text = Math.max(limits.resultTextBytes(), ListJobsTool.largestListingBytes(limits));
        long jobPage = 2L * limits.pageBytes() + 2L * 6 * Limits.COMMAND_BYTES;
        long diff = 2L * 6 * limits.diffChars();
        return (int) Math.min(Integer.MAX_VALUE - 8, Math.max(text, Math.max(jobPage, diff)) + 64 * 1024);
    }

    /** A parser factory that enforces these bounds. */
    JsonFactory factory() {
        return JsonFactory.builder().streamReadConstraints(StreamReadConstraints.builder()
                .maxDocumentLength(lineBytes)
                .maxTokenCount(tokens)
                .maxNestingDepth(depth)
                .maxStringLength(stringChars)
                .maxNameLength(NAME_CHARS)
                .maxNumberLength(NUMBER_CHARS)
                .build()).build();
    }
}
