package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.management.UnixOperatingSystemMXBean;
import dev.sandboxmcp.RawHttp;
import dev.sandboxmcp.TestServer;
import dev.sandboxmcp.config.Limits;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 2,000 clients that each send part of a request head and then trickle the rest a line at a time
 * (slow-loris): every one is closed by the server once its head deadline passes, and clients
 * with proper requests are served all the while. Prints their latency.
 */
class SlowClientsTest {

    static final int SLOW_CLIENTS = 2_000;
    static final long HEAD_MILLIS = Limits.defaults().requestHeadTimeout().toMillis();
    static final String TOOLS_LIST = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";

    /** One slow client: its socket, when it sent its first byte, when it saw the server close. */
    static final class Slow {
        final SocketChannel channel;
        final long firstByte;
        long closed = -1;

        Slow(SocketChannel channel, long firstByte) {
            this.channel = channel;
            this.firstByte = firstByte;
        }

        long millisOpen() {
            return TimeUnit.NANOSECONDS.toMillis(closed - firstByte);
        }
    }

    /** As many slow clients as the file-descriptor limit allows (each costs two: its end and the server's). */
    static int slowClients() {
        var os = (UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long spare = os.getMaxFileDescriptorCount() - os.getOpenFileDescriptorCount() - 1_000;
        int count = (int) Math.min(SLOW_CLIENTS, spare / 2);
        System.out.printf("slow clients: file-descriptor limit %d, %d open; %d slow clients%n",
                os.getMaxFileDescriptorCount(), os.getOpenFileDescriptorCount(), count);
        return count;
    }

    @Test
    void slowLorisClientsAreCutAtTheHeadDeadlineWhileOthersAreServed(@TempDir Path workspace) throws Exception {
        int count = slowClients();
        assertThat(count).as("file descriptors for a meaningful number of slow clients").isGreaterThanOrEqualTo(500);
        try (TestServer server = TestServer.start(workspace, Map.of("MCP_MAX_CONNECTIONS", String.valueOf(count + 200)));
                Selector selector = Selector.open();
                ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            AtomicBoolean attacking = new AtomicBoolean(true);
            List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
            List<String> failures = Collections.synchronizedList(new ArrayList<>());
            List<Future<?>> valid = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                valid.add(pool.submit(() -> {
                    while (attacking.get()) {
                        long started = System.nanoTime();
                        try {
                            RawHttp.Response response = RawHttp.post(server.port(), TestServer.BASE + "/mcp",
                                    "Authorization: Bearer " + TestServer.TOKEN + "\r\nContent-Type: application/json\r\n"
                                            + "Accept: application/json, text/event-stream\r\n", TOOLS_LIST);
                            if (response.status() == 200 && response.body().contains("\"tools\"")) {
                                latencies.add(System.nanoTime() - started);
                            } else {
                                failures.add(response.head());
                            }
                        } catch (IOException e) {
                            failures.add(e.toString());
                        }
                        Thread.sleep(20);
                    }
                    return null;
                }));
            }

            List<Slow> slow = new ArrayList<>();
            long openingStarted = System.nanoTime();
            for (int i = 0; i < count; i++) {
                SocketChannel channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", server.port()));
                long firstByte = System.nanoTime();
                channel.write(ascii("GET /healthz HTTP/1.1\r\nHost: localhost\r\n"));
                channel.configureBlocking(false);
                Slow client = new Slow(channel, firstByte);
                channel.register(selector, SelectionKey.OP_READ, client);
                slow.add(client);
            }
            long openingMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - openingStarted);
            System.out.printf("slow clients: %d opened in %d ms%n", count, openingMillis);

            // Trickle a header line to each open one every second; note when the server closes it.
            long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HEAD_MILLIS + 20_000);
            long nextTrickle = System.nanoTime();
            int open = count;
            ByteBuffer sink = ByteBuffer.allocate(4096);
            while (open > 0 && System.nanoTime() < giveUp) {
                if (System.nanoTime() >= nextTrickle) {
                    for (Slow client : slow) {
                        if (client.closed < 0) {
                            try {
                                client.channel.write(ascii("X-Slow: " + System.nanoTime() + "\r\n"));
                            } catch (IOException closed) {
                                // seen by the read below
                            }
                        }
                    }
                    nextTrickle = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                }
                selector.select(100);
                for (SelectionKey key : selector.selectedKeys()) {
                    Slow client = (Slow) key.attachment();
                    int read;
                    try {
                        read = client.channel.read(sink.clear());
                    } catch (IOException reset) {
                        read = -1;
                    }
                    if (read < 0) {
                        client.closed = System.nanoTime();
                        key.cancel();
                        client.channel.close();
                        open--;
                    }
                }
                selector.selectedKeys().clear();
            }
            attacking.set(false);
            for (Future<?> client : valid) {
                client.get(30, TimeUnit.SECONDS);
            }
            for (Slow client : slow) {
                client.channel.close();
            }

            assertThat(open).as("slow clients the server never closed").isZero();
            List<Long> openFor = slow.stream().map(Slow::millisOpen).sorted().toList();
            System.out.printf("slow clients: closed after %d ms (first) to %d ms (last); the head deadline is %d ms%n",
                    openFor.getFirst(), openFor.getLast(), HEAD_MILLIS);
            assertThat(openFor.getFirst()).as("ms until the first was closed").isGreaterThanOrEqualTo(HEAD_MILLIS - 500);
            // The server starts the clock when it reads a connection's first byte, which can be a
            // while after the client wrote it when thousands of connections wait to be accepted.
            assertThat(openFor.getLast()).as("ms until the last was closed")
                    .isLessThanOrEqualTo(HEAD_MILLIS + 3_000 + openingMillis);

            List<Long> sorted = new ArrayList<>(latencies);
            Collections.sort(sorted);
            System.out.printf("slow clients: meanwhile %d valid tools/list calls, p50 %.1f ms, p99 %.1f ms, max %.1f ms, "
                    + "%d failed%n", sorted.size(), sorted.get(sorted.size() / 2) / 1e6,
                    sorted.get((int) (sorted.size() * 0.99)) / 1e6, sorted.getLast() / 1e6, failures.size());
            assertThat(failures).as("valid requests that failed").isEmpty();
            assertThat(sorted).as("valid requests served while the slow clients held their connections").hasSizeGreaterThan(20);
        }
    }

    static ByteBuffer ascii(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
    }
}
