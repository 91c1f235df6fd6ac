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

    /**
     * One connection kept open across requests, as a browser, a proxy or an attacker keeps it:
     * each {@link #exchange} writes a request and reads exactly one response off the stream.
     */
    public static final class Connection implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;

        private Connection(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new java.io.BufferedInputStream(socket.getInputStream());
        }

        public static Connection open(int port) throws IOException {
            Socket socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(15_000);
            return new Connection(socket);
        }

        /** Sends a request and reads its response; null when the server closed the connection instead. */
        public Response exchange(String requestHead, byte[] body) throws IOException {
            try {
                OutputStream out = socket.getOutputStream();
                out.write(requestHead.getBytes(StandardCharsets.ISO_8859_1));
                if (body != null) {
                    out.write(body);
                }
                out.flush();
            } catch (java.net.SocketException closed) {
                return null;
            }
            return readResponse();
        }

        /** Writes raw text; false when the server has closed the connection. */
        public boolean write(String text) {
            try {
                socket.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
                socket.getOutputStream().flush();
                return true;
            } catch (IOException closed) {
                return false;
            }
        }

        /** Reads one response: its head, then a body framed by Content-Length, chunks, or the close. */
        public Response readResponse() throws IOException {
            String head;
            try {
                head = readHead();
            } catch (java.net.SocketException reset) {
                return null;
            }
            if (head == null) {
                return null;
            }
            if (!head.startsWith("HTTP/1.1 ")) {
                throw new IOException("not an HTTP response: " + head);
            }
            int status = Integer.parseInt(head.substring(9, 12));
            String lower = head.toLowerCase(java.util.Locale.ROOT);
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            java.util.regex.Matcher length = java.util.regex.Pattern.compile("\r\ncontent-length: *(\\d+)").matcher(lower);
            if (length.find()) {
                body.write(in.readNBytes(Integer.parseInt(length.group(1))));
            } else if (lower.contains("\r\ntransfer-encoding: chunked")) {
                for (int size; (size = Integer.parseInt(readLine().strip(), 16)) > 0; readLine()) {
                    body.write(in.readNBytes(size));
                }
                readLine();
            } else if (lower.contains("\r\nconnection: close")) {
                body.write(in.readAllBytes());
            }
            return new Response(status, head, body.toString(StandardCharsets.UTF_8));
        }

        /** Whether the server has closed the connection (end of stream or reset) within {@code millis}; reads nothing. */
        public boolean closedWithin(long millis) throws IOException {
            socket.setSoTimeout((int) millis);
            try {
                in.mark(1);
                if (in.read() < 0) {
                    return true;
                }
                in.reset();
                return false;
            } catch (java.net.SocketTimeoutException stillOpen) {
                return false;
            } catch (java.net.SocketException reset) {
                return true;
            } finally {
                socket.setSoTimeout(15_000);
            }
        }

        private String readHead() throws IOException {
            StringBuilder head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    return head.isEmpty() ? null : head.toString();
                }
                head.append((char) b);
            }
            return head.substring(0, head.length() - 4);
        }

        private String readLine() throws IOException {
            StringBuilder line = new StringBuilder();
            for (int b; (b = in.read()) >= 0 && b != '\n'; ) {
                line.append((char) b);
            }
            return line.toString();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** A POST of {@code body} to {@code path} with the given extra header lines ("Name: value\r\n" each). */
    public static Response post(int port, String path, String headers, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        String head = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n"
                + "Content-Length: " + bytes.length + "\r\n" + headers + "\r\n";
        return send(port, head, bytes);
    }
}
