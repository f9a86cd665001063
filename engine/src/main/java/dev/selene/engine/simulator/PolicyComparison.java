package dev.selene.engine.simulator;

import dev.selene.engine.config.ByteSize;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceCeiling;
import dev.selene.engine.trace.TraceRequest;
import dev.selene.engine.trace.TraceShapes;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Every policy on every trace, layout and memory size in one table, through the simulator: the evaluation a policy
 * is judged by. Traces are marked when they were used to choose a policy's shape or constants; only the others say
 * how a policy holds on traffic it was not tuned on.
 *
 * <pre>
 * traces    the synthetic trace (when given), each named generated shape, and families of a plain chat shape that
 *           vary one parameter at a time: how likely a conversation goes on after a turn, how many conversations
 *           interleave (the think time between two turns, in other requests), how often a request branches from an
 *           earlier turn, and how many shared prompts there are and how skewed their popularity is; and families
 *           of a long-context chat shape whose working set is several times memory (where LRU is far from the oracle)
 * layouts   qwen-tp1 (a row is 4.2 times a record's pages) and deepseek-tp4 (2.9 times), at two memory sizes each
 * disk      none, or one disk tier of a given size under every row (the oracle then knows the future for both tiers)
 * </pre>
 *
 * After Caffeine's simulator: many policies, many traces, one report.
 */
public final class PolicyComparison {

    /**
     * A trace of the comparison: its name, whether a policy was tuned on it, and its requests with what their
     * generator knows of them (made on demand).
     */
    public record Trace(String name, boolean tuned, Supplier<TraceShapes.Labelled> labelled) {

        /** A trace read from a file: nothing is known of it beyond its requests. */
        public static Trace of(String name, boolean tuned, List<TraceRequest> requests) {
            return new Trace(name, tuned, () -> TraceShapes.Labelled.unlabelled(requests));
        }

        /** Its requests (made on demand). */
        public Supplier<List<TraceRequest>> requests() {
            return () -> labelled.get().requests();
        }
    }

    /**
     * One line of the table: a trace at a layout, memory and disk size (0: none), every policy's hit ratio and the
     * ceiling.
     */
    public record Row(String trace, boolean tuned, String layout, long warmBytes, long diskBytes, double ceiling,
                      Map<String, Double> hitRatio) {

        /** {@code policy}'s hit ratio minus LRU's, in points. */
        public double pointsOverLru(String policy) {
            return 100 * (hitRatio.get(policy) - hitRatio.get("lru"));
        }

        /**
         * Whether the oracle beats LRU here by more than five points: the rows where a policy is held to a share of
         * the oracle, since where LRU is already close to it there is little for a policy to win.
         */
        public boolean oracleWellAboveLru() {
            return pointsOverLru(ReplaySimulator.ORACLE) > 5;
        }

        /** {@code policy}'s hit ratio over the oracle's (1 when the oracle serves nothing). */
        public double ofOracle(String policy) {
            double oracle = hitRatio.get(ReplaySimulator.ORACLE);
            return oracle == 0 ? 1 : hitRatio.get(policy) / oracle;
        }

        /** Whether the row has the kinds-known reference: a generated trace with one-off requests. */
        public boolean hasKindsKnown() {
            return hitRatio.containsKey(ReplaySimulator.KINDS_KNOWN);
        }
    }

    /**
     * Traces the default policy's shape and constants were chosen on (the documents family was added with the span
     * classes, to show what they are for; patience's constants were chosen on the shared-prompt family with regular
     * turns; the span's bands on the first four long-chat families); every other trace is held out.
     */
    public static final List<String> TUNED_ON = List.of("synthetic_trace", "system-prompts", "short-chats",
            "agent-loops", "chat, one-off documents", "shared-prompt-chat, regular turns", "long chat",
            "long chat, 64 prompts zipf 0.8", "long chat, 800 in flight", "long chat, regular turns");

    /** The plain chat shape the families vary. */
    public static final TraceShapes.Shape CHAT = new TraceShapes.Shape(200, 8, 1, 16, 1_500, 6_000, 80, 1_000, 80,
            600, 0, 1, 0.6, 0);

    /**
     * A chat shape whose working set is several times the memory sizes, as a production trace's is: long messages
     * (pasted code, tool output, 500-4k tokens), half the conversations one question about a document of 4k-16k
     * tokens, 400 conversations in progress. LRU serves a fifth to a third of what the oracle does at the small
     * memories here, as on the synthetic trace, where the plain chat shape leaves LRU within a few points of it.
     */
    public static final TraceShapes.Shape LONG_CHAT = new TraceShapes.Shape(400, 8, 1, 16, 1_500, 6_000, 500, 4_000,
            100, 600, 0, 1, 0.6, 0.5, 4_000, 16_000, 0);

    /** Memory sizes per layout: one where most of the working set is lost, one where most of it fits. */
    public static final Map<String, List<Long>> MEMORY = Map.of(
            "qwen-tp1", List.of(1L << 30, 4L << 30),
            "deepseek-tp4", List.of(2L << 30, 8L << 30));

    private final RowRule rows;
    private final int concurrency;
    private final long diskBytes;

    /**
     * A memory-only comparison whose engine places rows by {@code rows}, sized for {@code concurrency} active
     * requests.
     */
    public PolicyComparison(RowRule rows, int concurrency) {
        this(rows, concurrency, 0);
    }

    /** A comparison as above with a disk tier of {@code diskBytes} under every row (0: none). */
    public PolicyComparison(RowRule rows, int concurrency, long diskBytes) {
        if (diskBytes < 0) {
            throw new IllegalArgumentException("a disk size of " + diskBytes + " bytes is invalid; allowed: 0 (none) "
                    + "or more");
        }
        this.rows = rows;
        this.concurrency = concurrency;
        this.diskBytes = diskBytes;
    }

    /**
     * The comparison's traces: the trace {@code file}, named {@code fileName}, first when it is not null, then every
     * named shape, the shared-prompt chat and the chat families, each of {@code requests} requests from {@code seed}.
     */
    public static List<Trace> traces(String fileName, List<TraceRequest> file, long seed, int requests) {
        List<Trace> out = new ArrayList<>();
        if (file != null) {
            out.add(Trace.of(fileName, TUNED_ON.contains(fileName), file));
        }
        for (String shape : TraceShapes.NAMES) {
            out.add(new Trace(shape, TUNED_ON.contains(shape),
                    () -> TraceShapes.generateLabelled(shape, seed, requests)));
        }
        Map<String, TraceShapes.Shape> families = new LinkedHashMap<>();
        families.put("chat", CHAT);
        families.put("chat, goes on 0.3", CHAT.withContinuation(0.3));
        families.put("chat, goes on 0.9", CHAT.withContinuation(0.9));
        families.put("chat, 50 in flight", CHAT.withActive(50));
        families.put("chat, 800 in flight", CHAT.withActive(800));
        families.put("chat, regular turns", CHAT.withRegularTurns(0.2));
        families.put("chat, branches 0.1", CHAT.withRetry(0.1));
        families.put("chat, branches 0.3", CHAT.withRetry(0.3));
        families.put("chat, 32 prompts zipf 0.5", CHAT.withPrompts(32, 0.5));
        families.put("chat, 32 prompts zipf 2", CHAT.withPrompts(32, 2));
        families.put("chat, one-off 0.5", CHAT.withOneOff(0.5));
        families.put("chat, one-off documents", CHAT.withDocuments(0.5, 4_000, 16_000));
        families.put("shared-prompt-chat, regular turns",
                TraceShapes.shape("shared-prompt-chat").withRegularTurns(0.2));
        families.put("shared-prompt-chat, regular turns 0.4",
                TraceShapes.shape("shared-prompt-chat").withRegularTurns(0.4));
        families.put("long chat", LONG_CHAT);
        families.put("long chat, 64 prompts zipf 0.8", LONG_CHAT.withPrompts(64, 0.8));
        families.put("long chat, 800 in flight", LONG_CHAT.withActive(800));
        families.put("long chat, regular turns", LONG_CHAT.withRegularTurns(0.2));
        families.put("long chat, documents 2k-8k", LONG_CHAT.withDocuments(0.5, 2_000, 8_000));
        families.put("long chat, goes on 0.85", LONG_CHAT.withContinuation(0.85));
        families.put("long chat, documents 0.7", LONG_CHAT.withDocuments(0.7, 4_000, 16_000));
        families.put("long chat, branches 0.2", LONG_CHAT.withRetry(0.2));
        families.put("long chat, documents 0.3 of 1k-32k", LONG_CHAT.withDocuments(0.3, 1_000, 32_000));
        families.forEach((name, shape) -> out.add(new Trace(name, TUNED_ON.contains(name),
                () -> TraceShapes.generateLabelled(shape, seed, requests))));
        return out;
    }

    /**
     * The comparison's traces for every seed from {@code firstSeed} to {@code lastSeed}: the trace {@code file} once
     * (it has no seed), then each seed's generated traces, named after their seed ({@code seed 3, chat}).
     */
    public static List<Trace> traces(String fileName, List<TraceRequest> file, long firstSeed, long lastSeed,
                                     int requests) {
        List<Trace> out = new ArrayList<>();
        if (file != null) {
            out.add(Trace.of(fileName, TUNED_ON.contains(fileName), file));
        }
        for (long seed = firstSeed; seed <= lastSeed; seed++) {
            for (Trace t : traces(null, null, seed, requests)) {
                out.add(new Trace("seed " + seed + ", " + t.name(), t.tuned(), t.labelled()));
            }
        }
        return out;
    }

    /**
     * Runs {@code policies} and the oracle on every trace (and, on a generated trace with one-off requests, the
     * kinds-known reference), under every layout of {@link #MEMORY} at its memory sizes, handing each row to
     * {@code progress} as it is done.
     */
    public List<Row> run(List<Trace> traces, List<String> policies, Consumer<Row> progress) {
        List<Row> out = new ArrayList<>();
        for (Trace t : traces) {
            TraceShapes.Labelled labelled = t.labelled().get();
            List<TraceRequest> requests = labelled.requests();
            boolean kinds = labelled.oneOff() != null && !labelled.oneOff().isEmpty();
            Set<RecordKey> oneOffOnly = kinds ? KindsKnownPolicy.oneOffOnly(requests, labelled.oneOff()) : Set.of();
            double ceiling = TraceCeiling.of(requests, rows).rowCeiling();
            for (String layoutName : List.of("qwen-tp1", "deepseek-tp4")) {
                Layout layout = Layout.preset(layoutName);
                for (long warm : MEMORY.get(layoutName)) {
                    CacheConfig memory = CacheConfig.memoryOnly(layout, warm).withConcurrency(concurrency);
                    ReplaySimulator sim = new ReplaySimulator(diskBytes > 0 ? memory.withDisk("simulated", diskBytes)
                            : memory, rows);
                    Map<String, Double> hits = new LinkedHashMap<>();
                    for (String p : policies) {
                        hits.put(p, sim.run(requests, p).hitRatio());
                    }
                    hits.put(ReplaySimulator.ORACLE, sim.run(requests, ReplaySimulator.ORACLE).hitRatio());
                    if (kinds) {
                        hits.put(ReplaySimulator.KINDS_KNOWN, sim.run(requests, new KindsKnownPolicy(oneOffOnly))
                                .hitRatio());
                    }
                    Row row = new Row(t.name(), t.tuned(), layoutName, warm, diskBytes, ceiling, hits);
                    out.add(row);
                    progress.accept(row);
                }
            }
        }
        return out;
    }

    /**
     * The rows as a Markdown table: hit ratios in percent, each policy's share of the oracle, tuned-on marked; the
     * kinds-known reference beside the oracle ("-" where a trace has no one-off requests, or nothing knows which).
     */
    public static String table(List<Row> rows, List<String> policies) {
        StringBuilder b = new StringBuilder("| trace | layout | memory |");
        for (String p : policies) {
            b.append(' ').append(p).append(" |");
        }
        b.append(" oracle | ").append(ReplaySimulator.KINDS_KNOWN).append(" | ceiling |");
        for (String p : policies) {
            if (!p.equals("lru")) {
                b.append(' ').append(p).append(" − lru |");
            }
        }
        for (String p : policies) {
            b.append(' ').append(p).append(" / oracle |");
        }
        b.append(' ').append(ReplaySimulator.KINDS_KNOWN).append(" / oracle |");
        b.append('\n').append("|---|---|---|").append("---|".repeat(3 * policies.size() + 3)).append('\n');
        for (Row r : rows) {
            b.append("| ").append(r.trace()).append(r.tuned() ? " (tuned on)" : "").append(" | ").append(r.layout())
                    .append(" | ").append(ByteSize.format(r.warmBytes()))
                    .append(r.diskBytes() > 0 ? " + " + ByteSize.format(r.diskBytes()) + " disk" : "").append(" |");
            for (String p : policies) {
                b.append(String.format(Locale.ROOT, " %.1f%% |", 100 * r.hitRatio().get(p)));
            }
            b.append(String.format(Locale.ROOT, " %.1f%% | %s | %.1f%% |",
                    100 * r.hitRatio().get(ReplaySimulator.ORACLE), r.hasKindsKnown() ? String.format(Locale.ROOT,
                            "%.1f%%", 100 * r.hitRatio().get(ReplaySimulator.KINDS_KNOWN)) : "-", 100 * r.ceiling()));
            for (String p : policies) {
                if (!p.equals("lru")) {
                    b.append(String.format(Locale.ROOT, " %+.1f |", r.pointsOverLru(p)));
                }
            }
            for (String p : policies) {
                b.append(String.format(Locale.ROOT, " %.2f |", r.ofOracle(p)));
            }
            b.append(r.hasKindsKnown() ? String.format(Locale.ROOT, " %.2f |", r.ofOracle(ReplaySimulator.KINDS_KNOWN))
                    : " - |");
            b.append('\n');
        }
        return b.toString();
    }

    /** Per policy, its mean points over LRU on the rows held out and on those tuned on. */
    public static String means(List<Row> rows, List<String> policies) {
        List<Row> held = rows.stream().filter(r -> !r.tuned()).toList();
        List<Row> tuned = rows.stream().filter(Row::tuned).toList();
        StringBuilder b = new StringBuilder();
        for (String p : policies) {
            b.append(String.format(Locale.ROOT, "%s: mean over lru %s points held out (%d rows), %s tuned on "
                    + "(%d rows)%n", p, meanPoints(held, p), held.size(), meanPoints(tuned, p), tuned.size()));
        }
        return b.toString();
    }

    /** {@code policy}'s mean points over LRU on {@code rows}, signed, or "-" when there are none. */
    private static String meanPoints(List<Row> rows, String policy) {
        return rows.isEmpty() ? "-" : String.format(Locale.ROOT, "%+.2f",
                rows.stream().mapToDouble(r -> r.pointsOverLru(policy)).average().orElseThrow());
    }

    /**
     * The rows where {@code policy} breaks a rule a default is held to, one line each: it loses more than one point
     * to LRU (on any row), or it serves less than 0.7 of the oracle on a row not tuned on where the oracle beats LRU
     * by more than five points (with the kinds-known reference's share where the row has it).
     */
    public static List<String> breaches(List<Row> rows, String policy) {
        List<String> out = new ArrayList<>();
        for (Row r : rows) {
            String where = r.trace() + ", " + r.layout() + ", " + ByteSize.format(r.warmBytes());
            double points = r.pointsOverLru(policy);
            if (points < -1) {
                out.add(String.format(Locale.ROOT, "%s: %+.2f points against lru%s", where, points,
                        r.tuned() ? " (tuned on)" : ""));
            }
            if (!r.tuned() && r.oracleWellAboveLru() && r.ofOracle(policy) < 0.7) {
                out.add(String.format(Locale.ROOT, "%s: %.3f of the oracle (lru %.3f%s)", where,
                        r.ofOracle(policy), r.ofOracle("lru"), r.hasKindsKnown() ? String.format(Locale.ROOT,
                                ", %s %.3f", ReplaySimulator.KINDS_KNOWN, r.ofOracle(ReplaySimulator.KINDS_KNOWN))
                                : ""));
            }
        }
        return out;
    }

    /**
     * Per policy, over the rows not tuned on: the worst loss to LRU in points, and, where the oracle beats LRU by more
     * than five points, the lowest share of the oracle and the rows under 0.7 of it (and how many of those the
     * kinds-known reference serves at 0.7 or more: the rows where telling one-off requests apart would be enough).
     */
    public static String summary(List<Row> rows, List<String> policies) {
        StringBuilder b = new StringBuilder();
        for (String p : policies) {
            double worstAll = Double.POSITIVE_INFINITY;
            double worstHeldOut = Double.POSITIVE_INFINITY;
            double lowestShare = Double.POSITIVE_INFINITY;
            int under = 0;
            int reachable = 0;
            String worstAt = "";
            for (Row r : rows) {
                double d = r.pointsOverLru(p);
                if (d < worstAll) {
                    worstAll = d;
                    worstAt = r.trace() + ", " + r.layout() + ", " + ByteSize.format(r.warmBytes());
                }
                if (!r.tuned()) {
                    worstHeldOut = Math.min(worstHeldOut, d);
                    if (r.oracleWellAboveLru()) {
                        lowestShare = Math.min(lowestShare, r.ofOracle(p));
                        if (r.ofOracle(p) < 0.7) {
                            under++;
                            if (r.hasKindsKnown() && r.ofOracle(ReplaySimulator.KINDS_KNOWN) >= 0.7) {
                                reachable++;
                            }
                        }
                    }
                }
            }
            b.append(String.format(Locale.ROOT, "%s: worst against lru %+.1f points (%s); held out: worst %+.1f "
                    + "points, lowest share of the oracle where it beats lru by 5 points %s, under 0.7 on %d rows (%d "
                    + "of them where %s reaches 0.7)%n", p, worstAll, worstAt, worstHeldOut,
                    lowestShare == Double.POSITIVE_INFINITY ? "(none)" : String.format(Locale.ROOT, "%.2f",
                            lowestShare), under, reachable, ReplaySimulator.KINDS_KNOWN));
        }
        return b.toString();
    }
}
