package dev.sandboxmcp.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Environment blocks as a look at /proc reads them: whole, once per process, null once gone.
 * That a block is read in one system call (and so never cut by an exec between two reads) is
 * shown by what it is for: {@code HostileCommandsTest}'s daemon caught in the middle of its exec.
 */
class EnvironsTest {

    @Test
    void aBlockLargerThanOneReadIsReadWholeAndKeptForTheNextQuestion() throws Exception {
        ProcessBuilder builder = new ProcessBuilder("sleep", "60");
        builder.environment().put("FILLER", "x".repeat(Environs.READ_BYTES));
        builder.environment().put("ZZ_LAST", "found");
        Process process = builder.start();
        try {
            Environs environs = new Environs();
            byte[] block = environs.of(process.pid());
            String text = new String(block, StandardCharsets.UTF_8);
            assertThat(block.length).isGreaterThan(Environs.READ_BYTES);
            assertThat(text).contains("ZZ_LAST=found\0").contains("FILLER=" + "x".repeat(Environs.READ_BYTES) + "\0");
            assertThat(environs.of(process.pid())).as("asked again in the same look: not read again").isSameAs(block);
            assertThat(environs.readAgain(process.pid())).as("looked at again: read anew").isNotSameAs(block).isEqualTo(block);
        } finally {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aProcessThatIsGoneHasNoBlock() throws Exception {
        Process process = new ProcessBuilder("true").start();
        process.waitFor(5, TimeUnit.SECONDS);
        assertThat(new Environs().of(process.pid())).isNull();
    }
}
