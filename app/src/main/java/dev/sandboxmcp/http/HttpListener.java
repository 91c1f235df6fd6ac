package dev.sandboxmcp.http;

import dev.sandboxmcp.config.Config;
import dev.sandboxmcp.config.Limits;
import org.eclipse.jetty.http.HttpCompliance;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The server's one HTTP/1.1 listener, set up for clients that may be hostile: what one client
 * sends cannot change what another is seen to send, a request has one reading only, and
 * connections are bounded in number and in how long they may be held without a request.
 */
final class HttpListener {

    private HttpListener() {
    }

    static Connector create(Server server, HttpConfiguration http, Config config) {
        // Jetty's parser remembers header lines per connection and matches later lines against
        // them ignoring case, then hands the application the remembered spelling: after one
        // request with "authorization: bearer", every "Authorization: Bearer <token>" on that
        // connection arrived as "bearer <token>" and was refused; a reverse proxy's pooled
        // connection carries many clients' requests. So no per-connection cache, and the
        // built-in one (common values such as "Accept: */*") may only match the exact spelling.
        http.setHeaderCacheSize(0);
        http.setHeaderCacheCaseSensitive(true);
        // RFC 9110 as Jetty reads it, without the one leniency its RFC9110 mode keeps: a bare LF
        // as a line ending, which a proxy in front may read differently. Also refused: a body
        // framed both by Transfer-Encoding and Content-Length, and more than one Content-Length.
        http.setHttpCompliance(HttpCompliance.RFC9110.without("RFC9110_CRLF", HttpCompliance.Violation.LF_HEADER_TERMINATION));

        // Jetty answers what its parser refuses before any filter runs: in the same shape as the rest.
        server.setErrorHandler(new ParserRefusals(http.getRequestHeaderSize()));
        Limits limits = config.limits();
        ServerConnector connector = new ServerConnector(server, new StrictHttpConnectionFactory(http, limits));
        connector.setHost(config.host());
        connector.setPort(config.port());
        // Jetty applies it to a connection between requests and while a request is read; a
        // request being handled (a long command, an open event stream) waits as long as it
        // needs: the idle timeout fails only a read or write that is pending.
        connector.setIdleTimeout(limits.idleTimeout().toMillis());
        connector.addBean(new ConnectionCap(limits.maxConnections()));
        return connector;
    }
}
