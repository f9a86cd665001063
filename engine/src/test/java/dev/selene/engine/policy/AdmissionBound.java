package dev.selene.engine.policy;

import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.simulator.PolicyComparison;
import dev.selene.engine.simulator.ReplaySimulator;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceRequest;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * Not a test: how much of the oracle's lead over LRU on one comparison row is admission (knowing which records will
 * never be used again) and how much is timing (knowing when the others will). It replays the row under LRU, the
 * default policy, the oracle, and LRU told in advance which records are dead (no later request references their key):
 * dead records go first, the rest by recency; once for every record, once for rows only, once for page-only records
 * only. Run with {@code java -cp engine/target/classes:engine/target/test-classes
 * dev.selene.engine.policy.AdmissionBound SYNTHETIC_TRACE FAMILY SEEDS [LAYOUT [MEMORY_MIB]]}, e.g.
 * {@code traces/synthetic_trace.jsonl shared-prompt-chat 6,8,11 deepseek-tp4 2048}.
 */
public final class AdmissionBound {

    private AdmissionBound() {
    }

    public static void main(String[] args) throws Exception {
        List<TraceRequest> synthetic = WorthTuning.read(Path.of(args[0]));
        String family = args[1];
        String layout = args.length > 3 ? args[3] : "deepseek-tp4";
        long warm = (args.length > 4 ? Long.parseLong(args[4]) : 2048L) << 20;
        for (String s : args[2].split(",")) {
            long seed = Long.parseLong(s.trim());
            List<TraceRequest> requests = PolicyComparison.traces("synthetic_trace", synthetic, seed, 4000).stream()
                    .filter(t -> t.name().equals(family)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("no trace named " + family)).requests().get();
            ReplaySimulator sim = new ReplaySimulator(CacheConfig.memoryOnly(Layout.preset(layout), warm)
                    .withConcurrency(8), RowRule.LAST_FULL);
            Map<Long, Integer> references = new HashMap<>();
            for (TraceRequest r : requests) {
                for (long h : ChainHash.chain(r.hashIds())) {
                    references.merge(h, 1, Integer::sum);
                }
            }
            double oracle = sim.run(requests, "oracle").hitRatio();
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%s seed %d %s %d MiB: oracle %.4f", family,
                    seed, layout, warm >> 20, oracle));
            for (String policy : List.of("lru", WorthPolicy.NAME)) {
                double h = sim.run(requests, policy).hitRatio();
                b.append(String.format(Locale.ROOT, "  %s %.4f (%.2f)", policy, h, h / oracle));
            }
            for (Dead dead : Dead.values()) {
                double h = sim.run(requests, new DeadFirst(references, dead)).hitRatio();
                b.append(String.format(Locale.ROOT, "  dead-first %s %.4f (%.2f)", dead.name().toLowerCase(Locale.ROOT),
                        h, h / oracle));
            }
            System.out.println(b);
        }
    }

    /** Which records the bound is told are dead. */
    enum Dead {
        ALL, ROWS, PAGES
    }

    /**
     * LRU told which records will never be used again: a record whose key has been referenced by as many requests as
     * reference it in the whole trace goes first, the rest by recency. Every request that references a resident key
     * reaches the policy once (published, resumed from, matched through, or present), which is how it counts them.
     */
    static final class DeadFirst implements EvictionPolicy {
        private final Map<Long, Integer> references;
        private final Dead told;
        private final Map<Long, Integer> seen = new HashMap<>();
        private final Map<RecordIndex.Entry, long[]> rank = new HashMap<>();
        private final TreeSet<RecordIndex.Entry> order = new TreeSet<>((a, b) -> {
            long[] x = rank.get(a);
            long[] y = rank.get(b);
            return x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]);
        });
        private long clock;

        DeadFirst(Map<Long, Integer> references, Dead told) {
            this.references = references;
            this.told = told;
        }

        @Override
        public String name() {
            return "dead-first";
        }

        @Override
        public void onInsert(RecordIndex.Entry e) {
            referenced(e);
        }

        @Override
        public void onUse(RecordIndex.Entry e, Use use) {
            referenced(e);
        }

        @Override
        public void onAncestorUse(RecordIndex.Entry e) {
            referenced(e);
        }

        @Override
        public void onRemove(RecordIndex.Entry e) {
            rank.remove(e);
        }

        @Override
        public void enlist(RecordIndex.Entry e) {
            rank.get(e)[0] = dead(e) ? 0 : 1;
            order.add(e);
        }

        @Override
        public void delist(RecordIndex.Entry e) {
            order.remove(e);
        }

        @Override
        public RecordIndex.Entry victim() {
            return order.isEmpty() ? null : order.first();
        }

        @Override
        public int size() {
            return order.size();
        }

        private void referenced(RecordIndex.Entry e) {
            seen.merge(e.key().hash(), 1, Integer::sum);
            boolean enlisted = rank.containsKey(e) && order.remove(e);
            rank.put(e, new long[] {dead(e) ? 0 : 1, ++clock});
            if (enlisted) {
                order.add(e);
            }
        }

        private boolean dead(RecordIndex.Entry e) {
            boolean row = e.spec().hasRow();
            if (told == Dead.ROWS && !row || told == Dead.PAGES && row) {
                return false;
            }
            return seen.getOrDefault(e.key().hash(), 0) >= references.getOrDefault(e.key().hash(), 0);
        }
    }
}
