package dev.sandboxmcp.runner;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.ReentrantLock;
import tools.jackson.core.json.JsonFactory;

/**
 * One connection of the channel, either side: lines in through one reader (the caller's thread),
 * lines out through one writer thread of its own, so that no caller's interrupt (a cancelled
 * call) can ever close the connection under the others, and a message goes out whole. The
 * runner's reply may go out from the thread that has it ({@link #sendNow}), saving the hand-off.
 */
final class Peer implements AutoCloseable {

    private static final byte[] END = new byte[0];

    private final SocketChannel channel;
    private final Protocol.Sender other;
    private final BlockingQueue<byte[]> outgoing = new LinkedBlockingQueue<>();
    private final Lines lines;
    private final OutputStream out;
    /** Held while a line is written, by the writer thread or a {@link #sendNow} caller. */
    private final ReentrantLock writing = new ReentrantLock();
    private volatile JsonFactory factory;
    private volatile boolean closed;

    /** {@code other}: who sends what this side reads; {@code reading}: the bounds it is read within. */
    Peer(SocketChannel channel, Protocol.Sender other, Bounds reading) {
        this.channel = channel;
        this.other = other;
        this.lines = new Lines(Channels.newInputStream(channel), reading.lineBytes());
        this.factory = reading.factory();
        this.out = Channels.newOutputStream(channel);
        Thread.ofVirtual().name("channel-writer").start(this::write);
    }

    /** Reads within {@code reading} from now on (the hello is read within smaller bounds than calls). */
    void bound(Bounds reading) {
        lines.limit(reading.lineBytes());
        this.factory = reading.factory();
    }

    /** The next message, sent in {@code phase}; null at the end of the stream. */
    Protocol.Message receive(Protocol.Phase phase) throws IOException, Protocol.Violation {
        return nextLine() ? decodeLine(phase) : null;
    }

    /** Reads the next line, not parsing it yet; false at the end of the stream. */
    boolean nextLine() throws IOException {
        return lines.next();
    }

    /** The length of the line {@link #nextLine} read, in bytes. */
    int lineLength() {
        return lines.length();
    }

    /** The message on the line {@link #nextLine} read, sent in {@code phase}. */
    Protocol.Message decodeLine(Protocol.Phase phase) throws Protocol.Violation {
        return Protocol.decode(lines.bytes(), lines.length(), other, phase, factory);
    }

    /** The id of the message on the line {@link #nextLine} read, found without building the rest. */
    long lineId() throws Protocol.Violation {
        return Protocol.idOf(lines.bytes(), lines.length(), factory);
    }

    /** Queues {@code message}; it is dropped if the connection is closed (its calls fail as that is noticed). */
    void send(Protocol.Message message) {
        sendLine(Protocol.encode(message));
    }

    /** Queues a line {@link Protocol#encode} made. */
    void sendLine(byte[] line) {
        if (!closed) {
            outgoing.add(line);
        }
    }

    /**
     * Takes back a line {@link #sendLine} queued, if the writer has not taken it yet: the other side
     * never sees it. Whether it was taken back.
     */
    boolean unsend(byte[] line) {
        return outgoing.remove(line); // a byte[] equals only itself
    }

    /** The bytes queued and not yet taken by the writer. */
    long queuedBytes() {
        return outgoing.stream().mapToLong(line -> line.length).sum();
    }

    /**
     * Writes a line {@link Protocol#encode} made from this thread when it can go out at once (the
     * connection free, nothing queued, this thread not interrupted), else queues it. Only for the
     * runner's call thread with its reply: once its call has left the calls a cancel interrupts,
     * nobody interrupts it (an interrupt in a channel write closes the connection), and it writes
     * to the server, which always reads. The server never writes this way: a runner that stops
     * reading would hold the calling thread in the write, past its call's deadline. A reply may
     * overtake a line the writer has just taken from the queue: another call's, whose order does
     * not matter, or a progress of the same call, which then arrives after its reply and is ignored.
     */
    void sendNow(byte[] line) {
        if (closed || Thread.currentThread().isInterrupted() || !outgoing.isEmpty() || !writing.tryLock()) {
            sendLine(line);
            return;
        }
        writeHolding(line);
    }

    /**
     * Writes a line {@link Protocol#encode} made from this thread, waiting for the connection, so
     * that it is out of memory once this returns: for the runner's large answers, one at a time.
     * The same rules as {@link #sendNow}: only the runner's call thread, once its call has ended.
     */
    void sendWhole(byte[] line) {
        if (closed) {
            return;
        }
        writing.lock();
        writeHolding(line);
    }

    /** Writes {@code line} with {@link #writing} held, and lets go of it. */
    private void writeHolding(byte[] line) {
        try {
            out.write(line);
            out.flush();
        } catch (IOException e) {
            close();
        } finally {
            writing.unlock();
        }
    }

    boolean closed() {
        return closed;
    }

    private void write() {
        try {
            while (true) {
                byte[] line = outgoing.take();
                if (line == END) {
                    return;
                }
                writing.lock();
                try {
                    out.write(line);
                    while ((line = outgoing.poll()) != null && line != END) {
                        out.write(line);
                    }
                    if (line == END) {
                        return;
                    }
                    out.flush();
                } finally {
                    writing.unlock();
                }
            }
        } catch (IOException | InterruptedException e) {
            close();
        }
    }

    @Override
    public void close() {
        closed = true;
        outgoing.add(END);
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
