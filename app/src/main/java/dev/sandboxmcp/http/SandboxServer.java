package dev.sandboxmcp.http;

import dev.sandboxmcp.config.Config;
import dev.sandboxmcp.health.HealthProbe;
import dev.sandboxmcp.tools.CallCancellation;
import dev.sandboxmcp.tools.HeapBudget;
import dev.sandboxmcp.tools.ToolDispatcher;
import io.modelcontextprotocol.common.McpTransportContext;
import jakarta.servlet.http.HttpServletRequest;
import io.javalin.Javalin;
import io.javalin.http.HttpResponseException;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpStatelessSyncServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletSseServerTransportProvider;
import io.modelcontextprotocol.server.transport.HttpServletStatelessServerTransport;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.Servlet;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP face of the server: both MCP transports under the base path, the health probes, and
 * the Origin and bearer-token filters in front of everything else.
 *
 * <ul>
 *   <li>{@code <base>/mcp}: Streamable HTTP, stateless. No session lives on the server, so a
 *       client keeps working across a server restart without re-initializing.</li>
 *   <li>{@code <base>/sse} and {@code <base>/message}: the legacy HTTP+SSE transport; its
 *       endpoint event names {@code <base>/message?sessionId=...} with the prefix kept.</li>
 *   <li>{@code /healthz} and {@code <base>/healthz}: 200 without a token while the server
 *       answers, with the runner's state ({@code "runner":"ok"} or {@code "failing"}).</li>
 * </ul>
 */
public final class SandboxServer implements AutoCloseable {

    public static final String SERVER_NAME = "sandbox-mcp";
    private static final Logger LOG = LoggerFactory.getLogger(SandboxServer.class);

    private final Javalin javalin;
    private final McpStatelessSyncServer streamable;
    private final McpSyncServer sse;

    private SandboxServer(Javalin javalin, McpStatelessSyncServer streamable, McpSyncServer sse) {
        this.javalin = javalin;
        this.streamable = streamable;
        this.sse = sse;
    }

    public static SandboxServer start(Config config, ToolDispatcher tools, String instructions, String version,
            HealthProbe runnerHealth) {
        return start(config, tools, instructions, version, runnerHealth,
                RequestBodyBudget.forHeap(config.limits().bodyBudgetWait()));
    }

    /** As above, with {@code messages} the heap budget that the tools' executor also charges answers to. */
    public static SandboxServer start(Config config, ToolDispatcher tools, String instructions, String version,
            HealthProbe runnerHealth, RequestBodyBudget messages) {
        JsonBounds bounds = JsonBounds.forBodies(config.limits().maxRequestBytes(), tools.definitions().longestName());
        var json = new WordedJsonMapper(bounds.mapper());
        var capabilities = McpSchema.ServerCapabilities.builder().tools(false).build();
        CallerAddresses callers = new CallerAddresses(config.trustedProxies());
        CancellationFilter cancellations = new CancellationFilter(callers, tools.definitions());
        SessionStartFilter sessionStarts = new SessionStartFilter();

        HttpServletStatelessServerTransport streamableTransport = HttpServletStatelessServerTransport.builder()
                .jsonMapper(json)
                .messageEndpoint(config.path("/mcp"))
                .contextExtractor(request -> context(callers, request))
                .maxRequestSize(config.limits().maxRequestBytes())
                .build();
        McpStatelessSyncServer streamable = McpServer.sync(streamableTransport)
                .serverInfo(SERVER_NAME, version)
                .instructions(instructions)
                .capabilities(capabilities)
                .jsonMapper(json)
                .tools(tools.statelessSpecifications())
                .validateToolInputs(false) // the dispatcher validates, so refused calls are audited
                .immediateExecution(true)
                .build();

        HttpServletSseServerTransportProvider sseTransport = HttpServletSseServerTransportProvider.builder()
                .jsonMapper(json)
                .baseUrl(config.basePath())
                .sseEndpoint("/sse")
                .messageEndpoint("/message")
                .keepAliveInterval(config.limits().keepAlive())
                .contextExtractor(request -> context(callers, request))
                .maxRequestSize(config.limits().maxRequestBytes())
                .build();
        McpSyncServer sse = McpServer.sync(sseTransport)
                .serverInfo(SERVER_NAME, version)
                .instructions(instructions)
                .capabilities(capabilities)
                .jsonMapper(json)
                .tools(tools.sessionSpecifications())
                .validateToolInputs(false) // the dispatcher validates, so refused calls are audited
                .immediateExecution(true)
                .build();

        Set<String> healthPaths = new HashSet<>(Set.of("/healthz", config.path("/healthz")));
        ExemptPaths exempt = new ExemptPaths(healthPaths);
        Javalin javalin = Javalin.create(cfg -> {
            cfg.startup.showJavalinBanner = false;
            cfg.concurrency.useVirtualThreads = true;
            cfg.jetty.addConnector((server, http) -> HttpListener.create(server, http, config));
            for (String path : healthPaths) {
                // The server answers for itself; the runner's state is reported, not inherited:
                // a runner restarting must not make the server's own health check restart it.
                cfg.routes.get(path, ctx -> ctx.contentType("application/json").result(
                        "{\"status\":\"ok\",\"runner\":\"" + (runnerHealth.report().healthy() ? "ok" : "failing") + "\"}"));
            }
            // Javalin's own answers (no such endpoint, method not allowed), in the shape of every other refusal.
            cfg.routes.exception(HttpResponseException.class, (e, ctx) -> {
                Problem problem = Problem.noEndpoint(e.getStatus(), ctx.method().name(), ctx.path(), config.path("/mcp"),
                        config.path("/sse"));
                ctx.status(problem.status()).contentType(JsonRpcErrors.CONTENT_TYPE).result(JsonRpcErrors.bytes(null, problem));
            });
            cfg.jetty.modifyServletContextHandler(handler -> {
                addFilter(handler, new RefusedMethodsFilter());
                // The token first: without it, every Origin gets the same 401, and none learns the allow-list.
                addFilter(handler, new BearerTokenFilter(config.tokenDigest(), exempt));
                addFilter(handler, new OriginFilter(Set.copyOf(config.allowedOrigins()), exempt));
                for (String messagePath : new String[] {config.path("/mcp"), config.path("/message")}) {
                    addFilter(handler, new ErrorBodyFilter(), messagePath);
                    addFilter(handler, new BodySizeFilter(config.limits().maxRequestBytes(), messages), messagePath);
                    addFilter(handler, new JsonRpcEnvelopeFilter(bounds), messagePath);
                    if (messagePath.equals(config.path("/message"))) {
                        addFilter(handler, sessionStarts, messagePath);
                    }
                    addFilter(handler, cancellations, messagePath);
                }
                addFilter(handler, sessionStarts.streams(), config.path("/sse"));
                addFilter(handler, new WholeAnswerFilter(), config.path("/mcp"));
                addServlet(handler, streamableTransport, config.path("/mcp"));
                addServlet(handler, sseTransport, config.path("/sse"), config.path("/message"));
            });
        });
        javalin.start();
        LOG.info("listening on {}:{}; Streamable HTTP at {}, SSE at {}", config.host(), javalin.port(),
                config.path("/mcp"), config.path("/sse"));
        return new SandboxServer(javalin, streamable, sse);
    }

    /** What the tool dispatcher learns of a request: who sent it, and the call's cancellation. */
    private static McpTransportContext context(CallerAddresses callers, HttpServletRequest request) {
        Map<String, Object> values = new HashMap<>();
        values.put(ToolDispatcher.CALLER_KEY, callers.of(request));
        if (request.getAttribute(CancellationFilter.ATTRIBUTE) instanceof CallCancellation cancellation) {
            values.put(ToolDispatcher.CANCELLATION_KEY, cancellation);
        }
        if (request.getAttribute(RequestBodyBudget.CHARGE_ATTRIBUTE) instanceof RequestBodyBudget.Charge charge) {
            values.put(ToolDispatcher.KEEP_KEY, (Consumer<HeapBudget.Hold>) charge::keep);
        }
        return McpTransportContext.create(values);
    }

    private static void addFilter(ServletContextHandler handler, Filter filter) {
        addFilter(handler, filter, "/*");
    }

    private static void addFilter(ServletContextHandler handler, Filter filter, String path) {
        FilterHolder holder = new FilterHolder(filter);
        holder.setAsyncSupported(true);
        handler.addFilter(holder, path, EnumSet.of(DispatcherType.REQUEST));
    }

    private static void addServlet(ServletContextHandler handler, Servlet servlet, String... paths) {
        ServletHolder holder = new ServletHolder(servlet);
        holder.setAsyncSupported(true);
        for (String path : paths) {
            handler.addServlet(holder, path);
        }
    }

    /** The port actually bound (useful when the configuration asked for port 0). */
    public int port() {
        return javalin.port();
    }

    /** Stops accepting, closes open event streams and stops the HTTP server. */
    @Override
    public void close() {
        try {
            sse.closeGracefully();
            streamable.closeGracefully();
        } catch (RuntimeException e) {
            LOG.warn("closing MCP servers: {}", e.toString());
        }
        javalin.stop();
    }
}
