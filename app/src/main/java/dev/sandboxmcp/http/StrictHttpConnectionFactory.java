package dev.sandboxmcp.http;

import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;

/**
 * HTTP/1.1 connections that read a request more strictly than Jetty's parser does by itself: the
 * one transfer coding a request may name is {@code chunked}, in a single header. Jetty reads
 * {@code Transfer-Encoding: identity, chunked} (or {@code gzip, chunked}, or two headers) as
 * chunked; a proxy in front may frame the same bytes otherwise, which is how requests are
 * smuggled past it. Such a request is refused with 400 and the connection closed, as Jetty
 * refuses its other framing errors.
 */
final class StrictHttpConnectionFactory extends HttpConnectionFactory {

    StrictHttpConnectionFactory(HttpConfiguration http) {
        super(http);
    }

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint) {
        StrictConnection connection = new StrictConnection(getHttpConfiguration(), connector, endPoint);
        connection.setTransferEncodingChunkMaxLength(getTransferEncodingChunkMaxLength());
        return configure(connection, connector, endPoint);
    }

    private static final class StrictConnection extends HttpConnection {

        StrictConnection(HttpConfiguration http, Connector connector, EndPoint endPoint) {
            super(http, connector, endPoint);
        }

        @Override
        protected RequestHandler newRequestHandler() {
            return new StrictRequestHandler();
        }

        private final class StrictRequestHandler extends RequestHandler {
            private int transferEncodings;

            @Override
            public void messageBegin() {
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
        }
    }
}
