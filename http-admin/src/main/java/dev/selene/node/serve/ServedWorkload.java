package dev.selene.node.serve;

import dev.selene.engine.config.CacheConfig;
import dev.selene.node.workload.BurstWorkload;
import dev.selene.node.workload.RoundResult;
import dev.selene.node.workload.WorkloadSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

import java.util.Locale;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * The burst workload a served node drives into itself ({@code selene serve --workload burst[:N]}), so that its
 * status page, metrics and traces can be watched under load: the burst's conversations published and probed on
 * the node's own cache and device, {@code runs} times one after another (each with the next seed, so every run
 * publishes new records), or until the node stops when {@code runs} is 0. The node keeps serving after the last.
 *
 * @param runs bursts to run; 0 = until the node stops
 */
record ServedWorkload(int runs) {

    private static final Logger LOG = LoggerFactory.getLogger(ServedWorkload.class);

    /** What {@code --workload} accepts, as its help and its error line name it. */
    static final String ALLOWED = "burst (until stopped), burst:N (N runs, 1..1000000) or burst:forever";

    ServedWorkload {
        if (runs < 0) {
            throw new IllegalArgumentException("runs must be 0 (until stopped) or more, was " + runs);
        }
    }

    /** Whether it runs until the node stops. */
    boolean forever() {
        return runs == 0;
    }

    /** {@code burst}, {@code burst:forever} or {@code burst:N}; anything else is refused with the allowed forms. */
    static ServedWorkload parse(String text) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        if (t.equals("burst") || t.equals("burst:forever")) {
            return new ServedWorkload(0);
        }
        if (t.startsWith("burst:") && t.substring(6).matches("[0-9]{1,7}")) {
            int n = Integer.parseInt(t.substring(6));
            if (n >= 1 && n <= 1_000_000) {
                return new ServedWorkload(n);
            }
        }
        throw new IllegalArgumentException("'" + text + "' is invalid; allowed: " + ALLOWED);
    }

    /** Picocli's converter of {@code --workload}: a bad value is a parameter error (one line, exit 2). */
    static final class Converter implements CommandLine.ITypeConverter<ServedWorkload> {
        @Override
        public ServedWorkload convert(String value) {
            try {
                return parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** Conversations per run unless {@code --conversations} says otherwise, on a node with a durable tier. */
    static final int DEFAULT_CONVERSATIONS = 128;

    /** Room left in a memory-only node's warm tier beyond one run's records, as the burst's own sizing leaves. */
    static final double WARM_SLACK = 1.10;

    /**
     * Conversations per run by default: {@link #DEFAULT_CONVERSATIONS}, or on a memory-only node as many as its warm
     * tier holds (at least one), so that a run's probe finds every conversation it published rather than the
     * coldest evicted by the run itself.
     */
    static int defaultConversations(CacheConfig cache, int tokens, int turns, long snapshotMillis) {
        if (!cache.memoryOnly()) {
            return DEFAULT_CONVERSATIONS;
        }
        long perConversation = burst(cache, 1, tokens, turns, snapshotMillis, 0, 0).slotsNeeded();
        long warmSlots = cache.warmBytes() / cache.layout().slotBytes();
        long fits = (long) Math.floor(warmSlots / (perConversation * WARM_SLACK));
        return (int) Math.max(1, Math.min(DEFAULT_CONVERSATIONS, fits));
    }

    /**
     * The settings of the burst run {@code run} (from 0) on {@code cache}'s node: its layout and concurrency, the
     * conversations' shape, and seed {@code seed + run}.
     */
    static WorkloadSettings burst(CacheConfig cache, int conversations, int tokens, int turns, long snapshotMillis,
                                  long seed, int run) {
        return new WorkloadSettings(cache.layout(), conversations, cache.concurrency(), tokens, turns, snapshotMillis,
                seed + run, false);
    }

    /**
     * Starts the runs on a daemon thread of their own against {@code node}, announcing one line after each and one
     * when the last has ended; a run that fails while the node stops ({@code stopping}) ends them without a word,
     * one that fails otherwise is logged as a warning and ends them.
     */
    Thread start(SeleneNode node, IntFunction<WorkloadSettings> settings, BooleanSupplier stopping,
                 Consumer<String> announce) {
        return Thread.ofPlatform().daemon().name("served-burst").start(() -> {
            for (int run = 0; forever() || run < runs; run++) {
                if (stopping.getAsBoolean()) {
                    return;
                }
                long start = System.nanoTime();
                RoundResult result;
                try {
                    result = new BurstWorkload(settings.apply(run), System.err).runOn(node.cache(), node.copier());
                } catch (Exception | Error e) {
                    if (!stopping.getAsBoolean()) {
                        LOG.warn("burst {} failed, the workload ends (the node keeps serving): {}", run + 1,
                                e.getMessage() == null ? e.toString() : e.getMessage());
                    }
                    return;
                }
                if (stopping.getAsBoolean()) {
                    return;
                }
                announce.accept(String.format(Locale.ROOT, "selene serve: burst %d%s done in %.1f s, %s "
                        + "publications; %s", run + 1, forever() ? "" : "/" + runs, (System.nanoTime() - start) / 1e9,
                        result.published(), result.verdict()));
            }
            announce.accept("selene serve: workload done; the node serves until SIGTERM");
        });
    }
}
