package dev.selene.node.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/** {@code selene} run in the test's JVM, its standard output and error captured, for the command-line tests. */
public final class InProcess {

    /** How a run ended: its exit code and what it printed. */
    public record Run(int exit, String out, String err) {
    }

    private InProcess() {
    }

    /** Runs {@code selene args...} through {@link SeleneMain#execute} and returns what it printed. */
    public static Run selene(String... args) {
        try {
            return selene(err -> { }, args);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * As {@link #selene(String...)}, the command on a thread of its own while {@code whileRunning} watches its
     * standard error (a run that blocks on futures needing the common pool: one thread on two cores); at most 120 s.
     */
    public static Run selene(Consumer<ByteArrayOutputStream> whileRunning, String... args) throws Exception {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            FutureTask<Integer> exit = new FutureTask<>(() -> SeleneMain.execute(args));
            Thread.ofPlatform().daemon().name("selene-under-test").start(exit);
            whileRunning.accept(err);
            return new Run(exit.get(120, TimeUnit.SECONDS), out.toString(StandardCharsets.UTF_8),
                    err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }
}
