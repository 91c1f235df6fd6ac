package dev.sandboxmcp.tools;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.dialect.Dialects;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/**
 * A tool's input or output schema (JSON Schema 2020-12, as the SDK reads it), compiled once; each
 * call's arguments and each structured result are checked against it. The SDK's own validator
 * finds its compiled schema by hashing the whole schema on every call, and on success writes the
 * checked value out as JSON again for nobody: for a 4 KiB {@code read_file} that was about 18 us
 * of the server's time per call (BENCHMARKS.md, "waiting for the answer").
 */
final class SchemaCheck {

    private static final SchemaRegistry REGISTRY = SchemaRegistry.withDefaultDialect(Dialects.getDraft202012());
    private static final JsonMapper JSON = JsonMapper.shared();

    private final Schema schema;

    SchemaCheck(Map<String, Object> schema) {
        this.schema = REGISTRY.getSchema(JSON.valueToTree(schema));
    }

    /** Null when {@code value} matches the schema; else what does not, worded as the SDK's validator words it. */
    String problems(Object value) {
        try {
            List<Error> errors = schema.validate(JSON.valueToTree(value));
            return errors.isEmpty() ? null : "Validation failed: JSON schema validation errors: " + errors;
        } catch (RuntimeException e) {
            return "Unexpected validation error: " + e.getMessage();
        }
    }
}
