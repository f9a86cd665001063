package dev.selene.actors.cache;

import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceOutcome;
import dev.selene.actors.trace.TraceSource;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.Tier;
import dev.selene.engine.index.ChainMatch;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.CopyPlans;
import dev.selene.transport.gpu.DevicePlacement;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

/**
 * One restore of a match the catalog chose, costed and pinned (its memory part in memory, its own disk files on
 * disk; lookup to byte-identical restores): copy the memory part to the device at once, read the disk part into
 * staging slots in waves of parallel reads (each wave timed as one transfer and reported to the catalog's bandwidth
 * estimator), copy it to the device, then hand the staged records to the catalog (they stay resident, clean), release
 * the pins and report the use.
 *
 * <p>Staging slots are asked for in line with everyone else and granted by message; a wave that gets none within
 * {@link #STAGING_PATIENCE} ends the match before its first record.
 */
final class RestoreTask extends AbstractBehavior<RestoreTask.Command> {

    /** The protocol (internal). */
    sealed interface Command {
    }

    /**
     * One record of the match: its spec, and either its pinned slots (from memory) or the store to read it from and
     * that store's tier; {@code adopt} when the catalog holds the record, so the verified copy stays resident.
     */
    record Part(RecordSpec spec, SlotList memorySlots, ActorRef<Store.Command> store, Tier tier, boolean adopt,
                boolean filePinned) {

        /** A resident record, pinned for the restore. */
        static Part memory(RecordSpec spec, SlotList slots) {
            return new Part(spec, slots, null, Tier.MEMORY, false, false);
        }

        /** A record read from {@code store}. */
        static Part stored(RecordSpec spec, ActorRef<Store.Command> store, Tier tier, boolean adopt) {
            return new Part(spec, null, store, tier, adopt, false);
        }

        /**
         * The node's own durable copy, read from {@code store} and adopted once restored; the catalog pinned its
         * file for the read, and the task releases that pin once its wave is copied, or when it ends.
         */
        static Part ownFile(RecordSpec spec, ActorRef<Store.Command> store, Tier tier) {
            return new Part(spec, null, store, tier, true, true);
        }
    }

    private record Staged(int position, Catalog.StageReply reply) implements Command {
    }

    private record ReadAnswered(int position, Store.ReadReply reply) implements Command {
    }

    private record CopiesFinished(Throwable failure) implements Command {
    }

    private record WaveCopied(Throwable failure) implements Command {
    }

    private enum MemoryCopied implements Command {
        INSTANCE
    }

    private enum StagingTimeout implements Command {
        INSTANCE
    }

    /** How long a wave waits for staging slots before the match is cut short before it. */
    static final Duration STAGING_PATIENCE = Duration.ofSeconds(5);

    /** Far beyond the patience: the pool answers every staging request, with a grant or Cancelled. */
    static final Duration STAGING_ASK_TIMEOUT = STAGING_PATIENCE.plusMinutes(5);

    /**
     * Why a restore ended with nothing: the first record to read (from disk or the pool) could be neither staged nor
     * read.
     */
    static final String NOTHING_RESTORED = "the match's first record on disk or in the pool could not be read (a "
            + "failed read, or no staging slots within the patience)";

    /** Why a restore whose first record left its tier before it was read is a miss. */
    static final String GONE_BEFORE_READ = "the match's first record left the pool (evicted for other records) "
            + "between the lookup and its read";

    /** Numbers staging requests, so that a task cancels only its own. */
    private static final AtomicLong STAGING_REQUESTS =
            new AtomicLong();

    /** Times a failed task asks a store how a read it left running ended, each after the write check's wait. */
    static final int SETTLE_ASKS = 30;

    private static final Logger LOG = LoggerFactory.getLogger(RestoreTask.class);

    /** Disk reads in flight at once in one wave. */
    static final int READS_PER_WAVE = 4;

    private final RecordContext records;
    private final TraceSource origin;
    private final ActorRef<Catalog.Command> catalog;
    private final TimerScheduler<Command> timers;
    private final List<Part> parts;
    private final List<DevicePlacement> targets;
    private final ActorRef<RestoreResult> replyTo;
    private final long correlation;
    private final SlotList[] staging;
    private final boolean[] readOk;
    /** Whether the first record of the match to read was found gone from the pool (evicted since the lookup). */
    private boolean firstGone;
    /** Whether a read into the staging slots at each position was asked for and has not been answered yet. */
    private final boolean[] reading;
    /** The device copy out of the staging slots at each position, once started. */
    private final List<CompletableFuture<Void>> stagingCopies;
    /** Whether the file pin of the part at each position (one of the node's own files) was released. */
    private final boolean[] fileUnpinned;
    private final long[] requests;
    private final long startNanos;
    private final ArrayList<Integer> pending = new ArrayList<>();
    private final List<Integer> wave = new ArrayList<>();
    private final List<CompletableFuture<Void>> copies = new ArrayList<>();
    private final List<RecordKey> readFromDisk = new ArrayList<>();
    private int depth;
    private int waveAsked;
    private int waveAnswers;
    private boolean unpinned;
    private boolean finished;
    private int readsPending;
    private long waveStartNanos;
    private final Map<Tier, Long> waveBytes = new EnumMap<>(Tier.class);
    private long copiedBytes;

    /**
     * Restores {@code parts} (the match, root first; its memory part pinned for this task) to {@code targets}; its
     * trace events carry the restore's {@code correlation}.
     */
    static Behavior<Command> create(RecordContext records, ActorRef<Catalog.Command> catalog, List<Part> parts,
                                    List<DevicePlacement> targets, ActorRef<RestoreResult> replyTo,
                                    long correlation) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            RestoreTask task;
            try {
                task = new RestoreTask(ctx, timers, records, catalog, parts, targets, replyTo, correlation);
            } catch (RuntimeException e) {
                // No task to stop later: give back what the catalog pinned for it, and answer, here.
                releasePins(catalog, parts);
                records.metrics().restoreFailed();
                replyTo.tell(RestoreResult.of(RestoreResult.Outcome.FAILED, "the restore could not start: "
                        + e.getMessage()));
                return Behaviors.stopped();
            }
            try {
                return task.start();
            } catch (RuntimeException e) {
                return task.failAfterCopies(e);
            }
        }));
    }

    /** Releases the memory and file pins the catalog took for {@code parts}, for a task that never started. */
    private static void releasePins(ActorRef<Catalog.Command> catalog, List<Part> parts) {
        List<RecordKey> memory = parts.stream().filter(p -> p.memorySlots() != null).map(p -> p.spec().key())
                .toList();
        List<RecordKey> files = parts.stream().filter(Part::filePinned).map(p -> p.spec().key()).toList();
        if (!memory.isEmpty()) {
            catalog.tell(new Catalog.Unpin(memory));
        }
        if (!files.isEmpty()) {
            catalog.tell(new Catalog.UnpinFiles(files));
        }
    }

    private RestoreTask(ActorContext<Command> ctx, TimerScheduler<Command> timers, RecordContext records,
                        ActorRef<Catalog.Command> catalog, List<Part> parts, List<DevicePlacement> targets,
                        ActorRef<RestoreResult> replyTo, long correlation) {
        super(ctx);
        this.correlation = correlation;
        this.origin = TraceSource.of("RestoreTask", ctx);
        this.timers = timers;
        this.records = records;
        this.catalog = catalog;
        this.parts = parts;
        this.targets = targets;
        this.replyTo = replyTo;
        this.depth = parts.size();
        this.staging = new SlotList[parts.size()];
        this.readOk = new boolean[parts.size()];
        this.reading = new boolean[parts.size()];
        this.stagingCopies = new ArrayList<>(Collections.nCopies(parts.size(), null));
        this.fileUnpinned = new boolean[parts.size()];
        this.requests = new long[parts.size()];
        this.startNanos = records.clock().getAsLong();
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Command.class, this::onCommand)
                .onSignal(PostStop.class, s -> {
                    if (!finished) {
                        // The task failed: free its pins and staging, and answer rather than leave the caller waiting.
                        releaseAll();
                        records.metrics().restoreFailed();
                        replyTo.tell(RestoreResult.of(RestoreResult.Outcome.FAILED, "the restore's actor failed"));
                    }
                    return this;
                })
                .build();
    }

    private Behavior<Command> onCommand(Command command) {
        records.faults().beforeHandling("RestoreTask", command);
        return switch (command) {
            case Staged s -> onStaged(s);
            case StagingTimeout t -> onStagingTimeout();
            case ReadAnswered r -> r.reply() == null ? settleRead(r.position()) : onRead(r.reply());
            case CopiesFinished f -> onCopied(f.failure());
            case WaveCopied w -> onWaveCopied(w.failure());
            case MemoryCopied m -> {
                unpinMemory();
                yield this;
            }
        };
    }

    private Behavior<Command> start() {
        try {
            for (int i = 0; i < depth; i++) {
                if (fromMemory(i)) {
                    copies.add(copy(i, parts.get(i).memorySlots()));
                } else {
                    pending.add(i);
                }
            }
        } catch (RuntimeException e) {
            return failAfterCopies(e);
        }
        if (!pending.isEmpty()) {
            // The memory part is unpinned as soon as it is on the device, so that on a small pool its slots can
            // be dropped to make room for staging the disk part.
            getContext().pipeToSelf(Piped.nonNull(done(List.copyOf(copies))), (v, failure) -> MemoryCopied.INSTANCE);
        }
        return nextWave();
    }

    private boolean fromMemory(int i) {
        return parts.get(i).memorySlots() != null;
    }

    private RecordSpec spec(int i) {
        return parts.get(i).spec();
    }

    /**
     * Stages, reads and copies the next wave of disk records: up to {@link #READS_PER_WAVE} at once, as many as
     * staging slots allow, so a chain larger than the pool still streams through it.
     */
    private Behavior<Command> nextWave() {
        pending.removeIf(i -> i >= depth);
        if (pending.isEmpty()) {
            getContext().pipeToSelf(Piped.nonNull(done(copies)), (v, failure) -> new CopiesFinished(failure));
            return this;
        }
        wave.clear();
        waveAsked = Math.min(READS_PER_WAVE, pending.size());
        waveAnswers = 0;
        for (int n = 0; n < waveAsked; n++) {
            int i = pending.get(n);
            RecordSpec s = spec(i);
            boolean first = n == 0; // the wave's first record waits for room; the others come only if it is there
            requests[i] = STAGING_REQUESTS.incrementAndGet();
            // One ask per record: a message adapter is one per reply class, so it could not tell the replies apart
            // by position. The catalog always answers (a grant, or not staged once cancelled after the patience
            // runs out).
            getContext().ask(Catalog.StageReply.class, catalog, STAGING_ASK_TIMEOUT,
                    r -> new Catalog.Stage(s.key(), s.slots(records.layout()), first, requests[i], r),
                    (reply, failure) -> new Staged(i, reply));
        }
        timers.startSingleTimer(StagingTimeout.INSTANCE, STAGING_PATIENCE);
        return this;
    }

    private Behavior<Command> onStagingTimeout() {
        for (int n = 0; n < waveAsked; n++) {
            int i = pending.get(n);
            if (staging[i] == null) {
                catalog.tell(new Catalog.CancelStaging(spec(i).key(), requests[i]));
            }
        }
        return this;
    }

    private Behavior<Command> onStaged(Staged s) {
        if (s.reply() instanceof Catalog.Staged a) {
            staging[s.position()] = a.slots();
            wave.add(s.position());
        }
        if (++waveAnswers < waveAsked) {
            return this;
        }
        timers.cancel(StagingTimeout.INSTANCE);
        int head = pending.getFirst();
        if (staging[head] == null) {
            // The wave's first record got no staging within the patience: the match ends before it.
            truncate(head);
        }
        // Records of the wave that found no room now stay pending for a later wave.
        pending.removeAll(wave);
        wave.sort(Integer::compare);
        if (wave.isEmpty()) {
            return nextWave();
        }
        waveStartNanos = records.clock().getAsLong();
        waveBytes.clear();
        readsPending = wave.size();
        for (int i : wave) {
            // An ask per read: when no answer comes in time (the store failed and lost the request, or the disk
            // stalls) the store is asked how that read ended, so its staging slots are never freed under a read.
            reading[i] = true;
            getContext().ask(Store.ReadReply.class, parts.get(i).store(), records.writeCheck(),
                    r -> new Store.Read(spec(i).key(), staging[i], r), (reply, failure) -> new ReadAnswered(i,
                            reply));
        }
        return this;
    }

    private Behavior<Command> settleRead(int i) {
        getContext().ask(Store.ReadReply.class, parts.get(i).store(), records.writeCheck(),
                r -> new Store.SettleRead(spec(i).key(), staging[i], r), (reply, failure) -> new ReadAnswered(i,
                        reply));
        return this;
    }

    private Behavior<Command> onRead(Store.ReadReply reply) {
        switch (reply) {
            case Store.ReadDone d -> {
                int i = indexOf(d.key());
                waveBytes.merge(parts.get(i).tier(), d.bytes(), Long::sum);
                readOk[i] = true;
                reading[i] = false;
            }
            case Store.ReadFailed f -> {
                int failedAt = indexOf(f.key());
                if (failedAt >= 0) {
                    reading[failedAt] = false;
                    if (failedAt == firstToRead()) {
                        // The pool says so only of a record no manager holds any more; a disk's lost file may also
                        // be a corrupt one it quarantined, which stays a failure.
                        firstGone = f.fileLost() && parts.get(failedAt).tier() == Tier.POOL;
                    }
                    truncate(failedAt);
                }
                if (f.fileLost() && failedAt >= 0 && parts.get(failedAt).adopt()) {
                    catalog.tell(new Catalog.FileLost(f.key()));
                }
            }
        }
        if (--readsPending > 0) {
            return this;
        }
        long waveNanos = records.clock().getAsLong() - waveStartNanos;
        waveBytes.forEach((tier, bytes) -> catalog.tell(new Catalog.ReadSample(tier, bytes, waveNanos)));
        List<CompletableFuture<Void>> waveCopies = new ArrayList<>();
        try {
            for (int i : wave) {
                if (i < depth && readOk[i]) {
                    CompletableFuture<Void> c = copy(i, staging[i]);
                    stagingCopies.set(i, c);
                    waveCopies.add(c);
                }
            }
        } catch (RuntimeException e) {
            copies.addAll(waveCopies);
            return failAfterCopies(e);
        }
        getContext().pipeToSelf(Piped.nonNull(done(waveCopies)), (v, failure) -> new WaveCopied(failure));
        return this;
    }

    private Behavior<Command> onWaveCopied(Throwable failure) {
        for (int i : wave) {
            if (staging[i] == null) {
                continue;
            }
            if (failure == null && i < depth && readOk[i] && parts.get(i).adopt()) {
                // A prefix restored once is likely to be restored again: its verified copy stays in memory as a
                // clean record (dropped first when room is needed) instead of being read again next time.
                catalog.tell(new Catalog.AdoptRestored(spec(i), staging[i]));
                readFromDisk.add(spec(i).key());
            } else {
                catalog.tell(new Catalog.ReleaseStaging(staging[i]));
            }
            staging[i] = null;
        }
        // The wave's files are read and its records adopted (or not): the catalog may remove those files from now on.
        unpinFiles(wave);
        if (failure != null) {
            return failAfterCopies(failure);
        }
        return nextWave();
    }

    /** Releases the file pins still held of the parts at {@code positions}, in one message. */
    private void unpinFiles(Iterable<Integer> positions) {
        List<RecordKey> files = filePinsLeft(positions);
        if (!files.isEmpty()) {
            catalog.tell(new Catalog.UnpinFiles(files));
        }
    }

    /** The keys of the parts at {@code positions} whose file pins go now. */
    private List<RecordKey> filePinsLeft(Iterable<Integer> positions) {
        List<RecordKey> files = new ArrayList<>();
        for (int i : positions) {
            if (parts.get(i).filePinned() && !fileUnpinned[i]) {
                fileUnpinned[i] = true;
                files.add(spec(i).key());
            }
        }
        return files;
    }

    private int indexOf(RecordKey key) {
        for (int i = 0; i < parts.size(); i++) {
            if (spec(i).key().equals(key)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Shortens the match to the deepest record before {@code end} (exclusive) that can end it: one with a row whose
     * target has room for that row (its row was copied).
     */
    private void truncate(int end) {
        Layout layout = records.layout();
        depth = ChainMatch.depth(Math.min(end, depth), i -> true,
                i -> spec(i).hasRow() && (layout.rowPieces() == 0 || targets.get(i).holdsRow(layout)));
    }

    /** Whether the record at {@code i} has no row where its target has room for one: it is copied pages-only. */
    private boolean rowLeftOut(int i) {
        return !spec(i).hasRow() && targets.get(i).holdsRow(records.layout());
    }

    private CompletableFuture<Void> copy(int i, SlotList slots) {
        RecordSpec s = spec(i);
        // A record above the match's end is needed for its pages only: its row may have been dropped (or added)
        // since the caller placed it, so a row is copied where both the record and its target have one. The record
        // that ends the match must bring its row: a target without room for it fails the restore, as any target
        // of the wrong size does.
        Layout layout = records.layout();
        DevicePlacement target = targets.get(i);
        boolean row = s.hasRow() && (target.holdsRow(layout) || i == depth - 1);
        var plan = CopyPlans.forRecord(layout, records.host(),
                s.hasRow() && !row ? slots.slice(0, layout.slotsPerRecord(false)) : slots,
                rowLeftOut(i) ? target.pagesOnly(layout) : target, row);
        copiedBytes += plan.totalBytes();
        records.traces().append(s.key(), origin, correlation, "Copy H2D started (from "
                + parts.get(i).tier().label() + ")", null);
        return records.transfers().track(records.copier().copyToDevice(plan));
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
        getContext().pipeToSelf(Piped.nonNull(done(copies)), (v, failure) -> new CopiesFinished(cause));
        return this;
    }

    private Behavior<Command> onCopied(Throwable failure) {
        if (failure != null) {
            return failed(String.valueOf(failure.getMessage()));
        }
        if (depth == 0) {
            return firstGone ? missed() : failed(NOTHING_RESTORED);
        }
        Map<Tier, Integer> byTier = new EnumMap<>(Tier.class);
        int deepestOwn = -1;
        for (int i = 0; i < depth; i++) {
            records.traces().append(spec(i).key(), origin, correlation, "Copy H2D done", TraceOutcome.RESTORED);
            byTier.merge(parts.get(i).tier(), 1, Integer::sum);
            if (fromMemory(i) || parts.get(i).adopt()) {
                deepestOwn = i;
            }
        }
        long tokens = (long) depth * records.layout().tokensPerRecord();
        releaseAll(deepestOwn < 0 ? null : new Catalog.Used(spec(deepestOwn).key(), List.copyOf(readFromDisk)));
        int memory = byTier.getOrDefault(Tier.MEMORY, 0);
        int disk = byTier.getOrDefault(Tier.DISK, 0);
        int pool = byTier.getOrDefault(Tier.POOL, 0);
        records.metrics().restored(memory, disk, pool, tokens, copiedBytes,
                records.clock().getAsLong() - startNanos);
        List<Integer> rowsLeftOut = new ArrayList<>();
        for (int i = 0; i < depth; i++) {
            if (rowLeftOut(i)) {
                rowsLeftOut.add(i);
            }
        }
        replyTo.tell(new RestoreResult(RestoreResult.Outcome.RESTORED, depth, tokens, memory, disk, pool,
                copiedBytes, "", rowsLeftOut));
        return Behaviors.stopped();
    }

    /** The first record of the match that is read from a durable tier (the ones before it are in memory). */
    private int firstToRead() {
        for (int i = 0; i < parts.size(); i++) {
            if (!fromMemory(i)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Unpins, releases staging slots and answers a miss: the match's first record left the pool between the lookup
     * and its read (evicted for other hosts' records), which a cache shared by several hosts meets in normal work:
     * nothing is broken, nothing was served.
     */
    private Behavior<Command> missed() {
        for (Part p : parts) {
            records.traces().append(p.spec().key(), origin, correlation, "Restore missed: " + GONE_BEFORE_READ,
                    null);
        }
        releaseAll();
        records.metrics().restoreMissed();
        replyTo.tell(RestoreResult.of(RestoreResult.Outcome.MISS, GONE_BEFORE_READ));
        return Behaviors.stopped();
    }

    /** Unpins, releases staging slots, counts and answers that nothing was restored. */
    private Behavior<Command> failed(String detail) {
        for (Part p : parts) {
            records.traces().append(p.spec().key(), origin, correlation, "Restore failed: " + detail,
                    TraceOutcome.RESTORE_FAILED);
        }
        releaseAll();
        records.metrics().restoreFailed();
        replyTo.tell(RestoreResult.of(RestoreResult.Outcome.FAILED, detail));
        return Behaviors.stopped();
    }

    private void unpinMemory() {
        List<RecordKey> keys = memoryPinsLeft();
        if (!keys.isEmpty()) {
            catalog.tell(new Catalog.Unpin(keys));
        }
    }

    /** The memory part's keys, whose pins go now; empty when they went already. */
    private List<RecordKey> memoryPinsLeft() {
        if (unpinned) {
            return List.of();
        }
        unpinned = true;
        List<RecordKey> keys = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            if (fromMemory(i)) {
                keys.add(spec(i).key());
            }
        }
        return keys;
    }

    /** Unpins the memory part and the files read, and releases every staging slot still held; idempotent. */
    private void releaseAll() {
        releaseAll(null);
    }

    /**
     * As {@link #releaseAll()}, and then the match's use when {@code used} is not null: the pins and the use in one
     * message, which the catalog takes in one turn, so that no max-age sweep comes between them and finds the chain
     * unpinned and still stale.
     */
    private void releaseAll(Catalog.Used used) {
        if (finished) {
            return;
        }
        finished = true;
        if (used == null) {
            unpinMemory();
            unpinFiles(IntStream.range(0, parts.size()).boxed().toList());
        } else {
            catalog.tell(new Catalog.RestoreEnded(memoryPinsLeft(),
                    filePinsLeft(IntStream.range(0, parts.size()).boxed().toList()), used));
        }
        for (int i = 0; i < staging.length; i++) {
            if (staging[i] != null) {
                releaseStagingWhenIdle(i, staging[i]);
                staging[i] = null;
            }
        }
    }

    /**
     * Releases the staging slots {@code slots} of position {@code i} once nothing uses them: at once on the paths
     * that end a restore (every read answered, every copy done), but a task that failed in the middle (a bug) may
     * leave a read writing into them or a copy reading them; those slots go back only when the store says how the
     * read ended and the copy is done, so that they are never handed to another record while still in use.
     */
    private void releaseStagingWhenIdle(int i, SlotList slots) {
        CompletableFuture<Void> copy = stagingCopies.get(i) == null ? CompletableFuture.completedFuture(null)
                : stagingCopies.get(i).exceptionally(e -> null);
        CompletableFuture<Void> read = CompletableFuture.completedFuture(null);
        if (reading[i]) {
            read = new CompletableFuture<>();
            askUntilSettled(parts.get(i).store(), spec(i).key(), slots, getContext().getSystem(), read, 1);
        }
        if (copy.isDone() && read.isDone()) {
            catalog.tell(new Catalog.ReleaseStaging(slots));
        } else {
            CompletableFuture.allOf(copy, read).whenComplete((v, e) -> catalog.tell(new Catalog.ReleaseStaging(slots)));
        }
    }

    /**
     * Completes {@code settled} once {@code store} says how the read of {@code key} ended, asking again while it does
     * not answer, at most {@link #SETTLE_ASKS} times and not once the actor system is stopping: a store that never
     * answers (stopped with the node) leaves the slots taken, never handed out under a read that may still run.
     */
    private void askUntilSettled(ActorRef<Store.Command> store, RecordKey key, SlotList slots,
                                 ActorSystem<?> system, CompletableFuture<Void> settled, int ask) {
        AskPattern.<Store.Command, Store.ReadReply>ask(store, r -> new Store.SettleRead(key, slots, r),
                records.writeCheck(), system.scheduler()).whenComplete((reply, failure) -> {
                    if (reply != null) {
                        settled.complete(null);
                    } else if (ask < SETTLE_ASKS && !system.whenTerminated().isCompleted()) {
                        askUntilSettled(store, key, slots, system, settled, ask + 1);
                    } else {
                        LOG.warn("{}: no answer from its store on how a read ended after {} asks; its {} staging "
                                + "slots stay taken", key, ask, slots.count());
                    }
                });
    }
}
