package dev.selene.node.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** {@code selene} run in the test's JVM, its standard output and error captured, for the command-line tests. */
public final class InProcess {

    /** How a run ended: its exit code and what it printed. */
    public record Run(int exit, String out, String err) {
    }

    private InProcess() {
    }

    /** Runs {@code selene args...} through {@link SeleneMain#execute} and returns what it printed. */
    public static Run selene(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int exit = SeleneMain.execute(args);
            return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }
}
