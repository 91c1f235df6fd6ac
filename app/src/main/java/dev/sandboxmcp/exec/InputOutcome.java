package dev.sandboxmcp.exec;

/** What became of input written to a job ({@link JobManager#input}). */
public sealed interface InputOutcome {

    /**
     * The input was taken: {@code bytes} of it written to the pipe by now, {@code pending} still
     * waiting for the job to read (they go in order; the next input waits for them), and whether
     * the job's stdin is now closed (it sees end of file once it has read them).
     */
    record Written(long bytes, long pending, boolean closed) implements InputOutcome {
    }

    /** Nothing was written; {@code bytes}: for {@code BUSY} the bytes still pending, for {@code BROKEN} all written before. */
    record Refused(Reason reason, long bytes) implements InputOutcome {
    }

    enum Reason {
        /** The job was started without an open stdin. */
        NOT_OPEN,
        /** Its stdin was closed on request. */
        CLOSED,
        /** The job has ended. */
        ENDED,
        /** The previous input is still waiting for the job to read it. */
        BUSY,
        /** The job closed its end of the pipe: it reads no more. */
        BROKEN
    }
}
