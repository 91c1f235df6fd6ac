package dev.sandboxmcp.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Real loopback connections, watched through this process's own TCP tables. */
class ClientDisconnectTest {

    private static final long LOOKS = 4 * ClientDisconnect.INTERVAL.toMillis();

    @Test
    void manyWatchedCallsEachHearOnlyOfTheirOwnClientGoingAway() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            List<Socket> clients = new ArrayList<>();
            List<Socket> accepted = new ArrayList<>();
            List<ClientDisconnect> watches = new ArrayList<>();
            int calls = 20;
            CountDownLatch leftFound = new CountDownLatch(calls / 2);
            AtomicInteger wrong = new AtomicInteger();
            try {
                for (int i = 0; i < calls; i++) {
                    Socket client = new Socket();
                    client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()));
                    clients.add(client);
                    accepted.add(server.accept());
                    boolean leaves = i % 2 == 0;
                    watches.add(ClientDisconnect.watch(client.getLocalAddress().getHostAddress(), client.getLocalPort(),
                            server.getLocalPort(), leaves ? leftFound::countDown : wrong::incrementAndGet));
                }
                Thread.sleep(LOOKS); // every watch has seen its connection established
                for (int i = 0; i < calls; i += 2) {
                    clients.get(i).close();
                }
                assertThat(leftFound.await(LOOKS, TimeUnit.MILLISECONDS)).as("every client that left was noticed").isTrue();
                Thread.sleep(LOOKS);
                assertThat(wrong).as("no call whose client stayed was told it left").hasValue(0);
            } finally {
                watches.forEach(ClientDisconnect::close);
                for (Socket socket : clients) {
                    socket.close();
                }
                for (Socket socket : accepted) {
                    socket.close();
                }
            }
        }
    }

    @Test
    void aClosedWatchNeverActsAndAClientThatHalfClosesCountsAsGone() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                Socket closedWatch = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                Socket acceptedFirst = server.accept();
                Socket halfClosing = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                Socket acceptedSecond = server.accept()) {
            AtomicInteger afterClose = new AtomicInteger();
            CountDownLatch halfClosed = new CountDownLatch(1);
            ClientDisconnect over = ClientDisconnect.watch(closedWatch.getLocalAddress().getHostAddress(),
                    closedWatch.getLocalPort(), server.getLocalPort(), afterClose::incrementAndGet);
            try (ClientDisconnect watch = ClientDisconnect.watch(halfClosing.getLocalAddress().getHostAddress(),
                    halfClosing.getLocalPort(), server.getLocalPort(), halfClosed::countDown)) {
                over.close();
                closedWatch.close();
                halfClosing.shutdownOutput();
                assertThat(halfClosed.await(LOOKS, TimeUnit.MILLISECONDS)).isTrue();
                assertThat(afterClose).as("its call was over before the client left").hasValue(0);
            }
        }
    }

    @Test
    void anActionThatThrowsAnErrorDoesNotEndTheLookingForOtherCalls() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                Socket throwing = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                Socket acceptedFirst = server.accept();
                Socket later = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                Socket acceptedSecond = server.accept()) {
            CountDownLatch thrown = new CountDownLatch(1);
            CountDownLatch laterNoticed = new CountDownLatch(1);
            try (ClientDisconnect first = ClientDisconnect.watch(throwing.getLocalAddress().getHostAddress(),
                    throwing.getLocalPort(), server.getLocalPort(), () -> {
                        thrown.countDown();
                        throw new AssertionError("an action that fails as badly as it can");
                    })) {
                Thread.sleep(LOOKS);
                throwing.close();
                assertThat(thrown.await(LOOKS, TimeUnit.MILLISECONDS)).isTrue();
                try (ClientDisconnect second = ClientDisconnect.watch(later.getLocalAddress().getHostAddress(),
                        later.getLocalPort(), server.getLocalPort(), laterNoticed::countDown)) {
                    Thread.sleep(LOOKS);
                    later.close();
                    assertThat(laterNoticed.await(LOOKS, TimeUnit.MILLISECONDS)).as("a client that left afterwards").isTrue();
                }
            }
        }
    }
}
