package dev.sandboxmcp.http;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The server's error handler: what Jetty answers by itself, before any filter or servlet sees the
 * request (a request its parser refuses: ambiguous framing, a bare LF, headers or a URI too
 * long), in the one JSON-RPC shape of every other refusal ({@link Problem}, {@link JsonRpcErrors})
 * instead of Jetty's HTML page, for every method.
 */
final class ParserRefusals extends ErrorHandler {

    private final int maxHeaderBytes;

    ParserRefusals(int maxHeaderBytes) {
        this.maxHeaderBytes = maxHeaderBytes;
    }

    @Override
    public boolean errorPageForMethod(String method) {
        return true;
    }

    @Override
    protected void generateResponse(Request request, Response response, int status, String reason, Throwable cause,
            Callback callback) {
        Problem problem = problem(status, reason);
        if (TraceAndOptionsFilter.refused(request.getMethod())) { // OPTIONS *: no servlet path, so no filter saw it
            problem = Problem.methodNotAnswered(request.getMethod());
            response.setStatus(problem.status());
            response.getHeaders().put(HttpHeader.ALLOW, TraceAndOptionsFilter.ALLOW);
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, JsonRpcErrors.CONTENT_TYPE);
        response.write(true, ByteBuffer.wrap(JsonRpcErrors.bytes(null, problem)), callback);
    }

    @Override
    public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
        fields.put(HttpHeader.CONTENT_TYPE, JsonRpcErrors.CONTENT_TYPE);
        return ByteBuffer.wrap(JsonRpcErrors.bytes(null, problem(status, reason)));
    }

    private Problem problem(int status, String reason) {
        return Problem.refusedByParser(status, reason, maxHeaderBytes);
    }
}
