package dev.sandboxmcp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * Sends a request written byte for byte, as an attacker would, and reads the status and body of
 * the response. Used where a real client would normalize what the test needs to send.
 */
public final class RawHttp {

    public record Response(int status, String head, String body) {
    }

    private RawHttp() {
    }

    public static Response send(int port, String requestHead, byte[] body) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(15_000);
            OutputStream out = socket.getOutputStream();
            out.write(requestHead.getBytes(StandardCharsets.ISO_8859_1));
            try {
                if (body != null) {
                    out.write(body);
                }
                out.flush();
                socket.shutdownOutput();
            } catch (java.net.SocketException refusedEarly) {
                // the server answered (413, 431) and closed before the whole body was sent
            }
            byte[] raw = readAll(socket.getInputStream());
            String text = new String(raw, StandardCharsets.UTF_8);
            int headEnd = text.indexOf("\r\n\r\n");
            String head = headEnd < 0 ? text : text.substring(0, headEnd);
            String rest = headEnd < 0 ? "" : text.substring(headEnd + 4);
            if (!head.startsWith("HTTP/1.1 ")) {
                throw new IOException("not an HTTP response: " + head);
            }
            int status = Integer.parseInt(head.substring(9, 12));
            return new Response(status, head, rest);
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        int n;
        try {
            while ((n = in.read(buffer)) >= 0) {
                bytes.write(buffer, 0, n);
            }
        } catch (java.net.SocketException reset) {
            // the server may close right after a refusal; keep what arrived
        }
        return bytes.toByteArray();
    }

    /** A POST of {@code body} to {@code path} with the given extra header lines ("Name: value\r\n" each). */
    public static Response post(int port, String path, String headers, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        String head = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n"
                + "Content-Length: " + bytes.length + "\r\n" + headers + "\r\n";
        return send(port, head, bytes);
    }
}
