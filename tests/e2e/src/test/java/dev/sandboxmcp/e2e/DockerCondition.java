package dev.sandboxmcp.e2e;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/** Enables {@link RequiresDocker} tests only where a Docker daemon answers. */
final class DockerCondition implements ExecutionCondition {

    private static volatile Boolean available;

    static boolean dockerAvailable() {
        if (available == null) {
            synchronized (DockerCondition.class) {
                if (available == null) {
                    boolean answers;
                    try {
                        answers = DockerClientFactory.instance().isDockerAvailable();
                    } catch (RuntimeException e) {
                        answers = false;
                    }
                    available = answers;
                }
            }
        }
        return available;
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (dockerAvailable()) {
            return ConditionEvaluationResult.enabled("a Docker daemon answers");
        }
        String reason = "SKIPPED: no Docker daemon answers (DOCKER_HOST=" + System.getenv("DOCKER_HOST")
                + "); the container e2e tests need one. .ci/run starts dockerd; locally start Docker and run make test.";
        System.err.println("*** " + context.getDisplayName() + ": " + reason);
        return ConditionEvaluationResult.disabled(reason);
    }
}
