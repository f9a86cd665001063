package dev.selene.engine.simulator;

import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.intake.IntakeSizing;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.policy.Policies;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotList;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceRequest;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Replays a trace through a memory-only node's cores without actors: the same {@link RecordCatalog} (match rule,
 * admission, eviction policy), the same {@link SlotAccounting} (intake kept free, evictions in batches) and the
 * same steps per request as {@code selene replay} drives through a node: look up and restore the match, then
 * publish the request's records from the match on. A whole trace takes seconds, so a policy can be tried on many
 * traces; a test holds its hit ratio equal to the node's on a short trace.
 *
 * <p>The policy {@code oracle} drops the record whose next reference is farthest away ({@link OraclePolicy}); only
 * the simulator can run it, since it reads the trace ahead.
 */
public final class ReplaySimulator {

    /** Namespace of the simulated records, as the node replay's. */
    public static final String NAMESPACE = "replay";

    /** The policy name of the farthest-next-use reference. */
    public static final String ORACLE = OraclePolicy.NAME;

    /**
     * Evictions free at least this fraction of the intake at once, as the node's slot pool asks for them (each
     * eviction is a round trip to the catalog there).
     */
    static final int EVICTION_BATCH_DIVISOR = 8;

    private final CacheConfig config;
    private final RowRule rows;
    private final Layout layout;

    /** A simulator of a memory-only node of {@code config} whose engine places rows by {@code rows}. */
    public ReplaySimulator(CacheConfig config, RowRule rows) {
        if (!config.memoryOnly()) {
            throw new IllegalArgumentException("the simulator models a memory-only node; the configuration has a "
                    + "disk or pool tier");
        }
        if (config.layout().tokensPerRecord() != TraceRequest.BLOCK_TOKENS) {
            throw new IllegalArgumentException("layout '" + config.layout().name() + "' has records of "
                    + config.layout().tokensPerRecord() + " tokens; allowed: a layout whose records cover "
                    + TraceRequest.BLOCK_TOKENS + " tokens (deepseek-tp4, qwen-tp1)");
        }
        this.config = config;
        this.rows = rows;
        this.layout = config.layout();
    }

    /** Replays {@code trace} under the policy named {@code policy} ({@link Policies#NAMES} or {@code oracle}). */
    public SimulationResult run(List<TraceRequest> trace, String policy) {
        return new Run(trace, ORACLE.equals(policy) ? null : Policies.create(policy)).replay();
    }

    /** Replays {@code trace} under {@code policy}, a fresh instance no index has used (to measure a variant). */
    public SimulationResult run(List<TraceRequest> trace, EvictionPolicy policy) {
        return new Run(trace, policy).replay();
    }

    /** The state of one replay. */
    private final class Run {
        private final List<TraceRequest> trace;
        private final long[][] chains;
        private final EvictionPolicy policy;
        private final OraclePolicy oracle;
        private final RecordCatalog catalog;
        private final SlotAccounting slots;
        private final Map<RecordKey, int[]> references;
        private final Map<RecordKey, Integer> cursor = new HashMap<>();
        private long nowNanos;
        private int request;
        private long tokensRequested;
        private long tokensFromCache;
        private long blocksReferenced;
        private long blocksRestored;
        private long requestsHit;
        private long published;
        private long stored;
        private long present;
        private long abandoned;
        private long evicted;
        private long bytesRestored;

        /** A replay under {@code chosen}; the oracle when it is null. */
        Run(List<TraceRequest> trace, EvictionPolicy chosen) {
            this.trace = trace;
            this.chains = new long[trace.size()][];
            for (int i = 0; i < chains.length; i++) {
                chains[i] = ChainHash.chain(trace.get(i).hashIds());
            }
            if (chosen == null) {
                this.references = references(chains);
                this.oracle = new OraclePolicy(this::nextUse);
                this.policy = oracle;
            } else {
                this.references = Map.of();
                this.oracle = null;
                this.policy = chosen;
            }
            IntakeSizing sizing = IntakeSizing.compute(layout, config.concurrency(), config.effectiveWindowSlots(),
                    config.warmBytes(), config.hostBudgetBytes());
            this.slots = new SlotAccounting(sizing.totalSlots(), sizing.slots());
            this.catalog = new RecordCatalog(layout, 0, 1, () -> nowNanos, policy);
        }

        SimulationResult replay() {
            for (request = 0; request < chains.length; request++) {
                TraceRequest r = trace.get(request);
                nowNanos = Math.max(nowNanos + 1, r.timestampMillis() * 1_000_000);
                long[] chain = chains[request];
                if (oracle != null) {
                    for (long hash : chain) {
                        oracle.referenced(new RecordKey(NAMESPACE, hash));
                    }
                }
                tokensRequested += r.inputLength();
                blocksReferenced += chain.length;
                int depth = restore(chain);
                if (depth > 0) {
                    requestsHit++;
                    blocksRestored += depth;
                    tokensFromCache += Math.min((long) depth * TraceRequest.BLOCK_TOKENS, r.inputLength());
                }
                publish(r, chain, depth);
            }
            return new SimulationResult(policy.name(), rows.label(), chains.length, tokensRequested,
                    tokensFromCache, blocksReferenced, blocksRestored, requestsHit, published, stored, present,
                    abandoned, evicted, bytesRestored);
        }

        /** Restores the match as the node does: pin it, copy, unpin, mark its deepest record used. */
        private int restore(long[] chain) {
            if (chain.length == 0) {
                return 0;
            }
            RecordCatalog.Match match = catalog.match(NAMESPACE, chain);
            if (match.depth() == 0) {
                return 0;
            }
            for (RecordCatalog.Located l : match.records()) {
                catalog.pin(l.spec().key());
                bytesRestored += layout.recordBytes(l.spec().hasRow());
            }
            syncClean();
            for (RecordCatalog.Located l : match.records()) {
                catalog.unpin(l.spec().key());
            }
            catalog.used(match.records().getLast().spec().key(), List.of());
            syncClean();
            return match.depth();
        }

        /** Publishes the request's records from the match on: all are admitted first, then copied in order. */
        private void publish(TraceRequest r, long[] chain, int from) {
            int n = rows.published(r);
            List<RecordSpec> admitted = new ArrayList<>();
            for (int i = from; i < n; i++) {
                RecordKey parent = i == 0 ? null : new RecordKey(NAMESPACE, chain[i - 1]);
                RecordSpec spec = new RecordSpec(new RecordKey(NAMESPACE, chain[i]), parent, rows.hasRow(r, i));
                published++;
                switch (catalog.admit(spec)) {
                    case ADMITTED -> admitted.add(spec);
                    case PRESENT -> present++;
                    case IN_FLIGHT -> throw new IllegalStateException(spec.key() + " is in flight between requests");
                }
            }
            syncClean();
            for (RecordSpec spec : admitted) {
                SlotList granted = allocate(spec.slots(layout));
                if (granted == null) {
                    abandoned++;
                    catalog.publicationEnded(spec.key());
                } else {
                    stored++;
                    catalog.resident(spec, granted);
                }
                syncClean();
            }
        }

        /**
         * Allocates {@code n} slots as the node's slot pool grants a publication: when the grant would eat into the
         * intake, first evict droppable records in batches of an eighth of the intake; null when it cannot fit.
         */
        private SlotList allocate(int n) {
            while (true) {
                int wanted = slots.evictionWanted(n);
                if (wanted > 0 && slots.clean() > 0) {
                    int batch = Math.min(slots.clean(), Math.max(wanted, slots.intake() / EVICTION_BATCH_DIVISOR));
                    RecordCatalog.Removal removal = catalog.evictClean(batch);
                    evicted += removal.removed().size();
                    slots.removeClean(slots.clean());
                    removal.slots().forEach(slots::release);
                    syncClean();
                    continue;
                }
                return slots.shortBy(n, SlotAccounting.Purpose.PUBLISH) == 0 ? slots.allocate(n) : null;
            }
        }

        /** Brings the slot accounting's clean count to the catalog's, as the node's catalog reports it. */
        private void syncClean() {
            long delta = catalog.cleanSlots() - slots.clean();
            if (delta > 0) {
                slots.addClean((int) delta);
            } else if (delta < 0) {
                slots.removeClean((int) -delta);
            }
        }

        /** The next request after the current one that references {@code key}; Long.MAX_VALUE when none does. */
        private long nextUse(RecordKey key) {
            int[] at = references.get(key);
            if (at == null) {
                return Long.MAX_VALUE;
            }
            int c = cursor.getOrDefault(key, 0);
            while (c < at.length && at[c] <= request) {
                c++;
            }
            cursor.put(key, c);
            return c < at.length ? at[c] : Long.MAX_VALUE;
        }
    }

    /** For every key, the requests that reference it, in order. */
    private static Map<RecordKey, int[]> references(long[][] chains) {
        Map<RecordKey, List<Integer>> lists = new HashMap<>();
        for (int j = 0; j < chains.length; j++) {
            for (long hash : chains[j]) {
                List<Integer> l = lists.computeIfAbsent(new RecordKey(NAMESPACE, hash), k -> new ArrayList<>(2));
                if (l.isEmpty() || l.getLast() != j) {
                    l.add(j);
                }
            }
        }
        Map<RecordKey, int[]> out = new HashMap<>(lists.size() * 2);
        lists.forEach((k, l) -> out.put(k, l.stream().mapToInt(Integer::intValue).toArray()));
        return out;
    }
}
