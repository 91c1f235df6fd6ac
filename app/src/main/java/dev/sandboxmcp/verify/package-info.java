/**
 * {@code java -jar sandbox-mcp.jar verify <base-url>}: the deployment checklist, run from the
 * outside as any MCP client would (health, token refusals on both endpoints, both transports,
 * a call of every tool).
 *
 * <p>It lives in the server's jar, not in a test module, because building the images drives it:
 * {@code infra/image/train-aot.sh} starts the server and the runner with
 * {@code -XX:AOTCacheOutput} and runs {@code verify} through every tool, so the JVM's AOT caches
 * hold the classes a real session loads. It is also what an operator runs against a deployment,
 * with nothing but the jar and the token.
 *
 * <p>{@link dev.sandboxmcp.verify.BearerClients} is the one set-up of an SDK client of this
 * server (bearer token, either transport); the tests, the e2e tests and the benchmark use it too.
 */
package dev.sandboxmcp.verify;
