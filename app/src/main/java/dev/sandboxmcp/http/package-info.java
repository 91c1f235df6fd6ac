/**
 * The server's HTTP face: one listener, a chain of servlet filters, and the MCP SDK's two
 * transports behind them. A request meets these in order; each refuses what it cannot pass
 * with its own answer, and nothing after it sees that request.
 *
 * <pre>
 *   client
 *     |  HttpListener: one HTTP/1.1 connector. ConnectionCap answers 503 past the connection
 *     |  cap; StrictHttpConnectionFactory closes a connection whose head or body is late, and
 *     |  refuses ambiguous framing (400); ParserRefusals, the server's error handler, words
 *     |  what Jetty's parser refuses (400, 431) before any filter sees it
 *     v
 *   RefusedMethodsFilter    405  TRACE, OPTIONS, HEAD (OPTIONS * in            every path
 *                                ParserRefusals)
 *   BearerTokenFilter       401  not exactly one right bearer token            every path but
 *   OriginFilter            403  an Origin header outside the allow-list       the health probes
 *     |-- /healthz, <base>/healthz: answered by the server itself
 *     v
 *   ErrorBodyFilter              turns an error body written after it (the     <base>/mcp and
 *                                transport's serialized Java exception, its    <base>/message
 *                                sendError) into the same JSON-RPC error
 *                                shape, status kept; a JSON-RPC error passes
 *   BodySizeFilter          413  a body past the size cap; else reads it in    POST only, from
 *                           503  chunks, each charged to RequestBodyBudget     here to
 *                                as it arrives, into a ReceivedBody            JsonRpcEnvelope-
 *   JsonRpcEnvelopeFilter   400  not one JSON-RPC message the SDK can take,    Filter
 *                                or past JsonBounds (depth, tokens, the
 *                                envelope's strings: method, id, tool
 *                                name, progress token): one
 *                                streaming pass, no tree; then charges the
 *                           503  parse's cost (JsonBounds.worstCost)
 *                           413  (more than the whole budget)
 *   SessionStartFilter      400  <base>/message only: anything but the handshake
 *                                from an SSE session not yet initialized (the SDK
 *                                would hold it forever) or not known; a session
 *                                is known while its stream on <base>/sse is open
 *   CancellationFilter      202  notifications/cancelled, answered here; registers each
 *                                tools/call so that one (or a dropped request) cancels it
 *   WholeAnswerFilter            <base>/mcp only: the SDK's flush held until the
 *                                request ends, so an answer goes out in one write
 *                                with its length, not as two chunks
 *     v
 *   transports (MCP Java SDK)    <base>/mcp: Streamable HTTP, stateless
 *                                <base>/sse, <base>/message: HTTP+SSE
 *     v
 *   McpServer -> ToolDispatcher (dev.sandboxmcp.tools): validates, audits, calls the runner
 * </pre>
 *
 * <p>Every refusal is a {@code Problem} written by {@code JsonRpcErrors}: one JSON-RPC error shape
 * whose message names the limit; Javalin's "no such endpoint" (404, 405) too, from the exception
 * handler {@code SandboxServer} sets. {@link dev.sandboxmcp.http.SandboxServer} wires the chain; every
 * filter is package-private behind it. The bounds the chain enforces (body size, body wait, connection cap, deadlines)
 * come from {@link dev.sandboxmcp.config.Limits}.
 */
package dev.sandboxmcp.http;
