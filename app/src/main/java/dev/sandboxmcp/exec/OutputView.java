package dev.sandboxmcp.exec;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * What a call shows of one output stream: all of it when it fits its share of the view, else its
 * head and its tail, cut on line ends where one is near (else on a character boundary), and the
 * left-out middle by byte offsets and lines so that it can be read afterwards.
 *
 * @param head         the text shown from the start (the whole output when nothing is left out)
 * @param tail         the text shown from the end ("" when nothing is left out)
 * @param totalBytes   bytes the stream carried in all
 * @param omittedFrom  first byte left out (== omittedTo when nothing is)
 * @param omittedTo    end (exclusive) of the bytes left out
 * @param omittedLines newlines in the part left out
 * @param droppedBytes bytes left out that are not kept either (never readable)
 */
public record OutputView(String head, String tail, long totalBytes, long omittedFrom, long omittedTo,
        long omittedLines, long droppedBytes) {

    public boolean cut() {
        return omittedTo > omittedFrom;
    }

    /**
     * The views of stdout and stderr, sharing {@code viewBytes} of text as JSON escapes it
     * ({@link EscapedSize}): a stream needing less than half leaves the rest to the other. Of one
     * moment, while the command may still write: each log is held (its writes wait) until its view
     * is made.
     */
    public static OutputView[] of(OutputLog stdout, OutputLog stderr, int viewBytes) {
        synchronized (stdout) {
            synchronized (stderr) {
                return ofHeld(stdout, stderr, viewBytes);
            }
        }
    }

    private static OutputView[] ofHeld(OutputLog stdout, OutputLog stderr, int viewBytes) {
        long out = size(stdout, viewBytes);
        long err = size(stderr, viewBytes);
        int half = viewBytes / 2;
        long outShare;
        if (out + err <= viewBytes || out <= half) {
            outShare = out;
        } else {
            outShare = err <= half ? viewBytes - err : half;
        }
        long errShare = Math.min(err, viewBytes - outShare);
        return new OutputView[] {of(stdout, out, (int) outShare), of(stderr, err, (int) errShare)};
    }

    /**
     * The stream's size as JSON escapes its text, exact when it is at most {@code viewBytes};
     * a larger one is cut whatever its size, so its byte count (no more than its size) stands in.
     */
    private static long size(OutputLog log, int viewBytes) {
        long total = log.totalBytes();
        if (total > viewBytes) {
            return total;
        }
        byte[] bytes = log.bytes(0, total);
        return EscapedSize.ofDecoded(bytes, 0, bytes.length);
    }

    static OutputView of(OutputLog log, long size, int share) {
        long total = log.totalBytes();
        if (share >= size) {
            return new OutputView(TextCut.decode(log.bytes(0, total)), "", total, total, total, 0, 0);
        }
        int headShare = share / 2;
        byte[] head = log.bytes(0, headShare);
        int headEnd = lineEndNear(head, EscapedSize.fitDecoded(head, head.length, headShare, false));
        int tailShare = share - headShare;
        long tailFrom = Math.max(headEnd, total - tailShare);
        byte[] tail = log.bytes(tailFrom, total);
        int tailStart = EscapedSize.lastDecoded(tail, TextCut.continuationPrefix(tail), tail.length, tailShare);
        tailStart = lineStartNear(tail, tailStart);
        long omittedFrom = headEnd;
        long omittedTo = tailFrom + tailStart;
        long shownNewlines = TextCut.newlines(Arrays.copyOf(head, headEnd))
                + TextCut.newlines(Arrays.copyOfRange(tail, tailStart, tail.length));
        // The kept head and tail of a log are each at least a view, so all it dropped lies in the part left out.
        long dropped = Math.min(log.droppedBytes(), omittedTo - omittedFrom);
        return new OutputView(new String(head, 0, headEnd, StandardCharsets.UTF_8),
                new String(tail, tailStart, tail.length - tailStart, StandardCharsets.UTF_8), total, omittedFrom, omittedTo,
                log.newlines() - shownNewlines, dropped);
    }

    /** Just past the last newline in the second half of {@code bytes[0, end)}, else {@code end}. */
    private static int lineEndNear(byte[] bytes, int end) {
        for (int i = end - 1; i >= end / 2; i--) {
            if (bytes[i] == '\n') {
                return i + 1;
            }
        }
        return end;
    }

    /** Just past the first newline in the first half of {@code bytes[start, length)}, else {@code start}. */
    private static int lineStartNear(byte[] bytes, int start) {
        for (int i = start; i < start + (bytes.length - start) / 2; i++) {
            if (bytes[i] == '\n') {
                return i + 1;
            }
        }
        return start;
    }
}
