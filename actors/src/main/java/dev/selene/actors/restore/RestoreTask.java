package dev.selene.actors.restore;

import dev.selene.actors.api.RestoreResult;
import dev.selene.actors.disk.DiskTier;
import dev.selene.actors.memory.MemoryTier;
import dev.selene.actors.record.RecordContext;
import dev.selene.actors.slots.SlotPool;
import dev.selene.engine.cost.RestoreCost;
import dev.selene.engine.disk.DiskIndex;
import dev.selene.engine.index.ChainMatch;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotAccounting.Purpose;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.CopyPlans;
import dev.selene.transport.gpu.DevicePlacement;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One restore (B14-B16): find the match across memory and disk, refuse it when reading its disk part is
 * estimated slower than recomputing (B15), pin the memory part, read the disk part into staging slots in waves
 * of parallel reads (each wave timed as one transfer for the bandwidth estimator), copy every record to its
 * device placement, then unpin and release.
 */
public final class RestoreTask extends AbstractBehavior<RestoreTask.Command> {

    /** The protocol (internal). */
    public sealed interface Command {
    }

    private record MemoryLocated(MemoryTier.Resident resident) implements Command {
    }

    private record DiskLocated(DiskTier.Located located) implements Command {
    }

    private record PinnedReply(MemoryTier.Pinned pinned) implements Command {
    }

    private record Staged(int position, SlotPool.AllocateReply reply) implements Command {
    }

    private record ReadAnswered(DiskTier.ReadReply reply) implements Command {
    }

    private record CopiesFinished(Throwable failure) implements Command {
    }

    private record WaveCopied(Throwable failure) implements Command {
    }

    private record RetryWave() implements Command {
    }

    private record MemoryCopied() implements Command {
    }

    /** How often a wave that got no staging slots is asked again, and for how long at most. */
    static final Duration STAGING_RETRY_DELAY = Duration.ofMillis(2);
    static final Duration STAGING_PATIENCE = Duration.ofSeconds(5);
    /**
     * The slot pool always answers; a grant arriving after this timeout would go to a dead ask and leak its slots,
     * so the timeout is far beyond any real wait.
     */
    static final Duration STAGING_ASK_TIMEOUT = Duration.ofMinutes(5);

    /** Disk reads in flight at once in one wave. */
    public static final int READS_PER_WAVE = 4;

    private final RecordContext records;
    private final ActorRef<MemoryTier.Command> memory;
    private final ActorRef<DiskTier.Command> disk;
    private final String namespace;
    private final long[] chain;
    private final List<DevicePlacement> targets;
    private final long recomputeNanos;
    private final ActorRef<RestoreResult> replyTo;

    private List<RecordSpec> resident;
    private DiskTier.Located onDisk;
    private int depth;
    private MemoryTier.PinnedRecord[] pinned;
    private SlotList[] staging;
    private boolean[] readOk;
    private final java.util.LinkedList<Integer> pending = new java.util.LinkedList<>();
    private final List<Integer> wave = new ArrayList<>();
    private final List<CompletableFuture<Void>> copies = new ArrayList<>();
    private int waveAsked;
    private int waveAnswers;
    private long stagingSinceNanos;
    private boolean unpinned;
    private int readsPending;
    private long waveStartNanos;
    private long waveBytes;
    private long diskBytes;

    private RestoreTask(ActorContext<Command> ctx, RecordContext records, ActorRef<MemoryTier.Command> memory,
                        ActorRef<DiskTier.Command> disk, String namespace, long[] chain,
                        List<DevicePlacement> targets, Duration recompute, ActorRef<RestoreResult> replyTo) {
        super(ctx);
        this.records = records;
        this.memory = memory;
        this.disk = disk;
        this.namespace = namespace;
        this.chain = chain;
        this.targets = targets;
        this.recomputeNanos = recompute.toNanos();
        this.replyTo = replyTo;
        memory.tell(new MemoryTier.Locate(namespace, chain,
                ctx.messageAdapter(MemoryTier.Resident.class, MemoryLocated::new)));
        if (disk != null) {
            disk.tell(new DiskTier.Locate(namespace, chain,
                    ctx.messageAdapter(DiskTier.Located.class, DiskLocated::new)));
        }
    }

    /**
     * Restores the match of {@code chain} to {@code targets} (one device placement per chain record); {@code disk}
     * is null when the node has no disk tier.
     */
    public static Behavior<Command> create(RecordContext records, ActorRef<MemoryTier.Command> memory,
                                           ActorRef<DiskTier.Command> disk, String namespace, long[] chain,
                                           List<DevicePlacement> targets, Duration recompute,
                                           ActorRef<RestoreResult> replyTo) {
        return Behaviors.setup(ctx -> new RestoreTask(ctx, records, memory, disk, namespace, chain, targets,
                recompute, replyTo));
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Command.class, this::onCommand)
                .onSignal(org.apache.pekko.actor.typed.PostStop.class, s -> {
                    releaseAll(); // after finish() this finds nothing; after a crash it frees pins and staging
                    return this;
                })
                .build();
    }

    private Behavior<Command> onCommand(Command command) {
        return switch (command) {
            case MemoryLocated m -> {
                resident = m.resident().specs();
                yield located();
            }
            case DiskLocated d -> {
                onDisk = d.located();
                yield located();
            }
            case PinnedReply p -> onPinned(p.pinned());
            case Staged s -> onStaged(s);
            case ReadAnswered r -> onRead(r.reply());
            case CopiesFinished f -> onCopied(f.failure());
            case WaveCopied w -> onWaveCopied(w.failure());
            case RetryWave r -> nextWave();
            case MemoryCopied m -> onMemoryCopied();
        };
    }

    private RecordSpec spec(int i) {
        RecordSpec m = resident.get(i);
        if (m != null) {
            return m;
        }
        DiskIndex.Entry e = onDisk == null ? null : onDisk.entries().get(i);
        return e == null ? null : e.spec();
    }

    private boolean onDisk(int i) {
        return onDisk != null && onDisk.entries().get(i) != null;
    }

    private Behavior<Command> located() {
        if (resident == null || (disk != null && onDisk == null)) {
            return this;
        }
        depth = ChainMatch.depth(chain.length, i -> spec(i) != null, i -> spec(i).hasRow());
        if (depth == 0) {
            records.counters().increment("restore.miss");
            replyTo.tell(RestoreResult.of(RestoreResult.Outcome.MISS, ""));
            return Behaviors.stopped();
        }
        if (targets.size() < depth) {
            records.counters().increment("restore.failed");
            replyTo.tell(RestoreResult.of(RestoreResult.Outcome.FAILED, "restore of " + depth + " records got only "
                    + targets.size() + " device placements"));
            return Behaviors.stopped();
        }
        List<RecordKey> keys = new ArrayList<>(depth);
        for (int i = 0; i < depth; i++) {
            keys.add(resident.get(i) == null ? null : resident.get(i).key());
        }
        memory.tell(new MemoryTier.PinKeys(keys, getContext().messageAdapter(MemoryTier.Pinned.class,
                PinnedReply::new)));
        return this;
    }

    private Behavior<Command> onPinned(MemoryTier.Pinned reply) {
        pinned = reply.records().toArray(MemoryTier.PinnedRecord[]::new);
        // A record may have left memory between the lookup and the pin; the disk copy (if any) stands in.
        depth = ChainMatch.depth(depth, i -> pinned[i] != null || onDisk(i), i -> spec(i).hasRow());
        for (int i = 0; i < depth; i++) {
            if (pinned[i] == null) {
                pending.add(i);
                diskBytes += records.layout().recordBytes(spec(i).hasRow());
            }
        }
        if (depth == 0) {
            return finish(RestoreResult.of(RestoreResult.Outcome.MISS, ""), "restore.miss");
        }
        if (!pending.isEmpty()) {
            double bytesPerSecond = onDisk.readBytesPerSecond();
            long estimate = (long) (diskBytes / bytesPerSecond * 1e9);
            if (RestoreCost.refuse(estimate, recomputeNanos)) {
                return finish(RestoreResult.of(RestoreResult.Outcome.REFUSED, String.format(java.util.Locale.ROOT,
                        "reading %d bytes from disk is estimated at %.1f ms (%.2f GB/s) > recompute %.1f ms",
                        diskBytes, estimate / 1e6, bytesPerSecond / 1e9, recomputeNanos / 1e6)), "restore.refused");
            }
        }
        staging = new SlotList[depth];
        readOk = new boolean[depth];
        try {
            for (int i = 0; i < depth; i++) {
                if (pinned[i] != null) {
                    copies.add(copy(i, pinned[i].slots()));
                    fromMemory++;
                }
            }
        } catch (RuntimeException e) {
            return failAfterCopies(e);
        }
        // The memory part is unpinned as soon as it is on the device, so that on a small pool its slots can
        // be dropped to make room for staging the disk part.
        if (!pending.isEmpty()) {
            List<CompletableFuture<Void>> memoryCopies = List.copyOf(copies);
            getContext().pipeToSelf(done(memoryCopies), (v, failure) -> new MemoryCopied());
        }
        return nextWave();
    }

    private Behavior<Command> onMemoryCopied() {
        unpinMemory();
        return this;
    }

    private void unpinMemory() {
        if (pinned == null || unpinned) {
            return;
        }
        unpinned = true;
        List<RecordKey> keys = new ArrayList<>();
        for (MemoryTier.PinnedRecord p : pinned) {
            if (p != null) {
                keys.add(p.spec().key());
            }
        }
        memory.tell(new MemoryTier.Unpin(keys));
    }

    /**
     * Stages, reads and copies the next wave of disk records: up to {@link #READS_PER_WAVE} at once, as many as
     * staging slots allow (at least one), so a chain larger than the pool still streams through it.
     */
    private Behavior<Command> nextWave() {
        pending.removeIf(i -> i >= depth);
        if (pending.isEmpty()) {
            getContext().pipeToSelf(done(copies),
                    (v, failure) -> new CopiesFinished(failure));
            return this;
        }
        wave.clear();
        waveAsked = Math.min(READS_PER_WAVE, pending.size());
        waveAnswers = 0;
        int n = 0;
        for (int i : pending) {
            if (n++ == waveAsked) {
                break;
            }
            RecordSpec s = spec(i);
            // One ask per record: a message adapter is one per reply class, so it could not tell the replies
            // apart by position.
            getContext().ask(SlotPool.AllocateReply.class, records.slotPool(), STAGING_ASK_TIMEOUT,
                    replyTo -> new SlotPool.Allocate(s.key(), s.slots(records.layout()), Purpose.STAGING, replyTo),
                    (reply, failure) -> new Staged(i, reply));
        }
        return this;
    }

    private Behavior<Command> onStaged(Staged s) {
        if (s.reply() instanceof SlotPool.Allocated a) {
            staging[s.position()] = a.slots();
            wave.add(s.position());
        }
        if (++waveAnswers < waveAsked) {
            return this;
        }
        if (wave.isEmpty()) {
            if (stagingSinceNanos == 0) {
                stagingSinceNanos = System.nanoTime();
            }
            if (System.nanoTime() - stagingSinceNanos > STAGING_PATIENCE.toNanos()) {
                // No staging slots for a long while: the match ends before the first record not read.
                truncate(pending.getFirst());
                return nextWave();
            }
            getContext().scheduleOnce(STAGING_RETRY_DELAY, getContext().getSelf(), new RetryWave());
            return this;
        }
        stagingSinceNanos = 0;
        pending.removeAll(wave);
        waveStartNanos = System.nanoTime();
        waveBytes = 0;
        readsPending = wave.size();
        ActorRef<DiskTier.ReadReply> adapter = getContext().messageAdapter(DiskTier.ReadReply.class,
                ReadAnswered::new);
        for (int i : wave) {
            disk.tell(new DiskTier.Read(spec(i).key(), staging[i], adapter));
        }
        return this;
    }

    private Behavior<Command> onRead(DiskTier.ReadReply reply) {
        switch (reply) {
            case DiskTier.ReadDone d -> {
                waveBytes += d.bytes();
                readOk[indexOf(d.key())] = true;
            }
            case DiskTier.ReadFailed f -> {
                int failedAt = indexOf(f.key());
                if (failedAt >= 0) {
                    truncate(failedAt);
                }
            }
        }
        if (--readsPending > 0) {
            return this;
        }
        if (waveBytes > 0) {
            disk.tell(new DiskTier.Sample(waveBytes, System.nanoTime() - waveStartNanos));
        }
        List<CompletableFuture<Void>> waveCopies = new ArrayList<>();
        try {
            for (int i : wave) {
                if (i < depth && readOk[i]) {
                    waveCopies.add(copy(i, staging[i]));
                    fromDisk++;
                }
            }
        } catch (RuntimeException e) {
            copies.addAll(waveCopies);
            return failAfterCopies(e);
        }
        getContext().pipeToSelf(done(waveCopies),
                (v, failure) -> new WaveCopied(failure));
        return this;
    }

    private Behavior<Command> onWaveCopied(Throwable failure) {
        for (int i : wave) {
            if (staging[i] == null) {
                continue;
            }
            if (failure == null && i < depth && readOk[i]) {
                // A prefix restored once is likely to be restored again: its verified copy stays in memory as a
                // clean record (dropped first when room is needed) instead of being read from disk next time.
                memory.tell(new MemoryTier.AdoptRestored(spec(i), staging[i]));
            } else {
                records.slotPool().tell(new SlotPool.Release(staging[i], false));
            }
            staging[i] = null;
        }
        if (failure != null) {
            return failAfterCopies(failure);
        }
        if (depth == 0) {
            return finish(RestoreResult.of(RestoreResult.Outcome.FAILED, "disk read failed"), "restore.failed");
        }
        return nextWave();
    }

    private int indexOf(RecordKey key) {
        for (int i = 0; i < staging.length; i++) {
            if (spec(i) != null && spec(i).key().equals(key)) {
                return i;
            }
        }
        return -1;
    }

    /** Shortens the match to the deepest record with a row before {@code end} (exclusive). */
    private void truncate(int end) {
        depth = ChainMatch.depth(Math.min(end, depth), i -> true, i -> spec(i).hasRow());
    }

    private CompletableFuture<Void> copy(int i, SlotList slots) {
        RecordSpec s = spec(i);
        var plan = CopyPlans.forRecord(records.layout(), records.host(), slots, targets.get(i), s.hasRow());
        copiedBytes += plan.totalBytes();
        records.traces().append(s.key(), "RestoreTask", "Copy H2D started (from "
                + (pinned[i] != null ? "memory" : "disk") + ")");
        return records.copier().copyToDevice(plan);
    }

    /**
     * Completes when every copy has (with a non-null value: a late completion delivered to a stopped task becomes a
     * dead letter, and Pekko's dead-letter log cannot describe a null one).
     */
    private static CompletableFuture<Boolean> done(List<CompletableFuture<Void>> copies) {
        return CompletableFuture.allOf(copies.toArray(CompletableFuture[]::new)).thenApply(v -> Boolean.TRUE);
    }

    /** Waits for every copy already started (they read slots), then fails the restore. */
    private Behavior<Command> failAfterCopies(Throwable cause) {
        getContext().pipeToSelf(done(copies),
                (v, failure) -> new CopiesFinished(cause));
        return this;
    }

    private int fromMemory;
    private int fromDisk;
    private long copiedBytes;

    private Behavior<Command> onCopied(Throwable failure) {
        if (failure != null) {
            return finish(RestoreResult.of(RestoreResult.Outcome.FAILED, String.valueOf(failure.getMessage())),
                    "restore.failed");
        }
        if (depth == 0) {
            return finish(RestoreResult.of(RestoreResult.Outcome.FAILED, "disk read failed"), "restore.failed");
        }
        for (int i = 0; i < depth; i++) {
            records.traces().append(spec(i).key(), "RestoreTask", "Copy H2D done");
        }
        int memoryInMatch = 0;
        for (int i = 0; i < depth; i++) {
            if (pinned[i] != null) {
                memoryInMatch++;
            }
        }
        records.counters().add("restore.bytes", copiedBytes);
        records.counters().add("restore.records.memory", memoryInMatch);
        records.counters().add("restore.records.disk", depth - memoryInMatch);
        long tokens = (long) depth * records.layout().tokensPerRecord();
        return finish(new RestoreResult(RestoreResult.Outcome.RESTORED, depth, tokens, memoryInMatch,
                depth - memoryInMatch, 0, copiedBytes, ""), depth > memoryInMatch ? "restore.disk" : "restore.memory");
    }

    /** Unpins, releases staging slots, counts and answers. */
    private Behavior<Command> finish(RestoreResult result, String counter) {
        releaseAll();
        records.counters().increment(counter);
        replyTo.tell(result);
        return Behaviors.stopped();
    }

    /** Unpins the memory part and releases every staging slot still held; idempotent. */
    private void releaseAll() {
        unpinMemory();
        if (staging != null) {
            for (int i = 0; i < staging.length; i++) {
                if (staging[i] != null) {
                    records.slotPool().tell(new SlotPool.Release(staging[i], false));
                    staging[i] = null;
                }
            }
        }
    }
}
