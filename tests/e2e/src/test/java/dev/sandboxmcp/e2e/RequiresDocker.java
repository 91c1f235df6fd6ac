package dev.sandboxmcp.e2e;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks tests that need a Docker daemon and the locally built image. Without a daemon they are
 * skipped, and the reason is printed loudly; with a daemon but no image they fail, because the
 * test command builds the image whenever a daemon answers.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(DockerCondition.class)
public @interface RequiresDocker {
}
