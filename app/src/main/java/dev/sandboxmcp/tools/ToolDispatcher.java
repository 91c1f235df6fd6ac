package dev.sandboxmcp.tools;

import dev.sandboxmcp.audit.AuditEvent;
import dev.sandboxmcp.audit.AuditEvent.Outcome;
import dev.sandboxmcp.audit.AuditLog;
import dev.sandboxmcp.audit.CallStarted;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpStatelessServerFeatures;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the tools' definitions ({@link ToolCatalog#definitions}) into the SDK's tool specifications
 * for both kinds of server, each call carried out by a {@link ToolExecutor}. Every
 * call is checked against the tool's input schema here rather than in the SDK, so that refused
 * calls are audited too; every call is audited as it starts and again, timed, as it ends; nothing
 * a handler throws reaches the SDK: it becomes a tool result with {@code isError: true}.
 */
public final class ToolDispatcher {

    /** Key in the transport context under which the HTTP layer stores the caller's {@link CallerAddress}. */
    public static final String CALLER_KEY = "sandbox-mcp.caller";
    /** Key in the transport context under which the HTTP layer stores the call's {@link CallCancellation}. */
    public static final String CANCELLATION_KEY = "sandbox-mcp.cancellation";
    /**
     * Key in the transport context under which the HTTP layer stores where an answer's
     * {@link HeapBudget.Hold} is kept until the request has been answered (a {@code Consumer<HeapBudget.Hold>}).
     */
    public static final String KEEP_KEY = "sandbox-mcp.keep-until-answered";

    private static final Logger LOG = LoggerFactory.getLogger(ToolDispatcher.class);

    private final ToolDefinitions definitions;
    private final List<McpSchema.Tool> tools;
    private final ToolExecutor executor;
    private final AuditLog audit;
    private final Map<String, SchemaCheck> inputChecks = new HashMap<>();
    private final Map<String, SchemaCheck> outputChecks = new HashMap<>();

    /**
     * @param definitions the tools as the server knows them ({@link ToolCatalog#definitions})
     * @param executor    where the calls are carried out (the runner, or this process)
     */
    public ToolDispatcher(ToolDefinitions definitions, ToolExecutor executor, AuditLog audit) {
        this.definitions = definitions;
        this.tools = definitions.tools();
        this.executor = executor;
        this.audit = audit;
        for (McpSchema.Tool tool : tools) {
            inputChecks.put(tool.name(), new SchemaCheck(tool.inputSchema()));
            if (tool.outputSchema() != null) {
                outputChecks.put(tool.name(), new SchemaCheck(tool.outputSchema()));
            }
        }
    }

    /** The tools this dispatcher carries calls of, with their call rules (for the HTTP layer's cancellation). */
    public ToolDefinitions definitions() {
        return definitions;
    }

    public List<McpStatelessServerFeatures.SyncToolSpecification> statelessSpecifications() {
        return tools.stream()
                .map(tool -> new McpStatelessServerFeatures.SyncToolSpecification(tool,
                        (context, request) -> dispatch(tool, request, context, Progress.NONE)))
                .toList();
    }

    public List<McpServerFeatures.SyncToolSpecification> sessionSpecifications() {
        return tools.stream()
                .map(tool -> new McpServerFeatures.SyncToolSpecification(tool,
                        (exchange, request) -> dispatch(tool, request, exchange.transportContext(),
                                progressOf(exchange, request))))
                .toList();
    }

    /** Progress notifications on the caller's stream, when it sent a progress token. */
    private static Progress progressOf(McpSyncServerExchange exchange, CallToolRequest request) {
        Object token = request.meta() == null ? null : request.meta().get("progressToken");
        if (token == null) {
            return Progress.NONE;
        }
        return (done, total, message) -> {
            try {
                exchange.progressNotification(new McpSchema.ProgressNotification(token, done, total, message));
            } catch (RuntimeException e) {
                LOG.debug("progress notification not delivered: {}", e.toString());
            }
        };
    }

    @SuppressWarnings("unchecked") // KEEP_KEY's value, as the HTTP layer stores it
    CallToolResult dispatch(McpSchema.Tool tool, CallToolRequest request, McpTransportContext context, Progress progress) {
        long started = System.nanoTime();
        String name = tool.name();
        Map<String, Object> arguments = request.arguments() == null ? Map.of() : request.arguments();
        String target = definitions.target(name, arguments);
        CallCancellation cancellation = context != null && context.get(CANCELLATION_KEY) instanceof CallCancellation c
                ? c : CallCancellation.NEVER;
        Consumer<HeapBudget.Hold> keep = context != null && context.get(KEEP_KEY) instanceof Consumer<?> k
                ? hold -> ((Consumer<Object>) k).accept(hold) : HeapBudget.Hold::close; // no request: given back at once
        CallerAddress caller = context == null || !(context.get(CALLER_KEY) instanceof CallerAddress c)
                ? CallerAddress.UNKNOWN : c;
        long call = audit.nextCall();
        audit.started(new CallStarted(call, Instant.now(), name, target, caller.client(), caller.peer()));
        String invalid = inputChecks.get(name).problems(arguments);
        ToolResponse response = invalid == null
                ? checkedAgainstSchema(tool, target, executor.execute(name, arguments, progress, cancellation, keep))
                : ToolResponse.failure(target, "invalid arguments for " + name + ": " + invalid);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        audit.record(new AuditEvent(call, Instant.now(), name, target, cancellation.cancelled() ? Outcome.CANCELLED : outcome(response),
                response.exitCode(),
                response.bytes(), millis, caller.client(), caller.peer(), response.error() ? response.text() : null));
        return toResult(response);
    }

    /** A result whose structured content does not match the tool's output schema becomes an error. */
    private ToolResponse checkedAgainstSchema(McpSchema.Tool tool, String target, ToolResponse response) {
        SchemaCheck output = outputChecks.get(tool.name());
        if (response.error() || output == null) {
            return response;
        }
        String malformed = response.structured() == null ? "no structured content" : output.problems(response.structured());
        if (malformed == null) {
            return response;
        }
        LOG.error("{} returned a result that does not match its output schema: {}", tool.name(), malformed);
        return ToolResponse.failure(target, tool.name() + " produced a malformed result (the server logged "
                + "it); its outcome is unknown: check before repeating the call");
    }

    private static Outcome outcome(ToolResponse response) {
        if (response.timedOut()) {
            return Outcome.TIMEOUT;
        }
        return response.error() ? Outcome.ERROR : Outcome.OK;
    }

    private static CallToolResult toResult(ToolResponse response) {
        CallToolResult.Builder result = CallToolResult.builder().addTextContent(response.text());
        if (response.error()) {
            return result.isError(true).build();
        }
        return result.structuredContent(response.structured()).isError(false).build();
    }
}
