package dev.selene.actors.disk;

import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.codec.ChainCompleteness;
import dev.selene.engine.cost.BandwidthEstimator;
import dev.selene.engine.disk.DiskIndex;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.disk.DirectoryLock;
import dev.selene.transport.disk.NativeIo;
import dev.selene.transport.disk.NativeIoException;
import dev.selene.transport.disk.RecordFileNames;
import dev.selene.transport.disk.RecordIo;
import dev.selene.transport.disk.RecoveryScan;
import dev.selene.transport.disk.ShareMemory;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The disk tier: the directory lock, recovery at start (B13), the index of committed record files, writes of
 * spilled records and reads for restores (B9-B12, B15). File I/O runs on a dedicated executor, never on the
 * actor's thread; the actor itself runs on the blocking dispatcher because recovery at start blocks it.
 */
public final class DiskTier extends AbstractBehavior<DiskTier.Command> {

    /** The protocol. */
    public sealed interface Command {
    }

    /** Writes a parked record's slots (pinned by the caller until the reply) to its record file. */
    public record Write(RecordSpec spec, SlotList slots, ActorRef<WriteReply> replyTo) implements Command {
    }

    /** Reads a committed record into staging slots. */
    public record Read(RecordKey key, SlotList slots, ActorRef<ReadReply> replyTo) implements Command {
    }

    /** Which records of a chain are on disk, and the current read bandwidth estimate. */
    public record Locate(String namespace, long[] chain, ActorRef<Located> replyTo) implements Command {
    }

    /** One wave of restore reads took {@code nanos} for {@code bytes}: a bandwidth sample (B15). */
    public record Sample(long bytes, long nanos) implements Command {
    }

    /** Deletes records and their descendants (expiry, an operator). */
    public record Delete(List<RecordKey> keys) implements Command {
    }

    /** Asks for the tier's figures. */
    public record GetStats(ActorRef<Stats> replyTo) implements Command {
    }

    /** Sets who hears about records that leave the disk (the spill scheduler and the memory tier). */
    public record AttachListener(ActorRef<Dropped> listener) implements Command {
    }

    /** Runs a max-age sweep (B18) of the disk now; replies with what it removed ({@code replyTo} may be null). */
    public record ExpireNow(ActorRef<dev.selene.actors.api.ExpiryReport> replyTo) implements Command {
    }

    /** Another tier expired these records (unused for longer than max age): their files go too. */
    public record ExpiredElsewhere(dev.selene.actors.api.ExpiryReport report) implements Command {
    }

    private enum SweepTick implements Command {
        INSTANCE
    }

    private record WriteFinished(Write write, long bytes, long nanos, Throwable failure) implements Command {
    }

    private record ReadFinished(Read read, long bytes, Throwable failure) implements Command {
    }

    /** Replies to {@link Write}. */
    public sealed interface WriteReply {
    }

    /** The record file committed. */
    public record Written(RecordKey key, long bytes, long nanos) implements WriteReply {
    }

    /**
     * The write failed; nothing of it is visible. {@code diskFull} for ENOSPC; {@code parentGone} when the parent's
     * file left the disk while the record was being written (it was deleted again: B12).
     */
    public record WriteFailed(RecordKey key, boolean diskFull, boolean parentGone, String reason)
            implements WriteReply {
        public WriteFailed(RecordKey key, boolean diskFull, String reason) {
            this(key, diskFull, false, reason);
        }
    }

    /** Replies to {@link Read}. */
    public sealed interface ReadReply {
    }

    /** The record's bytes are in the staging slots, checksums verified. */
    public record ReadDone(RecordKey key, long bytes) implements ReadReply {
    }

    /** The read failed (missing, corrupt: the file is quarantined); nothing in the slots may be used. */
    public record ReadFailed(RecordKey key, String reason) implements ReadReply {
    }

    /** Reply to {@link Locate}: per chain position the record on disk, or null. */
    public record Located(List<DiskIndex.Entry> entries, double readBytesPerSecond) {
    }

    /** Records that left the disk (evicted for room, expired, deleted, unreadable). */
    public record Dropped(List<RecordKey> keys) {
    }

    /** The tier's figures. */
    public record Stats(int records, long bytes, long capacityBytes, int writesInFlight, int maxWritesInFlight,
                        double readBytesPerSecond, long readSamples) {
    }

    /** What the tier found at start. */
    public record Recovery(List<RecordSpec> records, int temporariesDeleted, int quarantined, int incompleteDeleted) {
    }

    /** Read bandwidth assumed before any sample (B15): a conservative NVMe figure. */
    public static final double PRIOR_READ_BYTES_PER_SECOND = 1.0e9;
    /** Half-life with which the read estimate decays back toward the prior between samples. */
    public static final long ESTIMATE_HALF_LIFE_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final Path dir;
    private final long capacityBytes;
    private final Layout layout;
    private final HostMemory host;
    private final RecordIo io;
    private final Executor ioExecutor;
    private final DirectoryLock lock;
    private final CacheCounters counters;
    private final TraceBook traces;
    private final DiskIndex index = new DiskIndex();
    private final BandwidthEstimator readEstimate;
    private long reservedBytes;
    private int writesInFlight;
    private long writeBusySince;
    private int readsInFlight;
    private long readBusySince;
    private int maxWritesInFlight;
    private ActorRef<Dropped> listener;
    private final java.util.Set<CompletableFuture<?>> ioInFlight = new java.util.HashSet<>();
    private java.time.Duration maxAge;

    /**
     * The tier over {@code dir}. It takes the directory lock and recovers the index before it answers anything;
     * a failure there stops it, with {@code onStart} told why. {@code onStart} also receives the recovery.
     */
    public static Behavior<Command> create(Path dir, long capacityBytes, Layout layout, HostMemory host, RecordIo io,
                                           Executor ioExecutor, CacheCounters counters, TraceBook traces,
                                           java.util.function.Consumer<Object> onStart) {
        return create(dir, capacityBytes, layout, host, io, ioExecutor, counters, traces, null, onStart);
    }

    /** The tier with max age {@code maxAge} (null: off, and then no sweep timer at all). */
    public static Behavior<Command> create(Path dir, long capacityBytes, Layout layout, HostMemory host, RecordIo io,
                                           Executor ioExecutor, CacheCounters counters, TraceBook traces,
                                           java.time.Duration maxAge, java.util.function.Consumer<Object> onStart) {
        if (maxAge == null) {
            return setup(dir, capacityBytes, layout, host, io, ioExecutor, counters, traces, null, onStart);
        }
        return Behaviors.withTimers(timers -> {
            timers.startTimerWithFixedDelay(SweepTick.INSTANCE, java.time.Duration.ofNanos(
                    dev.selene.engine.expiry.ExpirySweep.SWEEP_INTERVAL_NANOS));
            return setup(dir, capacityBytes, layout, host, io, ioExecutor, counters, traces, maxAge, onStart);
        });
    }

    private static Behavior<Command> setup(Path dir, long capacityBytes, Layout layout, HostMemory host, RecordIo io,
                                           Executor ioExecutor, CacheCounters counters, TraceBook traces,
                                           java.time.Duration maxAge, java.util.function.Consumer<Object> onStart) {
        return Behaviors.setup(ctx -> {
            DirectoryLock lock;
            Recovery recovery;
            DiskTier tier;
            try {
                Files.createDirectories(dir);
            } catch (IOException e) {
                onStart.accept(new IllegalArgumentException("selene.disk.dir = '" + dir + "' is invalid: cannot "
                        + "create it (" + e.getClass().getSimpleName() + (e instanceof java.nio.file.FileSystemException f
                        && f.getReason() != null ? ": " + f.getReason() : "") + "); allowed: a writable directory"));
                return Behaviors.stopped();
            }
            try {
                lock = DirectoryLock.acquire(dir);
            } catch (IOException e) {
                onStart.accept(new IllegalStateException(e.getMessage(), e));
                return Behaviors.stopped();
            }
            try {
                tier = new DiskTier(ctx, dir, capacityBytes, layout, host, io, ioExecutor, lock, counters, traces);
                tier.maxAge = maxAge;
                recovery = tier.recover();
            } catch (IOException | RuntimeException e) {
                closeQuietly(lock);
                onStart.accept(new IllegalStateException("disk tier " + dir + " could not recover: " + e.getMessage(),
                        e));
                return Behaviors.stopped();
            }
            onStart.accept(recovery);
            return tier;
        });
    }

    private DiskTier(ActorContext<Command> ctx, Path dir, long capacityBytes, Layout layout, HostMemory host,
                     RecordIo io, Executor ioExecutor, DirectoryLock lock, CacheCounters counters, TraceBook traces) {
        super(ctx);
        this.dir = dir;
        this.capacityBytes = capacityBytes;
        this.layout = layout;
        this.host = host;
        this.io = io;
        this.ioExecutor = ioExecutor;
        this.lock = lock;
        this.counters = counters;
        this.traces = traces;
        this.readEstimate = new BandwidthEstimator("disk", PRIOR_READ_BYTES_PER_SECOND, ESTIMATE_HALF_LIFE_NANOS);
    }

    private Recovery recover() throws IOException {
        long start = System.nanoTime();
        RecoveryScan.Result scan = RecoveryScan.run(lock, io, layout);
        List<RecordSpec> specs = scan.records().stream().map(RecoveryScan.Recovered::spec).toList();
        Set<RecordKey> incomplete = ChainCompleteness.incomplete(specs);
        List<RecordSpec> kept = new ArrayList<>();
        List<RecoveryScan.Recovered> byLastUse = new ArrayList<>(scan.records());
        byLastUse.sort(java.util.Comparator.comparing(RecoveryScan.Recovered::lastUse));
        for (RecoveryScan.Recovered r : byLastUse) {
            if (incomplete.contains(r.spec().key())) {
                io.delete(r.file());
                continue;
            }
            index.put(r.spec(), r.fileBytes(), r.lastUse().toEpochMilli());
            kept.add(r.spec());
        }
        counters.add("disk.quarantined", scan.rejected());
        counters.add("disk.recovered", kept.size());
        getContext().getLog().info("disk tier {}: recovered {} records ({} bytes) in {} ms; {} temporaries deleted, "
                        + "{} quarantined, {} with incomplete chains deleted", dir, kept.size(), index.bytes(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), scan.temporariesDeleted(), scan.rejected(),
                incomplete.size());
        evictForRoom(0);
        return new Recovery(kept, scan.temporariesDeleted(), scan.rejected(), incomplete.size());
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Command.class, this::onCommand)
                .onSignal(PostStop.class, s -> {
                    awaitIoInFlight();
                    closeQuietly(lock);
                    return this;
                })
                .build();
    }

    private Behavior<Command> onCommand(Command command) {
        switch (command) {
            case Write w -> onWrite(w);
            case WriteFinished f -> onWriteFinished(f);
            case Read r -> onRead(r);
            case ReadFinished f -> onReadFinished(f);
            case Locate l -> onLocate(l);
            case Sample s -> {
                if (s.bytes() <= 0 || s.nanos() <= 0) {
                    return this; // a wave that moved nothing tells nothing about bandwidth
                }
                readEstimate.sample(s.bytes(), s.nanos(), System.nanoTime());
                counters.add("disk.read.bytes", s.bytes());
                counters.add("disk.read.nanos", s.nanos());
            }
            case Delete d -> drop(d.keys(), "deleted");
            case GetStats g -> g.replyTo().tell(new Stats(index.size(), index.bytes(), capacityBytes, writesInFlight,
                    maxWritesInFlight, readEstimate.bytesPerSecond(System.nanoTime()), readEstimate.samples()));
            case AttachListener a -> listener = a.listener();
            case ExpireNow x -> {
                var report = sweep();
                if (x.replyTo() != null) {
                    x.replyTo().tell(report);
                }
            }
            case SweepTick t -> sweep();
            case ExpiredElsewhere e -> {
                List<RecordKey> present = e.report().removed().stream().filter(index::contains).toList();
                if (!present.isEmpty()) {
                    counters.add("expired.disk", present.size());
                    drop(present, "expired in " + e.report().tier().label());
                }
            }
        }
        return this;
    }

    private void onWrite(Write w) {
        long length = dev.selene.engine.codec.RecordFileFormat.fileLength(layout, w.spec().hasRow());
        if (length > capacityBytes) {
            w.replyTo().tell(new WriteFailed(w.spec().key(), true, "record of " + length
                    + " bytes exceeds the disk tier's size of " + capacityBytes));
            return;
        }
        // The chain being written is the most recently used on disk: room is never made by evicting its own root.
        long now = System.currentTimeMillis();
        for (RecordKey up = w.spec().parent(); up != null; ) {
            DiskIndex.Entry a = index.peek(up);
            if (a == null) {
                break;
            }
            index.touch(up, now);
            up = a.spec().parent();
        }
        evictForRoom(length);
        reservedBytes += length;
        if (writesInFlight++ == 0) {
            writeBusySince = System.nanoTime();
        }
        maxWritesInFlight = Math.max(maxWritesInFlight, writesInFlight);
        counters.max("disk.write.max_in_flight", writesInFlight);
        traces.append(w.spec().key(), "DiskTier", "Write started (" + writesInFlight + " in flight)");
        ShareMemory source = shares(w.slots());
        CompletableFuture<long[]> done = CompletableFuture.supplyAsync(() -> {
            long start = System.nanoTime();
            try {
                RecordIo.WriteResult r = io.write(w.spec(), layout, source, dir);
                return new long[] {r.bytes(), System.nanoTime() - start};
            } catch (IOException e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        }, ioExecutor);
        track(done);
        getContext().pipeToSelf(done, (r, e) -> r != null
                ? new WriteFinished(w, r[0], r[1], null) : new WriteFinished(w, length, 0, unwrap(e)));
    }

    private void onWriteFinished(WriteFinished f) {
        RecordSpec spec = f.write().spec();
        long length = dev.selene.engine.codec.RecordFileFormat.fileLength(layout, spec.hasRow());
        reservedBytes -= length;
        if (--writesInFlight == 0) {
            counters.add("disk.write.busy_nanos", System.nanoTime() - writeBusySince);
        }
        if (f.failure() != null) {
            boolean full = f.failure() instanceof NativeIoException n && n.errno() == NativeIo.ENOSPC;
            counters.increment("disk.write.failures");
            traces.append(spec.key(), "DiskTier", "WriteFailed: " + f.failure().getMessage());
            getContext().getLog().warn("write of {} failed: {}", spec.key(), f.failure().getMessage());
            f.write().replyTo().tell(new WriteFailed(spec.key(), full, String.valueOf(f.failure().getMessage())));
            return;
        }
        if (spec.parent() != null && !index.contains(spec.parent())) {
            // The parent's file left the disk while this one was written: a child must never be visible on disk
            // without its parent (B12). Delete it; the record stays parked and is written again behind its parent.
            deleteNow(spec.key());
            traces.append(spec.key(), "DiskTier", "Written, then deleted: its parent's file is gone");
            f.write().replyTo().tell(new WriteFailed(spec.key(), false, true, "parent's file left the disk"));
            return;
        }
        index.put(spec, f.bytes(), System.currentTimeMillis());
        counters.increment("disk.writes");
        counters.add("disk.write.bytes", f.bytes());
        counters.add("disk.write.nanos", f.nanos());
        traces.append(spec.key(), "DiskTier", "Written: committed " + f.bytes() + " bytes");
        f.write().replyTo().tell(new Written(spec.key(), f.bytes(), f.nanos()));
    }

    private void onRead(Read r) {
        DiskIndex.Entry e = index.peek(r.key());
        if (e == null) {
            r.replyTo().tell(new ReadFailed(r.key(), "not on disk"));
            return;
        }
        index.touch(r.key(), System.currentTimeMillis());
        Path file = RecordFileNames.recordFile(dir, r.key());
        ShareMemory target = shares(r.slots());
        if (readsInFlight++ == 0) {
            readBusySince = System.nanoTime();
        }
        CompletableFuture<Long> done = CompletableFuture.supplyAsync(() -> {
            try {
                io.read(file, layout, target);
                return e.fileBytes();
            } catch (IOException ex) {
                throw new java.util.concurrent.CompletionException(ex);
            }
        }, ioExecutor);
        track(done);
        getContext().pipeToSelf(done, (bytes, ex) -> new ReadFinished(r, bytes == null ? 0 : bytes, unwrap(ex)));
    }

    private void onReadFinished(ReadFinished f) {
        RecordKey key = f.read().key();
        if (--readsInFlight == 0) {
            counters.add("disk.read.busy_nanos", System.nanoTime() - readBusySince);
        }
        if (f.failure() != null) {
            counters.increment("disk.read.failures");
            traces.append(key, "DiskTier", "ReadFailed: " + f.failure().getMessage());
            if (f.failure() instanceof dev.selene.engine.codec.RecordFormatException) {
                getContext().getLog().warn("read of {} failed validation, quarantining it: {}", key,
                        f.failure().getMessage());
                quarantine(key);
            } else if (f.failure() instanceof NativeIoException n && n.errno() == NativeIo.ENOENT) {
                drop(List.of(key), "file missing");
            } else {
                getContext().getLog().warn("read of {} failed: {}", key, f.failure().toString());
            }
            f.read().replyTo().tell(new ReadFailed(key, String.valueOf(f.failure().getMessage())));
            return;
        }
        traces.append(key, "DiskTier", "Read for restore: " + f.bytes() + " bytes");
        counters.add("disk.read.record_bytes", f.bytes());
        f.read().replyTo().tell(new ReadDone(key, f.bytes()));
    }

    private void onLocate(Locate l) {
        List<DiskIndex.Entry> out = new ArrayList<>(l.chain().length);
        for (long hash : l.chain()) {
            out.add(index.peek(new RecordKey(l.namespace(), hash)));
        }
        l.replyTo().tell(new Located(out, readEstimate.bytesPerSecond(System.nanoTime())));
    }

    /**
     * One max-age sweep of the disk (B18): oldest first, at most 64 records, stopping at the first fresh one,
     * each with its descendants. Last use is wall-clock time here, since it survives restarts as file mtimes
     * (so a recovered record may expire up to one max age early: never a wrong answer).
     */
    private dev.selene.actors.api.ExpiryReport sweep() {
        if (maxAge == null) {
            return new dev.selene.actors.api.ExpiryReport(dev.selene.actors.api.Tier.DISK, false, List.of());
        }
        List<dev.selene.engine.expiry.ExpirySweep.Candidate> candidates = new ArrayList<>(index.size());
        for (DiskIndex.Entry e : index.entries()) {
            candidates.add(new dev.selene.engine.expiry.ExpirySweep.Candidate(e.key(), e.spec().parent(),
                    TimeUnit.MILLISECONDS.toNanos(e.lastUseMillis()), false));
        }
        List<RecordKey> expired = dev.selene.engine.expiry.ExpirySweep.plan(candidates,
                TimeUnit.MILLISECONDS.toNanos(System.currentTimeMillis()), maxAge.toNanos(),
                dev.selene.engine.expiry.ExpirySweep.MAX_RECORDS_PER_SWEEP);
        if (!expired.isEmpty()) {
            counters.add("expired.disk", expired.size());
            drop(expired, "expired: unused for longer than max age " + maxAge);
        }
        return new dev.selene.actors.api.ExpiryReport(dev.selene.actors.api.Tier.DISK, true, expired);
    }

    /** Frees room for {@code incoming} more bytes by deleting the least recently used records (with descendants). */
    private void evictForRoom(long incoming) {
        while (index.bytes() + reservedBytes + incoming > capacityBytes) {
            DiskIndex.Entry coldest = index.coldest();
            if (coldest == null) {
                return;
            }
            counters.increment("evicted.disk");
            drop(List.of(coldest.key()), "evicted for room");
        }
    }

    private void drop(List<RecordKey> keys, String why) {
        List<RecordKey> dropped = new ArrayList<>();
        for (RecordKey key : keys) {
            for (DiskIndex.Entry e : index.removeWithDescendants(key)) {
                dropped.add(e.key());
                traces.append(e.key(), "DiskTier", "Dropped (" + why + ")");
                deleteNow(e.key());
            }
        }
        tellDropped(dropped);
    }

    /** Moves an unreadable file aside (never served again) and drops its descendants, which it orphans. */
    private void quarantine(RecordKey key) {
        Path file = RecordFileNames.recordFile(dir, key);
        Path q = dir.resolve(RecordFileNames.QUARANTINE_DIRECTORY);
        try {
            Files.createDirectories(q);
            Files.move(file, q.resolve(file.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            counters.increment("disk.quarantined");
        } catch (IOException e) {
            getContext().getLog().warn("could not quarantine {}: {}", file, e.getMessage());
        }
        List<RecordKey> dropped = new ArrayList<>();
        for (DiskIndex.Entry e : index.removeWithDescendants(key)) {
            dropped.add(e.key());
            if (!e.key().equals(key)) {
                traces.append(e.key(), "DiskTier", "Dropped (parent unreadable)");
                deleteNow(e.key());
            }
        }
        tellDropped(dropped);
    }

    /**
     * Deletes a record's file now, on the tier's own (blocking) thread: a delete deferred to the I/O executor
     * could remove a newer file of the same key written in between.
     */
    private void deleteNow(RecordKey key) {
        Path file = RecordFileNames.recordFile(dir, key);
        try {
            io.delete(file);
        } catch (IOException ex) {
            getContext().getLog().warn("could not delete {}: {}", file, ex.getMessage());
        }
    }

    private void tellDropped(List<RecordKey> dropped) {
        if (!dropped.isEmpty() && listener != null) {
            listener.tell(new Dropped(dropped));
        }
    }

    private void track(CompletableFuture<?> io) {
        synchronized (ioInFlight) {
            ioInFlight.add(io);
        }
        io.whenComplete((v, e) -> {
            synchronized (ioInFlight) {
                ioInFlight.remove(io);
            }
        });
    }

    /**
     * Waits (bounded) for file I/O still reading or writing host slots: the node unmaps the slots right after its
     * tiers stop, and a write must not read unmapped memory.
     */
    private void awaitIoInFlight() {
        CompletableFuture<?>[] pending;
        synchronized (ioInFlight) {
            pending = ioInFlight.toArray(CompletableFuture[]::new);
        }
        try {
            CompletableFuture.allOf(pending).get(IO_DRAIN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            // each failure was (or would have been) reported to its requester
        } catch (java.util.concurrent.TimeoutException e) {
            getContext().getLog().warn("{} disk transfers still running after {} s at stop", pending.length,
                    IO_DRAIN_TIMEOUT_SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** How long a stopping disk tier waits for transfers in flight. */
    static final long IO_DRAIN_TIMEOUT_SECONDS = 30;

    private ShareMemory shares(SlotList slots) {
        int page = layout.pageBytes();
        return (piece, rank) -> host.share(slots.slot(piece), rank, page);
    }

    private static Throwable unwrap(Throwable e) {
        while (e instanceof java.util.concurrent.CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    private static void closeQuietly(DirectoryLock lock) {
        try {
            lock.close();
        } catch (IOException ignored) {
            // the process is stopping the tier; the lock file is released with the process anyway
        }
    }
}
