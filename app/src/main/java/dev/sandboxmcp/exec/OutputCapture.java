package dev.sandboxmcp.exec;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Drains a stream to its end, keeping at most {@code capBytes} of it. Everything past the cap
 * is read and counted but not stored, so memory stays bounded whatever a command prints, and
 * the command never blocks on a full pipe.
 */
final class OutputCapture {

    private final int capBytes;
    private final ByteArrayOutputStream kept;
    private long totalBytes;

    OutputCapture(int capBytes) {
        this.capBytes = capBytes;
        this.kept = new ByteArrayOutputStream(Math.min(capBytes, 8192));
    }

    /** Reads {@code in} until end of stream or an I/O error (the pipe was closed under us). */
    void drain(InputStream in) {
        byte[] buffer = new byte[16384];
        try (in) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                record(buffer, n);
            }
        } catch (IOException closed) {
            // The pipe was closed while a process that escaped the kill still held it: keep what we have.
        }
    }

    private synchronized void record(byte[] buffer, int n) {
        int room = capBytes - kept.size();
        if (room > 0) {
            kept.write(buffer, 0, Math.min(room, n));
        }
        totalBytes += n;
    }

    synchronized CapturedOutput snapshot() {
        return new CapturedOutput(kept.toString(StandardCharsets.UTF_8), totalBytes, totalBytes > kept.size());
    }
}
