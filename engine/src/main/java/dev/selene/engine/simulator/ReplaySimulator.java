package dev.selene.engine.simulator;

import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.cost.PrefillCost;
import dev.selene.engine.cost.RestoreCost;
import dev.selene.engine.index.EvictionPolicy;
import dev.selene.engine.intake.IntakeSizing;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.policy.Policies;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceRequest;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Replays a trace through a node's cores without actors: the same {@link RecordCatalog} (match rule, admission,
 * eviction policy, spill choice, disk eviction), the same {@link SlotAccounting} (intake kept free, evictions in
 * batches, the pressure that spills relieve) and the same steps per request as {@code selene replay} drives through
 * a node: look up and restore the match, then publish the request's records from the match on. A whole trace takes
 * seconds, so a policy can be tried on many traces; a test holds its hit ratio equal to the node's on a short trace.
 *
 * <p>With a disk tier (a configuration with a disk directory; nothing is written to it) the node's spill and
 * restore rules run as well: whenever free plus clean slots fall short of two intakes (plus the slots a publication
 * or a staging read waits for), the catalog's spill plan writes the coldest dirty records, ancestors first, deleting
 * the least recently used files of records no longer in memory for room; a written record is clean and memory may
 * drop it. Writes finish one after another before the replay's next step, with the node's plans between them (see
 * {@code spill}); the node's finish while it goes on, so the two agree closely, not exactly. A match's records on disk cost a read the node estimates at the
 * {@link PrefillCost}'s disk bandwidth (a restore estimated slower than recomputing is refused, as the node refuses
 * it), are staged in waves of {@link #READS_PER_WAVE} through the slot pool and stay resident as clean records.
 *
 * <p>The policy {@code oracle} drops the record whose next reference is farthest away ({@link OraclePolicy}); only
 * the simulator can run it, since it reads the trace ahead. With a disk tier it is that rule over one memory-only
 * tier as large as memory and disk together (see {@link #oracleConfig}).
 */
public final class ReplaySimulator {

    /** Namespace of the simulated records, as the node replay's. */
    public static final String NAMESPACE = "replay";

    /** The policy name of the farthest-next-use reference. */
    public static final String ORACLE = OraclePolicy.NAME;

    /** The name of the reference that knows which requests are one-off questions ({@link #runKindsKnown}). */
    public static final String KINDS_KNOWN = KindsKnownPolicy.NAME;

    /**
     * Evictions free at least this fraction of the intake at once, as the node's slot pool asks for them (each
     * eviction is a round trip to the catalog there).
     */
    static final int EVICTION_BATCH_DIVISOR = 8;

    /** Record writes a spill plan starts at once, as the node's disk tier caps them. */
    static final int SPILL_IN_FLIGHT_CAP = 12;

    /** Disk reads of one restore's wave, as the node's restores stage them. */
    static final int READS_PER_WAVE = 4;

    private final CacheConfig config;
    private final RowRule rows;
    private final Layout layout;
    private final PrefillCost cost;
    private final long diskBytes;

    /**
     * A simulator of a node of {@code config} (memory only, or memory and a disk tier) whose engine places rows by
     * {@code rows}, with the default prefill rate and disk estimate for the restore decision.
     */
    public ReplaySimulator(CacheConfig config, RowRule rows) {
        this(config, rows, PrefillCost.withPrefill(PrefillCost.DEFAULT_PREFILL_TOKENS_PER_SECOND));
    }

    /**
     * A simulator as above whose restores from disk are refused, as the node refuses them, when reading their bytes
     * at {@code cost}'s disk bandwidth would take longer than recomputing the prefix at its prefill rate.
     */
    public ReplaySimulator(CacheConfig config, RowRule rows, PrefillCost cost) {
        if (config.poolEnabled()) {
            throw new IllegalArgumentException("the simulator models memory and a disk tier; the configuration has a "
                    + "pool tier");
        }
        if (config.layout().tokensPerRecord() != TraceRequest.BLOCK_TOKENS) {
            throw new IllegalArgumentException("layout '" + config.layout().name() + "' has records of "
                    + config.layout().tokensPerRecord() + " tokens; allowed: a layout whose records cover "
                    + TraceRequest.BLOCK_TOKENS + " tokens (deepseek-tp4, qwen-tp1)");
        }
        if (!config.memoryOnly() && config.diskBytes() <= 0) {
            throw new IllegalArgumentException("a disk tier of " + config.diskBytes() + " bytes is invalid; allowed: "
                    + "more than 0 bytes");
        }
        this.config = config;
        this.rows = rows;
        this.layout = config.layout();
        this.cost = cost;
        this.diskBytes = config.memoryOnly() ? 0 : config.diskBytes();
    }

    /** Whether the simulated node has a disk tier. */
    public boolean hasDisk() {
        return diskBytes > 0;
    }

    /** Replays {@code trace} under the policy named {@code policy} ({@link Policies#NAMES} or {@code oracle}). */
    public SimulationResult run(List<TraceRequest> trace, String policy) {
        if (ORACLE.equals(policy) && hasDisk()) {
            return new ReplaySimulator(oracleConfig(), rows, cost).run(trace, ORACLE);
        }
        return new Run(trace, ORACLE.equals(policy) ? null : Policies.create(policy)).replay();
    }

    /**
     * The oracle's node when there is a disk tier: one memory-only tier holding what memory and disk hold together
     * (the disk's bytes counted in slots at the size of a pages-only record's file against its slots, so a file's
     * header and alignment are paid for), with the intake of the real one. Under farthest next use the union of two
     * tiers that each drop the farthest record is that one tier: memory keeps what comes back soonest, the disk what
     * comes back next, and what either would drop for good is the farthest of all.
     */
    CacheConfig oracleConfig() {
        long slotBytes = layout.slotBytes();
        int pageSlots = layout.slotsPerRecord(false);
        long diskSlots = diskBytes * pageSlots / RecordFileFormat.fileLength(layout, false);
        long extra = diskSlots * slotBytes;
        return new CacheConfig(layout, config.warmBytes() + extra, config.concurrency(), config.windowSlots(),
                config.hostBudgetBytes() + extra, config.device(), null, 0, List.of(), config.maxAge(),
                config.drainOnShutdown(), config.policy());
    }

    /**
     * Replays {@code trace} under the kinds-known reference ({@link KindsKnownPolicy}): least recently used, except
     * that the records only the requests {@code oneOff} names contain (one-off questions' own blocks) go first.
     */
    public SimulationResult runKindsKnown(List<TraceRequest> trace, BitSet oneOff) {
        return new Run(trace, new KindsKnownPolicy(KindsKnownPolicy.oneOffOnly(trace, oneOff))).replay();
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
        private final boolean disk;
        private final Map<RecordKey, int[]> references;
        private final Map<RecordKey, Integer> cursor = new HashMap<>();
        private final ArrayDeque<RecordCatalog.SpillStart> writes = new ArrayDeque<>();
        private long nowNanos;
        private int request;
        private long tokensRequested;
        private long tokensFromCache;
        private long rowsAdded;
        private long rowsDropped;
        private long tokensFromDisk;
        private long blocksReferenced;
        private long blocksRestored;
        private long requestsHit;
        private long restoresFromMemory;
        private long restoresFromDisk;
        private long restoresRefused;
        private long published;
        private long stored;
        private long present;
        private long abandoned;
        private long evicted;
        private long spilled;
        private long evictedFromDisk;
        private long bytesRestored;
        private long bytesFromDisk;

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
            this.disk = diskBytes > 0;
            this.catalog = disk ? new RecordCatalog(layout, diskBytes, SPILL_IN_FLIGHT_CAP, () -> nowNanos, policy)
                    : new RecordCatalog(layout, 0, 1, () -> nowNanos, policy);
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
                int depth = restore(r, chain);
                if (depth > 0) {
                    requestsHit++;
                    blocksRestored += depth;
                    tokensFromCache += Math.min((long) depth * TraceRequest.BLOCK_TOKENS, r.inputLength());
                }
                publish(r, chain, depth);
            }
            return new SimulationResult(policy.name(), rows.label(), chains.length, tokensRequested,
                    tokensFromCache, blocksReferenced, blocksRestored, requestsHit, published, stored, present,
                    abandoned, evicted, bytesRestored, tokensFromDisk, bytesFromDisk, restoresFromMemory,
                    restoresFromDisk,
                    restoresRefused, spilled, evictedFromDisk, rowsAdded, rowsDropped, catalog.rowsHeldBack());
        }

        /**
         * Restores the match as the node does: refuse it when its disk part would take longer to read than
         * recomputing; pin the memory part, copy, unpin; stage, read and keep the disk part in waves; mark the
         * deepest record used. Returns the records restored.
         */
        private int restore(TraceRequest r, long[] chain) {
            if (chain.length == 0) {
                return 0;
            }
            RecordCatalog.Match match = catalog.match(NAMESPACE, chain);
            if (match.depth() == 0) {
                return 0;
            }
            List<RecordCatalog.Located> records = match.records();
            long diskPart = 0;
            for (RecordCatalog.Located l : records) {
                if (l.where() == RecordCatalog.Where.DISK) {
                    diskPart += layout.recordBytes(l.spec().hasRow());
                }
            }
            if (diskPart > 0) {
                long tokens = Math.min((long) match.depth() * TraceRequest.BLOCK_TOKENS, r.inputLength());
                long recomputeNanos = (long) (cost.recomputeSeconds(tokens) * 1e9);
                long estimateNanos = (long) (diskPart / cost.diskBytesPerSecond() * 1e9);
                if (RestoreCost.refuse(estimateNanos, recomputeNanos)) {
                    restoresRefused++;
                    return 0;
                }
            }
            List<RecordKey> pinned = new ArrayList<>();
            for (RecordCatalog.Located l : records) {
                if (l.where() == RecordCatalog.Where.MEMORY && catalog.pin(l.spec().key())) {
                    pinned.add(l.spec().key());
                }
            }
            settle();
            int depth = records.size();
            List<RecordKey> readFromDisk = new ArrayList<>();
            if (diskPart > 0) {
                // The node stages the disk part while the memory part's copies run: it stays pinned meanwhile.
                depth = readDiskPart(records, pinned, readFromDisk);
            }
            pinned.forEach(catalog::unpin);
            settle();
            if (depth == 0) {
                return 0; // the node answers FAILED: the replay recomputes
            }
            boolean anyFromDisk = false;
            for (int i = 0; i < depth; i++) {
                RecordCatalog.Located l = records.get(i);
                long bytes = layout.recordBytes(l.spec().hasRow());
                bytesRestored += bytes;
                if (l.where() == RecordCatalog.Where.DISK) {
                    anyFromDisk = true;
                    bytesFromDisk += bytes;
                    tokensFromDisk += Math.max(0, Math.min(TraceRequest.BLOCK_TOKENS,
                            r.inputLength() - (long) i * TraceRequest.BLOCK_TOKENS));
                }
            }
            if (anyFromDisk) {
                restoresFromDisk++;
            }
            if (!pinned.isEmpty()) {
                restoresFromMemory++;
            }
            catalog.used(records.get(depth - 1).spec().key(), readFromDisk);
            settle();
            return depth;
        }

        /**
         * Reads the match's disk part as the node's restore does: waves of up to {@link #READS_PER_WAVE} records,
         * each staged in slots from the pool (the wave's first waits for room, the others come only if there is
         * room then), kept resident as clean records once copied. A wave whose first record finds no room ends the
         * match before it, at the deepest record with a row. Returns the depth restored.
         */
        private int readDiskPart(List<RecordCatalog.Located> records, List<RecordKey> fromMemory,
                                 List<RecordKey> readFromDisk) {
            int depth = records.size();
            List<Integer> pending = new ArrayList<>();
            for (int i = 0; i < records.size(); i++) {
                if (!fromMemory.contains(records.get(i).spec().key())) {
                    pending.add(i);
                }
            }
            while (true) {
                final int limit = depth;
                pending.removeIf(i -> i >= limit);
                if (pending.isEmpty()) {
                    return depth;
                }
                int asked = Math.min(READS_PER_WAVE, pending.size());
                List<Integer> wave = new ArrayList<>();
                Map<Integer, SlotList> staged = new HashMap<>();
                for (int n = 0; n < asked; n++) {
                    int i = pending.get(n);
                    SlotList s = allocate(records.get(i).spec().slots(layout), Purpose.STAGING, n == 0);
                    if (s != null) {
                        staged.put(i, s);
                        wave.add(i);
                    }
                }
                int head = pending.getFirst();
                if (!staged.containsKey(head)) {
                    depth = truncate(records, Math.min(head, depth));
                }
                pending.removeAll(wave);
                for (int i : wave) {
                    RecordSpec spec = records.get(i).spec();
                    if (i < depth && catalog.adoptRestored(spec, staged.get(i))) {
                        readFromDisk.add(spec.key());
                    } else {
                        slots.release(staged.get(i));
                    }
                    settle();
                }
            }
        }

        /** The deepest record with a row before {@code end} (exclusive), as a restore cut short ends. */
        private static int truncate(List<RecordCatalog.Located> records, int end) {
            for (int d = end; d > 0; d--) {
                if (records.get(d - 1).spec().hasRow()) {
                    return d;
                }
            }
            return 0;
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
            settle();
            for (RecordSpec spec : admitted) {
                SlotList granted = allocate(spec.slots(layout), Purpose.PUBLISH, true);
                if (granted == null) {
                    abandoned++;
                    catalog.publicationEnded(spec.key());
                } else {
                    stored++;
                    SlotList surplus = catalog.resident(spec, granted);
                    if (surplus != null) {
                        rowsAdded++;
                        slots.release(surplus);
                    }
                }
                settle();
            }
        }

        /**
         * Allocates {@code n} slots as the node's slot pool grants them: when the grant would eat into the intake,
         * first evict droppable records in batches of an eighth of the intake; with a disk tier, a request that
         * {@code waits} and finds no room waits for the writes that pressure starts (here they finish at once);
         * null when it cannot fit.
         */
        private SlotList allocate(int n, Purpose purpose, boolean waits) {
            while (true) {
                int wanted = slots.evictionWanted(n);
                if (wanted > 0 && slots.clean() > 0) {
                    int batch = Math.min(slots.clean(), Math.max(wanted, slots.intake() / EVICTION_BATCH_DIVISOR));
                    // The node's pool queues the request while the catalog evicts, and reports the pressure with
                    // the request's slots counted as waiting; the catalog plans on it after the eviction.
                    long reported = (long) slots.pressureDeficit() + n;
                    RecordCatalog.Removal removal = catalog.evictClean(batch);
                    evicted += removal.removed().size();
                    rowsDropped += removal.rowsDropped().size();
                    if (disk) {
                        plan(reported);
                    }
                    slots.removeClean(slots.clean());
                    removal.slots().forEach(slots::release);
                    syncClean();
                    continue;
                }
                if (slots.shortBy(n, purpose) == 0) {
                    return slots.allocate(n);
                }
                if (disk && waits && spill(n) > 0) {
                    continue;
                }
                return null;
            }
        }

        /** After a change: the clean count brought up to date and, with a disk tier, the pressure relieved. */
        private void settle() {
            syncClean();
            if (disk) {
                spill(0);
            }
        }

        /**
         * Writes what the catalog's spill plan chooses while free plus clean slots fall short of two intakes plus
         * {@code waiting} (the slots a request waits for): the node's pressure spill, its writes committed one after
         * another before anything else happens, each followed by the node's two plans: one on the commit, with the
         * pressure the slot pool reported before it (the node starts one more write there), and one on the pool's
         * next report, which counts the record as clean. Returns the records written.
         */
        private int spill(int waiting) {
            long target = (long) slots.pressureDeficit() + waiting;
            plan(target);
            int written = 0;
            while (!writes.isEmpty()) {
                RecordCatalog.SpillStart s = writes.pollFirst();
                long fileBytes = RecordFileFormat.fileLength(layout, s.spec().hasRow());
                if (catalog.committed(s.spec().key(), fileBytes) == RecordCatalog.Commit.COMMITTED) {
                    written++;
                    spilled++;
                }
                plan(target);
                syncClean();
                target = (long) slots.pressureDeficit() + waiting;
                plan(target);
            }
            return written;
        }

        /** One spill plan for a pressure of {@code target} slots, its writes queued as in flight. */
        private void plan(long target) {
            if (target <= catalog.writingSlots()) {
                return;
            }
            RecordCatalog.SpillPlan plan = catalog.planSpills(target);
            evictedFromDisk += plan.removal().files().size();
            plan.orphans().slots().forEach(slots::release);
            writes.addAll(plan.start());
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
