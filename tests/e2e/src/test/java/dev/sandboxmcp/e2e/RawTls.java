package dev.sandboxmcp.e2e;

import dev.sandboxmcp.verify.TrustAll;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import javax.net.ssl.SSLSocket;

/**
 * One keep-alive connection to a loopback port, over TLS (Traefik's entry point, whose default
 * certificate names no host: not checked) or plain (the server's published port), on which a
 * request is written byte for byte as an attacker would write it and exactly one response is read.
 */
final class RawTls implements AutoCloseable {

    record Response(int status, String head, String body) {
        String header(String name) {
            return head.lines().filter(l -> l.toLowerCase(Locale.ROOT).startsWith(name.toLowerCase(Locale.ROOT) + ":"))
                    .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse(null);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RawTls(Socket socket) throws IOException {
        this.socket = socket;
        socket.setSoTimeout(30_000);
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    static RawTls open(int port) throws IOException {
        Socket plain = new Socket();
        plain.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        SSLSocket tls = (SSLSocket) TrustAll.context().getSocketFactory().createSocket(plain, "localhost", port, true);
        tls.startHandshake();
        return new RawTls(tls);
    }

    static RawTls openPlain(int port) throws IOException {
        Socket plain = new Socket();
        plain.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        return new RawTls(plain);
    }

    static String get(String host, String path) {
        return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n";
    }

    static String post(String host, String path, String headers, String body) {
        return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + headers + "Content-Length: "
                + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
    }

    void write(String raw) throws IOException {
        out.write(raw.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    void write(byte[] raw) throws IOException {
        out.write(raw);
        out.flush();
    }

    void setTimeoutMillis(int millis) throws IOException {
        socket.setSoTimeout(millis);
    }

    Response exchange(String raw) throws IOException {
        write(raw);
        return read();
    }

    /** Reads one response: its head, then a body by Content-Length or chunks. */
    Response read() throws IOException {
        String head = readHead();
        if (!head.startsWith("HTTP/1.1 ")) {
            throw new IOException("not an HTTP response: " + head);
        }
        Response bare = new Response(Integer.parseInt(head.substring(9, 12)), head, "");
        String length = bare.header("Content-Length");
        byte[] body;
        try {
            if ("chunked".equalsIgnoreCase(bare.header("Transfer-Encoding"))) {
                ByteArrayOutputStream chunks = new ByteArrayOutputStream();
                for (int size; (size = Integer.parseInt(readLine().split(";")[0].strip(), 16)) > 0; readLine()) {
                    chunks.write(in.readNBytes(size));
                }
                readLine();
                body = chunks.toByteArray();
            } else {
                body = length == null ? new byte[0] : in.readNBytes(Integer.parseInt(length));
            }
        } catch (IOException e) {
            throw new CutOff(head, e);
        }
        return new Response(bare.status(), head, new String(body, StandardCharsets.UTF_8));
    }

    /** An answer whose head came and whose body was cut off. */
    static final class CutOff extends IOException {
        CutOff(String head, IOException cause) {
            super("answer cut off after its head (" + head.lines().findFirst().orElse("") + "): " + cause.getMessage(), cause);
        }
    }

    private String readHead() throws IOException {
        StringBuilder head = new StringBuilder();
        for (String line; !(line = readLine()).isEmpty(); ) {
            head.append(head.isEmpty() ? "" : "\r\n").append(line);
        }
        return head.toString();
    }

    /** One line without its CRLF; at the end of the stream an IOException. */
    String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b; (b = in.read()) != '\n'; ) {
            if (b < 0) {
                throw new IOException("connection closed" + (line.size() > 0 ? " after: " + line : ""));
            }
            line.write(b);
        }
        String text = line.toString(StandardCharsets.UTF_8);
        return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
