package dev.sandboxmcp.http;

import dev.sandboxmcp.config.Limits;
import java.time.Duration;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;

/**
 * HTTP/1.1 connections that read a request more strictly than Jetty's parser does by itself.
 *
 * <ul>
 *   <li>A request's head (request line and headers) must arrive within a deadline of its first
 *       byte, and its body within a deadline of the head's end that grows with the body's size;
 *       past either the connection is closed. Jetty's idle timeout restarts with every byte, so
 *       a client trickling a header line every few seconds held its connection forever. (Jetty's
 *       minimum request data rate is not used: it counts the time the application takes between
 *       reads as the client's, and under load it refused small bodies that had long arrived.)</li>
 *   <li>The one transfer coding a request may name is {@code chunked}, in a single header. Jetty
 *       reads {@code Transfer-Encoding: identity, chunked} (or {@code gzip, chunked}, or two
 *       headers) as chunked; a proxy in front may frame the same bytes otherwise, which is how
 *       requests are smuggled past it. Such a request is refused with 400 and the connection
 *       closed, as Jetty refuses its other framing errors.</li>
 * </ul>
 */
final class StrictHttpConnectionFactory extends HttpConnectionFactory {

    private final Limits limits;

    StrictHttpConnectionFactory(HttpConfiguration http, Limits limits) {
        super(http);
        this.limits = limits;
    }

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint) {
        StrictConnection connection = new StrictConnection(getHttpConfiguration(), connector, endPoint, limits);
        connection.setTransferEncodingChunkMaxLength(getTransferEncodingChunkMaxLength());
        return configure(connection, connector, endPoint);
    }

    private static final class StrictConnection extends HttpConnection {
        private final Limits limits;
        private volatile ReadDeadline deadline;

        StrictConnection(HttpConfiguration http, Connector connector, EndPoint endPoint, Limits limits) {
            super(http, connector, endPoint);
            this.limits = limits;
        }

        @Override
        protected RequestHandler newRequestHandler() {
            return new StrictRequestHandler();
        }

        @Override
        public void onClose(Throwable cause) {
            received();
            super.onClose(cause);
        }

        private void expect(String what, Duration timeout) {
            received();
            deadline = new ReadDeadline(getConnector().getScheduler(), getEndPoint(), what, timeout);
        }

        private void received() {
            ReadDeadline current = deadline;
            if (current != null) {
                current.cancel();
                deadline = null;
            }
        }

        private final class StrictRequestHandler extends RequestHandler {
            private int transferEncodings;

            @Override
            public void messageBegin() {
                // The parser calls this whenever it looks for a new request, bytes or not.
                if (deadline == null && !isRequestBufferEmpty()) {
                    expect("request head", limits.requestHeadTimeout());
                }
                transferEncodings = 0;
                super.messageBegin();
            }

            @Override
            public void parsedHeader(HttpField field) {
                if (field.getHeader() == HttpHeader.TRANSFER_ENCODING
                        && (++transferEncodings > 1 || !HttpHeaderValue.CHUNKED.is(field.getValue().strip()))) {
                    throw new HttpException.RuntimeException(HttpStatus.BAD_REQUEST_400, "Transfer-Encoding other than chunked");
                }
                super.parsedHeader(field);
            }

            @Override
            public boolean headerComplete() {
                HttpParser parser = getParser();
                if (parser.isChunking() || parser.getContentLength() > 0) {
                    long size = parser.isChunking() ? limits.maxRequestBytes() : parser.getContentLength();
                    expect("request body", limits.requestBodyTimeout(size));
                } else {
                    received();
                }
                return super.headerComplete();
            }

            @Override
            public boolean messageComplete() {
                received();
                return super.messageComplete();
            }

            @Override
            public void badMessage(HttpException failure) {
                received();
                super.badMessage(failure);
            }

            @Override
            public void earlyEOF() {
                received();
                super.earlyEOF();
            }
        }
    }
}
