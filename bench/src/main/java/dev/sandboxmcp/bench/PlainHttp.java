package dev.sandboxmcp.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One keep-alive HTTP/1.1 connection (or HTTPS, to a front door) that POSTs and reads the answer on the calling thread: a
 * client that costs next to nothing, so a round trip measures the server. (The JDK's
 * {@code HttpClient} adds a millisecond or more per request of its own: its asynchronous
 * machinery hands each exchange between threads.)
 */
final class PlainHttp implements AutoCloseable {

    record Response(int status, Map<String, String> headers, String body) {
    }

    private final URI uri;
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    PlainHttp(String url) throws IOException {
        this.uri = URI.create(url);
        // https: a front door's default certificate, not checked (loopback, the benchmark's own Traefik).
        this.socket = "https".equals(uri.getScheme())
                ? dev.sandboxmcp.verify.TrustAll.context().getSocketFactory().createSocket(uri.getHost(), uri.getPort())
                : new Socket(uri.getHost(), uri.getPort());
        socket.setTcpNoDelay(true);
        this.in = new BufferedInputStream(socket.getInputStream(), 65536);
        this.out = socket.getOutputStream();
    }

    /** POSTs {@code json} to the URL's path with {@code headers}; header names in the result are lower case. */
    Response post(Map<String, String> headers, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        StringBuilder head = new StringBuilder("POST ").append(uri.getRawPath()).append(" HTTP/1.1\r\n")
                .append("Host: ").append(uri.getHost()).append(':').append(uri.getPort()).append("\r\n")
                .append("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n")
                .append("Content-Length: ").append(body.length).append("\r\n");
        headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
        head.append("\r\n");
        out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
        return read();
    }

    private Response read() throws IOException {
        String status = line();
        int code = Integer.parseInt(status.split(" ", 3)[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String header = line(); !header.isEmpty(); header = line()) {
            int colon = header.indexOf(':');
            headers.put(header.substring(0, colon).strip().toLowerCase(Locale.ROOT), header.substring(colon + 1).strip());
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            for (int size = Integer.parseInt(line().split(";")[0].strip(), 16); size > 0;
                    size = Integer.parseInt(line().split(";")[0].strip(), 16)) {
                body.write(in.readNBytes(size));
                line();
            }
            line();
        } else if (headers.containsKey("content-length")) {
            body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
        }
        return new Response(code, headers, body.toString(StandardCharsets.UTF_8));
    }

    private String line() throws IOException {
        StringBuilder line = new StringBuilder();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("the server closed the connection");
            }
            if (b != '\r') {
                line.append((char) b);
            }
        }
        return line.toString();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
