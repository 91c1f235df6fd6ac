package dev.sandboxmcp.http;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpException;
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
 * instead of Jetty's HTML page, for every method; and, worded as what they are, the errors a
 * servlet sends with {@code sendError} where no filter rewrites them, and Jetty's own for a
 * request nothing serves.
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
        // A parser's refusal comes with its HttpException; without one, the request was parsed and refused later.
        Problem problem = cause instanceof HttpException ? problem(status, reason) : Problem.refusedPastParser(status);
        if (RefusedMethodsFilter.refused(request.getMethod())) { // OPTIONS *: no servlet path, so no filter saw it
            problem = Problem.methodNotAnswered(request.getMethod());
            response.setStatus(problem.status());
            response.getHeaders().put(HttpHeader.ALLOW, RefusedMethodsFilter.ALLOW);
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
