package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A token holder declares ten 8 MiB bodies (80 MiB, more than the whole body budget of a 128 MiB
 * heap) and trickles them a byte at a time: another client's calls are served at once all the
 * while. The budget used to be taken for the declared length on arrival, and two stalled 8 MiB
 * POSTs made another client's ping wait 20 s for a 503; now a body holds what it has sent.
 */
class SlowBodiesProcessTest {

    static final int SLOW = 10;
    static final int DECLARED = 8 * 1024 * 1024;

    @TempDir
    Path temp;

    @Test
    void otherClientsAreServedWhileLargeBodiesTrickle() throws Exception {
        List<Socket> slow = new ArrayList<>();
        try (ServerProcessTest.Server server = ServerProcessTest.Server.startSmallHeap(temp)) {
            String head = "POST /mcp-sandbox/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + DECLARED + "\r\n"
                    + "Authorization: Bearer " + ServerProcessTest.TOKEN + "\r\nContent-Type: application/json\r\n"
                    + "Accept: application/json, text/event-stream\r\n\r\n"
                    + "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" + "x".repeat(100 * 1024);
            for (int i = 0; i < SLOW; i++) {
                Socket socket = new Socket();
                socket.connect(new InetSocketAddress("127.0.0.1", server.port), 5_000);
                socket.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
                socket.getOutputStream().flush();
                slow.add(socket);
            }
            Thread trickle = Thread.ofVirtual().start(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        for (Socket socket : slow) {
                            OutputStream out = socket.getOutputStream();
                            out.write('x');
                            out.flush();
                        }
                        Thread.sleep(200);
                    }
                } catch (Exception stopped) {
                    // interrupted, or the server closed a slow body: the test's assertions say which
                }
            });
            try {
                Thread.sleep(2_000); // every slow body is read as far as it goes
                List<Long> millis = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    long started = System.nanoTime();
                    String answer = server.callTool("list_directory", "{\"path\":\".\"}");
                    millis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
                    assertThat(answer).contains("\"result\"").doesNotContain("busy");
                }
                System.out.printf("%d bodies of %d bytes declared, trickling: another client's calls took %s ms%n",
                        SLOW, DECLARED, millis);
                assertThat(millis).allSatisfy(m -> assertThat(m).isLessThan(5_000));
                assertThat(trickle.isAlive()).as("the slow bodies are still being sent").isTrue();
            } finally {
                trickle.interrupt();
                trickle.join(5_000);
            }
            assertThat(server.health()).isEqualTo(200);
        } finally {
            for (Socket socket : slow) {
                socket.close();
            }
        }
    }
}
