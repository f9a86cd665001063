package dev.selene.actors.cache;

import dev.selene.actors.store.Store.Command;
import dev.selene.actors.store.Store.Write;
import dev.selene.actors.store.Store.Read;
import dev.selene.actors.store.Store.Delete;
import dev.selene.actors.store.Store.Settle;
import dev.selene.actors.store.Store.SettleRead;
import dev.selene.actors.store.Store.WriteReply;
import dev.selene.actors.store.Store.Written;
import dev.selene.actors.store.Store.WriteFailed;
import dev.selene.actors.store.Store.NotWritten;
import dev.selene.actors.store.Store.ReadReply;
import dev.selene.actors.store.Store.ReadDone;
import dev.selene.actors.store.Store.ReadFailed;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.trace.TraceSource;
import dev.selene.engine.codec.ChainCompleteness;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordFormatException;
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
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The disk store: executes what the catalog decides on one directory. It holds the directory lock, scans the
 * directory at start (recovery) and reports what it found, writes record files (record files to write failures), reads them back for restores
 * (checksums verified) and deletes them. It keeps no index: which files exist, how old they are and which to
 * evict is the catalog's to know.
 *
 * <p>File I/O runs on the blocking executor, never on the actor's thread; the actor itself runs on the blocking
 * dispatcher because the scan at start blocks it. Transfers in flight are kept outside the behaviour, so that a
 * restarted store (its supervisor restarts it with back-off, and it scans again) still answers them.
 */
final class DiskStore extends AbstractBehavior<Store.Command> {

    private record WriteFinished(Write write, long bytes, long nanos, Throwable failure) implements Store.Command {
    }

    private record ReadFinished(Read read, ReadIo io, Throwable failure) implements Store.Command {
    }

    /** A read as the I/O thread saw it: the file's size and how long reading and verifying it took. */
    private record ReadIo(long bytes, long nanos) {
    }

    /**
     * What the store found at start (or after a restart): valid records of complete chains, and the space the
     * filesystem had free for more.
     */
    record Recovery(List<Found> records, int temporariesDeleted, int quarantined, int incompleteDeleted,
                    long usableBytes) {
    }

    /** One valid record file: its record, size and last use (file modification time). */
    record Found(RecordSpec spec, long fileBytes, Instant lastUse) {
    }

    /** Outcomes of finished writes remembered for late {@link Settle}s. */
    static final int RECENT_OUTCOMES = Store.RECENT_OUTCOMES;

    /** How long a disk transfer or delete may run before the store warns that the disk may be stalled. */
    static final Duration STALL_WARNING = Duration.ofSeconds(30);
    private static final Logger LOG = LoggerFactory.getLogger(DiskStore.class);

    /** How long a stopping store waits for transfers in flight. */
    static final long IO_DRAIN_TIMEOUT_SECONDS = HostCache.DISK_TRANSFERS_AT_STOP.toSeconds();

    /** Transfers in flight and the outcome of writes, kept across restarts of the behaviour. */
    /**
     * Where a disk tier's stall checks run: the system's scheduler, on the default dispatcher (the store's own thread
     * and its I/O threads are the ones a frozen disk holds).
     */
    record StallWatch(Path dir, org.apache.pekko.actor.typed.Scheduler scheduler,
                      scala.concurrent.ExecutionContextExecutor executor) {
    }

    static final class InFlight {
        /** Whether the first scan's figures were counted: a restarted behaviour scans again and counts nothing. */
        private boolean scanCounted;
        private final Map<RecordKey, CompletableFuture<WriteReply>> writes = new HashMap<>();
        /** Reads running, by the first staging slot they fill (each staging slot has one owner at a time). */
        private final Map<Integer, CompletableFuture<ReadReply>> reads = new HashMap<>();
        /** How recent writes ended, for {@link Settle}s that arrive after the write (bounded). */
        private final Map<RecordKey, WriteReply> ended = new LinkedHashMap<>(64, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<RecordKey, WriteReply> eldest) {
                return size() > RECENT_OUTCOMES;
            }
        };
        private final Map<CompletableFuture<?>, Long> all = new HashMap<>();
        /** When the delete running on the store's thread began (nanos), or 0 when none runs. */
        private long deleteSince;
        /** Where the stall check is scheduled while a store runs; null before it starts and once it stops. */
        private StallWatch watch;
        /** Whether a stall check is scheduled (at most one: none while no I/O runs). */
        private boolean checkArmed;
        /** Whether the stall now under way was warned of. */
        private boolean warned;

        synchronized void track(CompletableFuture<?> io) {
            all.put(io, System.nanoTime());
            started();
            io.whenComplete((v, e) -> {
                synchronized (this) {
                    all.remove(io);
                    ended();
                }
            });
        }

        synchronized void deleting(boolean running) {
            deleteSince = running ? System.nanoTime() : 0;
            if (running) {
                started();
            } else {
                ended();
            }
        }

        /** Watches for stalls from now on, on {@code w}'s scheduler (the store started). */
        synchronized void watchStalls(StallWatch w) {
            watch = w;
            started();
        }

        /** Stops watching (the store stops or restarts); a check already scheduled finds nothing to do. */
        synchronized void stopWatching() {
            watch = null;
        }

        /** An operation began: a check is due when it (or an older one) has run for {@link #STALL_WARNING}. */
        private void started() {
            if (watch != null && !checkArmed && running() > 0) {
                arm(STALL_WARNING.toNanos());
            }
        }

        private void arm(long inNanos) {
            checkArmed = true;
            watch.scheduler().scheduleOnce(Duration.ofNanos(inNanos), this::check, watch.executor());
        }

        /**
         * Warns once when the oldest operation still running has run for {@link #STALL_WARNING}; otherwise checks
         * again when it will have. Nothing is scheduled while no I/O runs.
         */
        private synchronized void check() {
            checkArmed = false;
            if (watch == null || running() == 0) {
                return;
            }
            long ran = oldestRunningNanos(System.nanoTime());
            if (ran < STALL_WARNING.toNanos()) {
                arm(STALL_WARNING.toNanos() - ran);
            } else if (!warned) {
                warned = true;
                LOG.warn("disk I/O in {} has not returned for {} s ({} operations running): the disk may be stalled, "
                        + "and spills and restores from disk wait for it", watch.dir(),
                        TimeUnit.NANOSECONDS.toSeconds(ran), running());
            }
        }

        /** An operation ended: the stall warned of is over once nothing left has run that long. */
        private void ended() {
            if (warned && (running() == 0 || oldestRunningNanos(System.nanoTime()) < STALL_WARNING.toNanos())) {
                warned = false;
                LOG.info("disk I/O in {} returns again", watch == null ? "the disk tier" : watch.dir());
            }
        }

        /** How long the oldest transfer or delete still running has run (nanos), 0 when none runs. */
        private long oldestRunningNanos(long now) {
            long oldest = deleteSince == 0 ? now : deleteSince;
            for (long since : all.values()) {
                oldest = Math.min(oldest, since);
            }
            return now - oldest;
        }

        private int running() {
            return all.size() + (deleteSince == 0 ? 0 : 1);
        }

        synchronized CompletableFuture<?>[] pending() {
            return all.keySet().toArray(CompletableFuture[]::new);
        }
    }

    private final Path dir;
    private final Layout layout;
    private final HostMemory host;
    private final RecordIo io;
    private final Executor ioExecutor;
    private final DirectoryLock lock;
    private final CacheMetrics metrics;
    private final TraceBook traces;
    private final TraceSource origin;
    private final InFlight inFlight;
    private final FaultInjection faults;
    private int writesInFlight;
    private long writeBusySince;
    private int readsInFlight;
    private long readBusySince;

    /**
     * The store over {@code dir}: it takes the directory lock and scans before it answers anything, and gives
     * {@code onStart} the {@link Recovery}, or the one-line reason it could not start (then it stops).
     */
    static Behavior<Command> create(Path dir, Layout layout, HostMemory host, RecordIo io,
                                    Executor ioExecutor, CacheMetrics metrics, TraceBook traces,
                                    FaultInjection faults, Consumer<Object> onStart) {
        InFlight inFlight = new InFlight();
        return Behaviors.setup(ctx -> {
            IllegalArgumentException notCreated = createDirectory(dir);
            if (notCreated != null) {
                onStart.accept(notCreated);
                return Behaviors.stopped();
            }
            DirectoryLock lock;
            try {
                lock = DirectoryLock.acquire(dir);
            } catch (IOException e) {
                onStart.accept(new IllegalStateException(e.getMessage(), e));
                return Behaviors.stopped();
            }
            DiskStore store = new DiskStore(ctx, dir, layout, host, io, ioExecutor, lock, metrics, traces, inFlight,
                    faults);
            Recovery recovery;
            try {
                recovery = store.scan();
            } catch (RecoveryScan.OtherLayout e) {
                closeQuietly(lock);
                onStart.accept(new IllegalArgumentException("selene.layout = '" + layout.name() + "' is invalid: disk "
                        + "tier " + dir + " holds " + e.getMessage() + "; nothing in it was touched; allowed: the "
                        + "layout it was written under, or another selene.disk.dir", e));
                return Behaviors.stopped();
            } catch (IOException | RuntimeException e) {
                closeQuietly(lock);
                onStart.accept(new IllegalStateException("disk tier " + dir + " could not recover: " + e.getMessage(),
                        e));
                return Behaviors.stopped();
            }
            inFlight.watchStalls(new StallWatch(dir, ctx.getSystem().scheduler(), ctx.getSystem().executionContext()));
            onStart.accept(recovery);
            return store;
        });
    }

    /**
     * Why {@code dir} cannot be a disk tier's directory, found before a node maps its slots: it is created if
     * needed and its lock taken and released at once. An {@link IllegalArgumentException} when the setting is at
     * fault (the directory cannot be created), an {@link IllegalStateException} when another node holds it or it
     * cannot be locked; null when it is usable. The store takes the lock for good when it starts.
     */
    static RuntimeException unusable(Path dir) {
        IllegalArgumentException notCreated = createDirectory(dir);
        if (notCreated != null) {
            return notCreated;
        }
        try {
            DirectoryLock.acquire(dir).close();
            return null;
        } catch (IOException e) {
            return new IllegalStateException(e.getMessage(), e);
        }
    }

    private static IllegalArgumentException createDirectory(Path dir) {
        try {
            Files.createDirectories(dir);
            return null;
        } catch (IOException e) {
            return new IllegalArgumentException("selene.disk.dir = '" + dir + "' is invalid: cannot create it ("
                    + e.getClass().getSimpleName() + (e instanceof FileSystemException f && f.getReason() != null
                    ? ": " + f.getReason() : "") + "); allowed: a writable directory");
        }
    }

    private DiskStore(ActorContext<Command> ctx, Path dir, Layout layout, HostMemory host, RecordIo io,
                      Executor ioExecutor, DirectoryLock lock, CacheMetrics metrics, TraceBook traces,
                      InFlight inFlight, FaultInjection faults) {
        super(ctx);
        this.origin = TraceSource.of("DiskStore", ctx);
        this.faults = faults;
        this.dir = dir;
        this.layout = layout;
        this.host = host;
        this.io = io;
        this.ioExecutor = ioExecutor;
        this.lock = lock;
        this.metrics = metrics;
        this.traces = traces;
        this.inFlight = inFlight;
    }

    private Recovery scan() throws IOException {
        long start = System.nanoTime();
        RecoveryScan.Result scan = RecoveryScan.run(lock, io, layout);
        List<RecordSpec> specs = scan.records().stream().map(RecoveryScan.Recovered::spec).toList();
        Set<RecordKey> incomplete = ChainCompleteness.incomplete(specs);
        List<Found> kept = new ArrayList<>();
        long bytes = 0;
        for (RecoveryScan.Recovered r : scan.records()) {
            if (incomplete.contains(r.spec().key())) {
                io.delete(r.file());
                continue;
            }
            kept.add(new Found(r.spec(), r.fileBytes(), r.lastUse()));
            bytes += r.fileBytes();
        }
        if (!inFlight.scanCounted) {
            inFlight.scanCounted = true;
            metrics.diskScanned(kept.size(), scan.rejected());
        }
        getContext().getLog().info("disk tier {}: recovered {} records ({} bytes) in {} ms; {} temporaries deleted, "
                        + "{} quarantined, {} with incomplete chains deleted", dir, kept.size(), bytes,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), scan.temporariesDeleted(), scan.rejected(),
                incomplete.size());
        return new Recovery(kept, scan.temporariesDeleted(), scan.rejected(), incomplete.size(),
                Files.getFileStore(dir).getUsableSpace());
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Command.class, this::onCommand)
                .onSignal(PreRestart.class, s -> {
                    inFlight.stopWatching();
                    closeQuietly(lock);
                    return this;
                })
                .onSignal(PostStop.class, s -> {
                    inFlight.stopWatching();
                    awaitIoInFlight();
                    closeQuietly(lock);
                    return this;
                })
                .build();
    }

    private Behavior<Command> onCommand(Command command) {
        faults.beforeHandling("DiskStore", command);
        switch (command) {
            case Write w -> onWrite(w);
            case WriteFinished f -> onWriteFinished(f);
            case Read r -> onRead(r);
            case ReadFinished f -> onReadFinished(f);
            case Delete d -> d.keys().forEach(this::deleteNow);
            case Settle s -> onSettle(s);
            case SettleRead s -> onSettleRead(s);
            default -> throw new IllegalArgumentException("not a disk store command: " + command);
        }
        return this;
    }

    private void onWrite(Write w) {
        if (writesInFlight++ == 0) {
            writeBusySince = System.nanoTime();
        }
        traces.append(w.spec().key(), origin, "Write started (" + writesInFlight + " in flight)");
        ShareMemory source = shares(w.slots());
        long length = RecordFileFormat.fileLength(layout, w.spec().hasRow());
        CompletableFuture<long[]> done = CompletableFuture.supplyAsync(() -> {
            long start = System.nanoTime();
            try {
                RecordIo.WriteResult r = io.write(w.spec(), layout, source, dir);
                return new long[] {r.bytes(), System.nanoTime() - start};
            } catch (IOException e) {
                throw new CompletionException(e);
            }
        }, ioExecutor);
        CompletableFuture<WriteReply> reply = done.handle((r, e) -> r != null
                ? new Written(w.spec().key(), r[0], r[1]) : failure(w.spec().key(), unwrap(e)));
        synchronized (inFlight) {
            inFlight.writes.put(w.spec().key(), reply);
            inFlight.ended.remove(w.spec().key());
        }
        inFlight.track(reply);
        getContext().pipeToSelf(done, (r, e) -> r != null
                ? new WriteFinished(w, r[0], r[1], null) : new WriteFinished(w, length, 0, unwrap(e)));
    }

    private static WriteFailed failure(RecordKey key, Throwable e) {
        boolean full = e instanceof NativeIoException n && n.errno() == NativeIo.ENOSPC;
        return new WriteFailed(key, full, String.valueOf(e.getMessage()));
    }

    private void onWriteFinished(WriteFinished f) {
        RecordKey key = f.write().spec().key();
        synchronized (inFlight) {
            inFlight.writes.remove(key);
            inFlight.ended.put(key, f.failure() != null ? failure(key, f.failure())
                    : new Written(key, f.bytes(), f.nanos()));
        }
        if (writesInFlight > 0 && --writesInFlight == 0) {
            metrics.diskBusy(CacheMetrics.Direction.WRITE, System.nanoTime() - writeBusySince);
        }
        if (f.failure() != null) {
            metrics.diskWriteFailed();
            traces.append(key, origin, "WriteFailed: " + f.failure().getMessage());
            getContext().getLog().warn("write of {} failed: {}", key, f.failure().getMessage());
            f.write().replyTo().tell(failure(key, f.failure()));
            return;
        }
        metrics.diskWritten(f.bytes(), f.nanos());
        traces.append(key, origin, "Written: committed " + f.bytes() + " bytes");
        f.write().replyTo().tell(new Written(key, f.bytes(), f.nanos()));
    }

    private void onSettle(Settle s) {
        CompletableFuture<WriteReply> running;
        WriteReply ended;
        synchronized (inFlight) {
            running = inFlight.writes.get(s.key());
            ended = inFlight.ended.get(s.key());
        }
        if (running == null) {
            s.replyTo().tell(ended != null ? ended : new NotWritten(s.key()));
        } else {
            running.thenAccept(s.replyTo()::tell);
        }
    }

    private void onRead(Read r) {
        Path file = RecordFileNames.recordFile(dir, r.key());
        ShareMemory target = shares(r.slots());
        if (readsInFlight++ == 0) {
            readBusySince = System.nanoTime();
        }
        CompletableFuture<ReadIo> done = CompletableFuture.supplyAsync(() -> {
            long start = System.nanoTime();
            try {
                io.read(file, layout, target);
                return new ReadIo(Files.size(file), System.nanoTime() - start);
            } catch (IOException ex) {
                throw new CompletionException(ex);
            }
        }, ioExecutor);
        inFlight.track(done);
        synchronized (inFlight) {
            inFlight.reads.put(r.slots().slot(0), done.handle((read, ex) -> read != null
                    ? new ReadDone(r.key(), read.bytes()) : new ReadFailed(r.key(), false, String.valueOf(
                    unwrap(ex).getMessage()))));
        }
        getContext().pipeToSelf(done, (read, ex) -> new ReadFinished(r, read, unwrap(ex)));
    }

    private void onSettleRead(SettleRead s) {
        CompletableFuture<ReadReply> running;
        synchronized (inFlight) {
            running = inFlight.reads.get(s.slots().slot(0));
        }
        if (running == null) {
            s.replyTo().tell(new ReadFailed(s.key(), false, "no read of it is running"));
        } else {
            running.thenAccept(s.replyTo()::tell);
        }
    }

    private void onReadFinished(ReadFinished f) {
        RecordKey key = f.read().key();
        synchronized (inFlight) {
            inFlight.reads.remove(f.read().slots().slot(0));
        }
        if (readsInFlight > 0 && --readsInFlight == 0) {
            metrics.diskBusy(CacheMetrics.Direction.READ, System.nanoTime() - readBusySince);
        }
        if (f.failure() != null) {
            metrics.diskReadFailed();
            traces.append(key, origin, "ReadFailed: " + f.failure().getMessage());
            boolean lost = false;
            if (f.failure() instanceof RecordFormatException) {
                getContext().getLog().warn("read of {} failed validation, quarantining it: {}", key,
                        f.failure().getMessage());
                quarantine(key);
                lost = true;
            } else if (f.failure() instanceof NativeIoException n && n.errno() == NativeIo.ENOENT
                    || f.failure() instanceof NoSuchFileException) {
                getContext().getLog().warn("read of {} failed: its file {} is gone (removed outside the node); the "
                        + "record is forgotten", key, RecordFileNames.recordFile(dir, key).getFileName());
                lost = true;
            } else {
                getContext().getLog().warn("read of {} failed: {}", key, f.failure().toString());
            }
            f.read().replyTo().tell(new ReadFailed(key, lost, String.valueOf(f.failure().getMessage())));
            return;
        }
        traces.append(key, origin, "Read for restore: " + f.io().bytes() + " bytes");
        metrics.diskRead(f.io().bytes(), f.io().nanos());
        f.read().replyTo().tell(new ReadDone(key, f.io().bytes()));
    }

    /** Moves an unreadable file aside: it is never served again. */
    private void quarantine(RecordKey key) {
        Path file = RecordFileNames.recordFile(dir, key);
        try {
            RecoveryScan.moveToQuarantine(file, dir);
            metrics.quarantined();
        } catch (IOException e) {
            getContext().getLog().warn("could not quarantine {}: {}", file, e.getMessage());
        }
    }

    /**
     * Deletes a record's file now, on the store's own (blocking) thread: a delete deferred to the I/O executor
     * could remove a newer file of the same key written in between.
     */
    private void deleteNow(RecordKey key) {
        synchronized (inFlight) {
            inFlight.ended.remove(key); // a later Settle must not take a deleted file's write for a live one
        }
        Path file = RecordFileNames.recordFile(dir, key);
        inFlight.deleting(true);
        try {
            io.delete(file);
            traces.append(key, origin, "File deleted");
        } catch (IOException ex) {
            getContext().getLog().warn("could not delete {}: {}", file, ex.getMessage());
        } finally {
            inFlight.deleting(false);
        }
    }

    /**
     * Waits (bounded) for file I/O still reading or writing host slots: the node unmaps the slots right after its
     * actors stop, and a write must not read unmapped memory.
     */
    private void awaitIoInFlight() {
        CompletableFuture<?>[] pending = inFlight.pending();
        try {
            CompletableFuture.allOf(pending).get(IO_DRAIN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            // each failure was (or would have been) reported to its requester
        } catch (TimeoutException e) {
            getContext().getLog().warn("{} disk transfers still running after {} s at stop", pending.length,
                    IO_DRAIN_TIMEOUT_SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private ShareMemory shares(SlotList slots) {
        int page = layout.pageBytes();
        return (piece, rank) -> host.share(slots.slot(piece), rank, page);
    }

    private static Throwable unwrap(Throwable e) {
        while (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    private static void closeQuietly(DirectoryLock lock) {
        try {
            lock.close();
        } catch (IOException ignored) {
            // the store is stopping; the lock file is released with the process anyway
        }
    }
}
