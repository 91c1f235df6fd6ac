package dev.sandboxmcp.exec;

import java.io.FileInputStream;
import java.io.IOException;
import java.util.Arrays;

/**
 * The environment blocks one look at {@code /proc} reads: each process's once, however many
 * trees ask about it, and each in one system call where it fits the look's buffer.
 *
 * <p>One system call, because a read gives the block of the address space the file was opened
 * on, or nothing once an exec has replaced that address space. Read a byte first (as
 * {@code Files.readAllBytes} does) and a block can end at that byte: a process of the command in
 * the middle of an exec would look like no process of its.
 */
final class Environs {

    /** An environment block up to this size is read in one system call (a command's is a few KiB). */
    static final int READ_BYTES = 64 * 1024;

    private byte[] buffer; // allocated at the first read: most looks read no environment
    private long pid = -1;
    private byte[] block;

    /** The environment block of {@code pid} (empty in the middle of an exec); null when unreadable (gone, or not ours). */
    byte[] of(long pid) {
        if (pid != this.pid) {
            return readAgain(pid);
        }
        return block;
    }

    /** As {@link #of}, read anew: the process is looked at again. */
    byte[] readAgain(long pid) {
        this.pid = pid;
        this.block = read(pid);
        return block;
    }

    private byte[] read(long pid) {
        try (FileInputStream in = new FileInputStream("/proc/" + pid + "/environ")) {
            if (buffer == null) {
                buffer = new byte[READ_BYTES];
            }
            int length = Math.max(0, in.read(buffer));
            if (length < buffer.length) {
                return Arrays.copyOf(buffer, length);
            }
            byte[] rest = in.readAllBytes();
            byte[] whole = Arrays.copyOf(buffer, length + rest.length);
            System.arraycopy(rest, 0, whole, length, rest.length);
            return whole;
        } catch (IOException unreadable) {
            return null;
        }
    }
}
