package dev.selene.actors.pool;

import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.Publisher;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.api.SnapshotLease;
import dev.selene.actors.trace.TraceEvent;
import dev.selene.actors.value.RecordDescription;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * Records of the kill tests, shared by the test JVM and the child hosts: chains of records on the small layout whose
 * bytes are derived from their keys ({@link KeyedContent}), published from snapshots on a simulated device, and
 * restores checked byte by byte.
 */
public final class KeyedChains {

    public static final Layout LAYOUT = Layout.small();
    /**
     * How long a publication's snapshot lives: the node may keep it waiting for slots that long. Longer than a killed
     * manager takes to be downed on a loaded machine, so that a publication waiting for a retirement meanwhile is
     * not abandoned (the kill test requires every publication after the kill stored).
     */
    public static final Duration SNAPSHOT_LEASE = Duration.ofSeconds(60);
    /** Host slots of a pool host: the intake only (no warm tier), room for eight records. */
    public static final int HOST_SLOTS = 40;

    private KeyedChains() {
    }

    /**
     * A pool host without a warm tier: its slots are the intake, every record it keeps is retired to the pool
     * (under pressure, or by a drain).
     */
    public static CacheConfig hostConfig(List<String> managers) {
        return CacheConfig.memoryOnly(LAYOUT, 0).withConcurrency(1)
                .withWindowSlots(LAYOUT.slotsPerRecord(true))
                .withHostBudgetBytes(HOST_SLOTS * LAYOUT.slotBytes())
                .withPool(managers).withDrainOnShutdown(false);
    }

    /** Chain {@code index} of {@code length} records of {@code namespace}: hashes {@code base + index * length + i}. */
    public static List<RecordSpec> chain(String namespace, long base, int index, int length) {
        List<RecordSpec> specs = new ArrayList<>(length);
        RecordKey parent = null;
        for (int i = 0; i < length; i++) {
            RecordKey key = new RecordKey(namespace, base + (long) index * length + i);
            specs.add(new RecordSpec(key, parent, true));
            parent = key;
        }
        return specs;
    }

    public static long[] hashes(List<RecordSpec> specs) {
        return specs.stream().mapToLong(s -> s.key().hash()).toArray();
    }

    /** Publishes {@code spec} from a fresh snapshot with the retrying publisher; the snapshot is freed after. */
    public static PublishOutcome publish(SeleneCache cache, SimulatedDevice device, RecordSpec spec) throws Exception {
        long base = device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, spec.hasRow()));
        try {
            DevicePlacement snapshot = DevicePlacement.contiguous(LAYOUT, base, spec.hasRow());
            KeyedContent.fillRecord(device, LAYOUT, snapshot, spec.key(), spec.hasRow());
            SnapshotLease lease = SnapshotLease.until(System.nanoTime() + SNAPSHOT_LEASE.toNanos());
            return await(new Publisher(cache).publish(spec, snapshot, lease), SNAPSHOT_LEASE.plusSeconds(40));
        } finally {
            device.freeDevice(base);
        }
    }

    /** Whether the host counts {@code key} as retired: a validated copy is held by every manager it was placed on. */
    public static boolean retired(SeleneCache cache, RecordKey key) throws Exception {
        RecordDescription d = await(cache.describe(key), Duration.ofSeconds(30));
        return d.record() != null && d.record().durable();
    }

    /**
     * A restore's answer and how many of the records it reported restored hold exactly their keyed bytes; the
     * device targets are freed once it has answered.
     */
    public record Restore(RestoreResult result, int verified) {

        /** Whether every record the restore reported is byte-identical (a miss or a failure reports none). */
        public boolean noWrongBytes() {
            return result.outcome() != RestoreResult.Outcome.RESTORED || verified == result.records();
        }

        /** Whether the whole chain of {@code length} records was restored, byte-identically, from the pool. */
        public boolean wholeFromPool(int length) {
            return result.outcome() == RestoreResult.Outcome.RESTORED && result.records() == length
                    && verified == length && result.fromPool() == length;
        }
    }

    /** Restores {@code specs} (a chain from its root) into fresh device targets and checks the bytes restored. */
    public static Restore restore(SeleneCache cache, SimulatedDevice device, List<RecordSpec> specs) throws Exception {
        String namespace = specs.getFirst().key().namespace();
        List<Long> bases = new ArrayList<>();
        List<DevicePlacement> targets = new ArrayList<>();
        for (RecordSpec s : specs) {
            long base = device.allocateDevice(DevicePlacement.bytesNeeded(LAYOUT, s.hasRow()));
            bases.add(base);
            targets.add(DevicePlacement.contiguous(LAYOUT, base, s.hasRow()));
        }
        // A restore that does not answer may still copy into its targets: they are freed only after an answer.
        RestoreResult r = await(cache.restore(namespace, hashes(specs), targets, Duration.ofHours(1)),
                Duration.ofSeconds(40));
        try {
            int verified = 0;
            if (r.outcome() == RestoreResult.Outcome.RESTORED) {
                for (int i = 0; i < r.records(); i++) {
                    if (KeyedContent.verifyRecord(device, LAYOUT, targets.get(i), specs.get(i).key(),
                            specs.get(i).hasRow())) {
                        verified++;
                    }
                }
            }
            return new Restore(r, verified);
        } finally {
            bases.forEach(device::freeDevice);
        }
    }

    /** The last steps of each record's trace on {@code cache}, for a failure message. */
    public static String traces(SeleneCache cache, List<RecordSpec> specs) {
        StringBuilder out = new StringBuilder();
        for (RecordSpec s : specs) {
            List<TraceEvent> trace = cache.traces().trace(s.key()).orElse(List.of());
            out.append(System.lineSeparator()).append("  ").append(s.key()).append(':');
            for (TraceEvent e : trace.subList(Math.max(0, trace.size() - 6), trace.size())) {
                out.append(" [").append(e.actor()).append("] ").append(e.message()).append(';');
            }
        }
        return out.toString();
    }

    /** The shares of a record's keyed bytes in heap memory, for an image framed without a host. */
    public static PieceShares keyedShares(RecordSpec spec) {
        int pieces = LAYOUT.slotsPerRecord(spec.hasRow());
        MemorySegment[][] shares = new MemorySegment[pieces][LAYOUT.ranks()];
        for (int piece = 0; piece < pieces; piece++) {
            for (int rank = 0; rank < LAYOUT.ranks(); rank++) {
                MemorySegment share = Arena.ofAuto().allocate(LAYOUT.pageBytes(), Layout.ALIGNMENT_BYTES);
                KeyedContent.fill(share.asSlice(0, LAYOUT.pieceBytes(piece)), KeyedContent.seed(spec.key(), rank,
                        piece));
                shares[piece][rank] = share;
            }
        }
        return (piece, rank) -> shares[piece][rank];
    }

    public static <T> T await(CompletionStage<T> stage, Duration timeout) throws Exception {
        return stage.toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }
}
