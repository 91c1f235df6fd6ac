package dev.sandboxmcp.http;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
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
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * HTTP/1.1 connections that read a request more strictly than Jetty's parser does by itself.
 *
 * <ul>
 *   <li>A request's head (request line and headers) must arrive within a deadline of its first
 *       byte, or the connection is closed. Jetty's idle timeout restarts with every byte, so a
 *       client trickling a header line every few seconds held its connection forever.</li>
 *   <li>The one transfer coding a request may name is {@code chunked}, in a single header. Jetty
 *       reads {@code Transfer-Encoding: identity, chunked} (or {@code gzip, chunked}, or two
 *       headers) as chunked; a proxy in front may frame the same bytes otherwise, which is how
 *       requests are smuggled past it. Such a request is refused with 400 and the connection
 *       closed, as Jetty refuses its other framing errors.</li>
 * </ul>
 */
final class StrictHttpConnectionFactory extends HttpConnectionFactory {

    private final Duration headTimeout;

    StrictHttpConnectionFactory(HttpConfiguration http, Duration headTimeout) {
        super(http);
        this.headTimeout = headTimeout;
    }

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint) {
        StrictConnection connection = new StrictConnection(getHttpConfiguration(), connector, endPoint, headTimeout);
        connection.setTransferEncodingChunkMaxLength(getTransferEncodingChunkMaxLength());
        return configure(connection, connector, endPoint);
    }

    private static final class StrictConnection extends HttpConnection {
        private final Duration headTimeout;
        private volatile HeadDeadline deadline;

        StrictConnection(HttpConfiguration http, Connector connector, EndPoint endPoint, Duration headTimeout) {
            super(http, connector, endPoint);
            this.headTimeout = headTimeout;
        }

        @Override
        protected RequestHandler newRequestHandler() {
            return new StrictRequestHandler();
        }

        @Override
        public void onClose(Throwable cause) {
            endOfHead();
            super.onClose(cause);
        }

        private void endOfHead() {
            HeadDeadline current = deadline;
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
                    deadline = new HeadDeadline(getConnector().getScheduler(), getEndPoint(), headTimeout);
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
                endOfHead();
                return super.headerComplete();
            }

            @Override
            public void badMessage(HttpException failure) {
                endOfHead();
                super.badMessage(failure);
            }

            @Override
            public void earlyEOF() {
                endOfHead();
                super.earlyEOF();
            }
        }
    }

    /** Closes a connection whose request head is still arriving when the time is up. */
    private static final class HeadDeadline implements Runnable {
        private final AtomicBoolean pending = new AtomicBoolean(true);
        private final EndPoint endPoint;
        private final Duration timeout;
        private final Scheduler.Task task;

        HeadDeadline(Scheduler scheduler, EndPoint endPoint, Duration timeout) {
            this.endPoint = endPoint;
            this.timeout = timeout;
            this.task = scheduler.schedule(this, timeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        @Override
        public void run() {
            if (pending.compareAndSet(true, false)) {
                endPoint.close(new TimeoutException("request head not received within " + timeout.toMillis() + " ms"));
            }
        }

        void cancel() {
            if (pending.compareAndSet(true, false)) {
                task.cancel();
            }
        }
    }
}
