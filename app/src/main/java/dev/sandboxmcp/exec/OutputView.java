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
     * The views of stdout and stderr, sharing {@code viewBytes}: a stream needing less than half
     * leaves the rest to the other.
     */
    public static OutputView[] of(OutputLog stdout, OutputLog stderr, int viewBytes) {
        long out = stdout.totalBytes();
        long err = stderr.totalBytes();
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

    static OutputView of(OutputLog log, long total, int share) {
        if (share >= total) {
            return new OutputView(TextCut.decode(log.bytes(0, total)), "", total, total, total, 0, 0);
        }
        byte[] head = log.bytes(0, share / 2);
        int headEnd = lineEndNear(head);
        headEnd = TextCut.completeUtf8Prefix(head, headEnd);
        long tailFrom = total - (share - share / 2);
        byte[] tail = log.bytes(tailFrom, total);
        int tailStart = lineStartNear(tail);
        tailStart += TextCut.continuationPrefix(Arrays.copyOfRange(tail, tailStart, tail.length));
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

    /** Just past the last newline in the second half of {@code bytes}, else its length. */
    private static int lineEndNear(byte[] bytes) {
        for (int i = bytes.length - 1; i >= bytes.length / 2; i--) {
            if (bytes[i] == '\n') {
                return i + 1;
            }
        }
        return bytes.length;
    }

    /** Just past the first newline in the first half of {@code bytes}, else 0. */
    private static int lineStartNear(byte[] bytes) {
        for (int i = 0; i < bytes.length / 2; i++) {
            if (bytes[i] == '\n') {
                return i + 1;
            }
        }
        return 0;
    }
}
