package dev.sandboxmcp.tools;

/**
 * The server's heap for MCP messages in flight, shared by request bodies (the HTTP layer charges
 * each as it arrives) and the runner's answers: an answer holds what it will cost before it is
 * read, and the request of its call keeps that hold until it has been answered.
 */
public interface HeapBudget {

    /** No bound: for executors whose answers cost nothing beyond what they were asked (this process's own tools). */
    HeapBudget UNBOUNDED = new HeapBudget() {
        @Override
        public Hold tryHold(long bytes) {
            return () -> { };
        }

        @Override
        public long capacity() {
            return Long.MAX_VALUE;
        }
    };

    /** Room for {@code bytes}, taken at once; null when there is none now (nothing is waited for). */
    Hold tryHold(long bytes);

    long capacity();

    /** Room taken; given back by {@link #close}. */
    interface Hold extends AutoCloseable {
        @Override
        void close();
    }
}
