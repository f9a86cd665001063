package dev.selene.node.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pool burst when one of its manager JVMs dies during the run: the report is kept, with the raw baseline's
 * figures from the round that ran before the burst and a line saying why.
 */
class BurstPoolFaultProcessTest {

    @Test
    void aManagerKilledAfterTheRetirement_costsTheRawSecondHalfOnly_theReportIsKeptAndSaysWhy() throws Exception {
        Path logs = Files.createDirectories(Path.of("target", "burst-tests", "pool-fault"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        AtomicBoolean killed = new AtomicBoolean();
        // The fault: once the retire phase has ended (its progress line is out), one manager JVM is killed.
        Thread killer = Thread.ofPlatform().daemon().start(() -> {
            long deadline = System.nanoTime() + 300_000_000_000L;
            while (System.nanoTime() < deadline && !Thread.currentThread().isInterrupted()) {
                if (err.toString(StandardCharsets.UTF_8).contains("records retired")) {
                    ProcessHandle.current().children().findFirst().ifPresent(p -> killed.set(p.destroyForcibly()));
                    return;
                }
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        int exit;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            exit = SeleneMain.execute("burst", "--preset", "pool", "--disk-dir", logs.toString(), "--layout",
                    "small", "--conversations", "8", "--concurrency", "4", "--tokens", "256", "--snapshot-ms",
                    "20000", "--device", "simulated", "--no-warmup", "--json");
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
            killer.interrupt();
        }
        String errText = err.toString(StandardCharsets.UTF_8);
        assertTrue(killed.get(), "a manager was killed after the retire phase: " + errText);
        assertEquals(0, exit, errText);
        String[] lines = out.toString(StandardCharsets.UTF_8).strip().split("\n");
        JsonNode j = new ObjectMapper().readTree(lines[lines.length - 1]);
        assertEquals(8, j.get("restored_full").asLong(), "the other replica serves every record: " + j);
        assertTrue(j.get("verified").asBoolean());
        assertTrue(j.get("raw_pool_error").asText().contains("second half failed"), j.toString());
        assertTrue(j.get("raw_write_gbps").asDouble() > 0, "the first half's raw figures stay: " + j);
        assertTrue(j.get("raw_cpu_s_per_gb").asDouble() > 0, j.toString());
        assertEquals(0, ProcessHandle.current().children().filter(ProcessHandle::isAlive).count(),
                "the other manager JVM is stopped");
    }
}
