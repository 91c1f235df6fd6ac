package dev.sandboxmcp.http;

import dev.sandboxmcp.config.Config;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The server's one HTTP/1.1 listener, set up so that what one client sends cannot change what
 * another is seen to send.
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

        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost(config.host());
        connector.setPort(config.port());
        return connector;
    }
}
