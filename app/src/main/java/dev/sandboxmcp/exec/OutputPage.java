package dev.sandboxmcp.exec;

/**
 * A page of a job's output: {@code start} is the byte offset of its first byte, {@code next} the
 * offset to continue from, {@code total} the bytes written so far, and {@code dropped} how many
 * bytes between the requested offset and {@code start} are no longer kept.
 */
public record OutputPage(String text, long start, long next, long total, long dropped) {
}
