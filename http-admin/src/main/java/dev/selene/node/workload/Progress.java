package dev.selene.node.workload;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.Supplier;

/** A line on standard error refreshed while a phase of a run runs; nothing at all when it has nowhere to go. */
public final class Progress {

    private final Thread thread;
    private final PrintStream out;
    private final String phase;
    private final Supplier<String> line;
    private final long start = System.nanoTime();

    /** Starts the line of {@code phase}, showing {@code line} every half second on {@code out} (none when null). */
    public Progress(PrintStream out, String phase, Supplier<String> line) {
        this.out = out;
        this.phase = phase;
        this.line = line;
        if (out == null) {
            thread = null;
            return;
        }
        thread = Thread.ofPlatform().daemon().name("burst-progress").start(() -> {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    Thread.sleep(500);
                    print(false);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    private void print(boolean last) {
        String text = String.format(Locale.ROOT, "%-8s %6.1fs  %s", phase, (System.nanoTime() - start) / 1e9,
                line.get());
        if (System.console() != null) {
            out.print("\r" + text + (last ? System.lineSeparator() : ""));
        } else if (last) {
            out.println(text);
        }
        out.flush();
    }

    /** Ends the line, printing it once more as it stands. */
    public void stop() {
        if (thread != null) {
            thread.interrupt();
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            print(true);
        }
    }
}
