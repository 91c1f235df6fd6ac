package dev.sandboxmcp.http;

import org.eclipse.jetty.ee10.proxy.ProxyServlet;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A reverse proxy on a loopback port in front of the server, as Traefik is in production: Jetty's
 * own ProxyServlet, whose HttpClient keeps its connections to the server open and hands them from
 * one client's request to the next. With one connection to the server, every request through the
 * proxy, whoever sent it, travels on the same connection.
 */
final class PoolingProxy implements AutoCloseable {

    private final Server jetty;

    private PoolingProxy(Server jetty) {
        this.jetty = jetty;
    }

    static PoolingProxy start(int serverPort) throws Exception {
        Server jetty = new Server();
        ServerConnector connector = new ServerConnector(jetty);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        jetty.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        ServletHolder proxy = new ServletHolder(new ProxyServlet.Transparent());
        proxy.setInitParameter("proxyTo", "http://127.0.0.1:" + serverPort);
        proxy.setInitParameter("maxConnections", "1");
        context.addServlet(proxy, "/*");
        jetty.setHandler(context);
        jetty.start();
        return new PoolingProxy(jetty);
    }

    int port() {
        return ((ServerConnector) jetty.getConnectors()[0]).getLocalPort();
    }

    @Override
    public void close() throws Exception {
        jetty.stop();
    }
}
