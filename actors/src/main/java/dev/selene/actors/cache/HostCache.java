package dev.selene.actors.cache;

import dev.selene.actors.census.ActorCensus;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.store.RemoteTier;
import dev.selene.actors.store.Store;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.trace.TraceOutcome;
import dev.selene.actors.trace.TraceSource;
import dev.selene.actors.value.LogMarkers;
import dev.selene.actors.value.AbandonReason;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.EvictOutcome;
import dev.selene.actors.value.ExpiryReport;
import dev.selene.actors.value.LookupResult;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RecordDescription;
import dev.selene.actors.value.RecordPage;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.RetryReason;
import dev.selene.actors.value.Tier;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.intake.IntakeSizing;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.transport.disk.DirectRecordIo;
import dev.selene.transport.disk.RecordIo;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.BehaviorInterceptor;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.Scheduler;
import org.apache.pekko.actor.typed.Signal;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.TypedActorContext;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The guardian and facade of one cache node, a behaviour an application spawns under its own guardian (or gets
 * through {@link dev.selene.actors.api.Selene}). It validates the configuration (tier matrix), checks the disk directory
 * (created if needed, its lock free), maps the host slots on the blocking dispatcher (zeroing gigabytes must
 * not block the others) while it stashes what arrives, spawns the disk store and the catalog (which keeps the
 * slots), then forwards the protocol to the catalog. A directory that cannot be used thus stops the start
 * before any memory is mapped.
 *
 * <p>Supervision: the disk store is restarted with back-off and scans its directory again; the catalog holds state
 * that cannot be rebuilt (every record's state and the slots' booking), so if it stops the node stops rather than
 * serve from it.
 */
public final class HostCache {

    /** The protocol. */
    public sealed interface Command {
    }

    /**
     * Publishes one record from its GPU snapshot, which must live until the reply. With a positive {@code patience}
     * (what is left of the caller's snapshot lease) the node waits for slots that long before it gives the
     * publication up as abandoned; with zero it answers {@code Retry(no_space)} at once when none are free.
     */
    public record Publish(RecordSpec spec, DevicePlacement snapshot, Duration patience,
                          ActorRef<PublishResult> replyTo) implements Command {
    }

    /** Finds the longest cached match of a chain of keys (root first). */
    public record Lookup(String namespace, long[] chain, ActorRef<LookupResult> replyTo) implements Command {
    }

    /**
     * Restores the match of {@code chain} to {@code targets} (one device placement per chain record) unless that is
     * estimated slower than {@code recompute}.
     */
    public record Restore(String namespace, long[] chain, List<DevicePlacement> targets, Duration recompute,
                          ActorRef<RestoreResult> replyTo) implements Command {
    }

    /**
     * A publication ({@code publication} true) or a restore the cache's facade refused at once because the device
     * copier is unusable: counted as a failed publication abandoned for its copy, or a failed restore.
     */
    public record DeviceRefused(boolean publication) implements Command {
    }

    /** The caller gave up a publication's GPU snapshot while it was still being told to retry (publication lifecycle). */
    public record ReportAbandoned(RecordKey key, RetryReason reason) implements Command {
    }

    /** Asks for the node's status. */
    public record GetStatus(ActorRef<CacheStatus> replyTo) implements Command {
    }

    /** Lists records ordered by namespace then key; null {@code namespace} or {@code tier} means all. */
    public record ListRecords(String namespace, Tier tier, int offset, int limit, ActorRef<RecordPage> replyTo)
            implements Command {
    }

    /** Describes one record: state, chain and locations. */
    public record DescribeRecord(RecordKey key, ActorRef<RecordDescription> replyTo) implements Command {
    }

    /** Removes one record and its descendants from every tier (an operator's eviction). */
    public record EvictRecord(RecordKey key, ActorRef<EvictOutcome> replyTo) implements Command {
    }

    /** Runs the max-age sweep now. */
    public record ExpireNow(ActorRef<ExpiryReport> replyTo) implements Command {
    }

    /** Spills every dirty record to disk, ancestors first, within {@code timeout} (drain on shutdown). */
    public record Drain(Duration timeout, ActorRef<DrainReport> replyTo) implements Command {
    }

    /** Checks the catalog's invariants; replies with the first one broken, or an empty string. */
    public record CheckInvariants(ActorRef<String> replyTo) implements Command {
    }

    /** Stops the node (records only in memory are lost; drain first to keep them). */
    public record Stop() implements Command {
    }

    /** Replies once the node serves (its disk store has recovered), or with why it could not start. */
    public record WhenReady(ActorRef<Readiness> replyTo) implements Command {
    }

    /**
     * The answer to {@link WhenReady}: null {@code failure} when ready; else the reason and whose it is to fix.
     */
    public record Readiness(String failure, StartFault fault, DirectPublish direct) {
        static final Readiness READY = new Readiness(null, null, null);

        public Readiness(String failure, StartFault fault) {
            this(failure, fault, null);
        }

        public boolean ready() {
            return failure == null;
        }
    }

    private record Mapped(HostMemory host, Throwable failure) implements Command {
    }

    private enum Ready implements Command {
        INSTANCE
    }

    /** Whose a start failure is to fix. */
    public enum StartFault {
        /** A setting the operator must change. */
        SETTING,
        /** What a setting names on this machine: a directory in use, memory that cannot be mapped, pool managers
         *  that cannot be reached. */
        ENVIRONMENT,
        /** A failure inside the node or its device. */
        NODE
    }

    private record StartFailed(String reason, StartFault fault) implements Command {
    }

    /** The disk directory passed its check at start: the slots may be mapped. */
    private enum DiskUsable implements Command {
        INSTANCE
    }

    /** What the disk store found when it started (or restarted): handed on to the catalog. */
    private record DiskScanned(DiskStore.Recovery recovery) implements Command {
    }

    private enum PoolReachable implements Command {
        INSTANCE
    }

    private enum PoolJoinTimeout implements Command {
        INSTANCE
    }

    private record ChildStopped(String name) implements Command {
    }

    /**
     * The way publications reach a serving node's catalog without passing through the node's own mailbox (one
     * message fewer per publication): {@link Readiness#direct()} of a serving node. Thread-safe. While the node is not
     * serving (starting, restarting after a failure under a parent's supervision, stopped) it takes nothing and the
     * caller sends {@link Publish} to the node, which stashes, answers or drops it as the node's state says. It is
     * cleared when the node decides to stop (and, for any other way it stops or restarts, when its stop or restart
     * signal comes); a publication sent in between is lost with the catalog, as one already inside it would be: its
     * caller's ask times out. Calls of one caller through it and through the node's mailbox are ordered only when
     * the caller awaits each answer before its next call.
     */
    public static final class DirectPublish {
        private volatile Target target;

        DirectPublish() {
        }

        /**
         * Publishes through the serving node's catalog, answered within {@code timeout}; null when the node is not
         * serving (send {@link Publish} to the node instead).
         */
        public CompletionStage<PublishResult> publish(RecordSpec spec, DevicePlacement snapshot, Duration patience,
                                                      Duration timeout, Scheduler scheduler) {
            Target t = target;
            if (t == null) {
                return null;
            }
            PublishResult oversize = t.oversize(spec);
            if (oversize != null) {
                return CompletableFuture.completedFuture(oversize);
            }
            long correlation = t.traces().newCorrelation();
            return AskPattern.ask(t.catalog(), replyTo -> new Catalog.Publish(spec, snapshot, patience, replyTo,
                    correlation), timeout, scheduler);
        }

        void serve(Target t) {
            target = t;
        }

        void stop() {
            target = null;
        }
    }

    /** What a publication needs of a serving node: its catalog, and what answers one larger than any grant. */
    private record Target(ActorRef<Catalog.Command> catalog, TraceBook traces, TraceSource origin,
                          CacheMetrics metrics, CacheConfig config, IntakeSizing sizing) {

        /** {@code Oversize}, traced and counted, when {@code spec} needs more slots than are ever granted; else null. */
        PublishResult oversize(RecordSpec spec) {
            int slots = spec.slots(config.layout());
            if (SlotAccounting.fits(slots, sizing.totalSlots(), sizing.slots(), SlotAccounting.Purpose.PUBLISH)) {
                return null;
            }
            int max = SlotAccounting.maxGrant(sizing.totalSlots(), sizing.slots(), SlotAccounting.Purpose.PUBLISH);
            traces.append(spec.key(), origin, traces.newCorrelation(),
                    "Publish: " + slots + " slots > " + max + ", the most ever granted", TraceOutcome.OVERSIZE);
            PublishResult oversize = new PublishResult.Oversize(slots, max);
            metrics.publication(oversize);
            metrics.abandoned(AbandonReason.OVERSIZE);
            return oversize;
        }

        void publish(Publish p) {
            PublishResult oversize = oversize(p.spec());
            if (oversize != null) {
                p.replyTo().tell(oversize);
                return;
            }
            catalog.tell(new Catalog.Publish(p.spec(), p.snapshot(), p.patience(), p.replyTo(),
                    traces.newCorrelation()));
        }
    }

    /**
     * What a node is built from besides its configuration: the device copier (the caller keeps and closes it), the
     * record I/O of a disk tier (the seam for disk faults in tests), the in-process counters its metrics also
     * count into, traces, the one clock every actor reads, and the remote tier of a node whose settings name pool
     * managers (null: the one a module on the class path provides, {@link RemoteTier#installed()}). Immutable: each
     * {@code with} returns new parts.
     */
    public static final class Parts {
        private final DeviceCopier copier;
        private final Function<Executor, RecordIo> recordIo;
        private final CacheCounters counters;
        private final TraceBook traces;
        private final LongSupplier clock;
        private final FaultInjection faults;
        private final Duration writeCheck;
        private final RemoteTier remoteTier;

        private Parts(DeviceCopier copier, Function<Executor, RecordIo> recordIo, CacheCounters counters,
                      TraceBook traces, LongSupplier clock, FaultInjection faults, Duration writeCheck,
                      RemoteTier remoteTier) {
            this.copier = copier;
            this.recordIo = recordIo;
            this.counters = counters;
            this.traces = traces;
            this.clock = clock;
            this.faults = faults;
            this.writeCheck = writeCheck;
            this.remoteTier = remoteTier;
        }

        /** Real O_DIRECT files, the system nano clock, fresh counters and traces. */
        public static Parts of(DeviceCopier copier) {
            return new Parts(copier, DEFAULT_RECORD_IO, new CacheCounters(), new TraceBook(DEFAULT_TRACE_RECORDS),
                    System::nanoTime, FaultInjection.NONE, RecordContext.DEFAULT_WRITE_CHECK, null);
        }

        public Parts withRecordIo(Function<Executor, RecordIo> io) {
            return new Parts(copier, io, counters, traces, clock, faults, writeCheck, remoteTier);
        }

        public Parts withClock(LongSupplier c) {
            return new Parts(copier, recordIo, counters, traces, c, faults, writeCheck, remoteTier);
        }

        /** The seam through which this package's tests make the node's actors fail. */
        Parts withFaults(FaultInjection f) {
            return new Parts(copier, recordIo, counters, traces, clock, f, writeCheck, remoteTier);
        }

        /** How long a record actor waits for a write's answer before it asks the store how the write ended. */
        public Parts withWriteCheck(Duration d) {
            return new Parts(copier, recordIo, counters, traces, clock, faults, d, remoteTier);
        }

        /** The remote tier of a node whose settings name pool managers. */
        public Parts withRemoteTier(RemoteTier tier) {
            return new Parts(copier, recordIo, counters, traces, clock, faults, writeCheck, tier);
        }

        public DeviceCopier copier() {
            return copier;
        }

        public Function<Executor, RecordIo> recordIo() {
            return recordIo;
        }

        public CacheCounters counters() {
            return counters;
        }

        public TraceBook traces() {
            return traces;
        }

        public LongSupplier clock() {
            return clock;
        }

        FaultInjection faults() {
            return faults;
        }

        public Duration writeCheck() {
            return writeCheck;
        }

        /** The remote tier given, else the one a module on the class path provides; null when there is none. */
        public RemoteTier remoteTierOrInstalled() {
            return remoteTier != null ? remoteTier : RemoteTier.installed().orElse(null);
        }
    }

    /** Why a node whose settings name pool managers cannot start without the pool's module. */
    public static final String NO_REMOTE_TIER = "selene.pool.managers is set, but the pool's module (selene-pool) is "
            + "not on the class path: add it to the application, or leave selene.pool.managers empty";

    /** Default number of records whose traces are kept. */
    static final int DEFAULT_TRACE_RECORDS = 65_536;

    /**
     * Records written to disk at most at once. Chosen from disk-only bursts at 4, 8 and 12 (the figures are in
     * docs/benchmarks.md, "Figures behind constants in the code"): more writes in flight spilled faster where raw
     * O_DIRECT writers gained nothing, because the extra writes hide each record's commit (fsync, rename, directory
     * fsync) behind the others' transfers. It stays below the blocking dispatcher's 16 threads, so that restores'
     * reads always find threads.
     */
    public static final int SPILL_IN_FLIGHT_CAP = 12;

    /**
     * How long a stopping node's disk tier waits for its transfers in flight, after its actors' stop (a write must
     * not read slots the node unmaps).
     */
    public static final java.time.Duration DISK_TRANSFERS_AT_STOP = java.time.Duration.ofSeconds(30);

    /**
     * Records retired to the pool at most at once on a node without a disk. A retirement spends most of its time
     * waiting on control-plane round trips rather than moving bytes, so more of them in flight keep the data plane
     * busy; they hold no memory beyond the records' own slots.
     */
    static final int POOL_IN_FLIGHT_CAP = Integer.getInteger("selene.pool-cap", 32);

    /** The dispatcher of blocking work (disk I/O, mapping the slots), from {@code reference.conf}. */
    public static final String BLOCKING_DISPATCHER = "selene.blocking-dispatcher";

    /** The record I/O of a disk tier: real O_DIRECT files, transfers fanned out on the blocking executor. */
    public static final Function<Executor, RecordIo> DEFAULT_RECORD_IO =
            io -> DirectRecordIo.create(io, DirectRecordIo.DEFAULT_TRANSFERS_PER_RECORD);

    private static final int STASH_CAPACITY = 1 << 16;

    /**
     * The logger of the one start-up warning that the intake had to shrink, named after {@link IntakeSizing} so that
     * tests which size a node small on purpose can lower it alone.
     */
    private static final Logger INTAKE_LOG = LoggerFactory.getLogger(IntakeSizing.class);

    /** How long a pool host waits at start for a pool manager to be reachable. */
    /** Where the node reads how long a starting pool host waits for a manager (1 s .. 10 min; 20 s by default). */
    static final String POOL_JOIN_TIMEOUT_SETTING = "selene.pool.join-timeout";

    /**
     * How long a starting pool host waits for a manager's store ({@code selene.pool.join-timeout}, 20 s unless set);
     * a value outside 1 s .. 10 min is refused with one line naming the setting.
     */
    static Duration poolJoinTimeout(com.typesafe.config.Config config) {
        Duration d = config.hasPath(POOL_JOIN_TIMEOUT_SETTING) ? config.getDuration(POOL_JOIN_TIMEOUT_SETTING)
                : Duration.ofSeconds(20);
        if (d.compareTo(Duration.ofSeconds(1)) < 0 || d.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException(POOL_JOIN_TIMEOUT_SETTING + " = " + d.toSeconds()
                    + " s is invalid; allowed: 1s .. 10m, e.g. 20s");
        }
        return d;
    }

    /** How long a stopping node waits for device copies in flight before it unmaps the slots. */
    static final long TRANSFER_DRAIN_TIMEOUT_SECONDS = 30;

    private HostCache() {
    }

    /** The guardian of a node configured by {@code config} over {@code parts}. */
    public static Behavior<Command> create(CacheConfig config, Parts parts) {
        // One for every incarnation of the node: a caller that holds it keeps publishing after a restart.
        DirectPublish direct = new DirectPublish();
        return Behaviors.withStash(STASH_CAPACITY, stash -> Behaviors.setup(ctx -> {
            CacheMetrics metrics = CacheMetrics.forNode(nodeName(ctx), parts.counters(), tiers(config));
            metrics.enabled(config.enabled());
            return Behaviors.intercept(() -> new ClosingMetrics(metrics, direct),
                    start(ctx, stash, config, parts, metrics, direct));
        }));
    }

    /** Checks the configuration and starts mapping the slots; without a tier the node is disabled. */
    private static Behavior<Command> start(ActorContext<Command> ctx, StashBuffer<Command> stash,
                                           CacheConfig config, Parts parts, CacheMetrics metrics,
                                           DirectPublish direct) {
        if (!config.enabled()) {
            ctx.getLog().info("no tier configured (warm size 0, no disk, no pool): the cache is disabled");
            return disabled(metrics);
        }
        RemoteTier remote = config.poolEnabled() ? parts.remoteTierOrInstalled() : null;
        if (config.poolEnabled() && remote == null) {
            return refused(NO_REMOTE_TIER, StartFault.SETTING);
        }
        if (config.poolEnabled() && !isCluster(ctx)) {
            return refused("selene.pool.managers is set, but the actor system is not a cluster node: start the cache "
                    + "on a system of its own (it joins the pool's cluster) or give yours the settings of "
                    + "selene-cluster.conf", StartFault.SETTING);
        }
        IntakeSizing sizing = IntakeSizing.compute(config.layout(), config.concurrency(),
                config.effectiveWindowSlots(), config.warmBytes(), config.hostBudgetBytes());
        if (sizing.warning() != null) {
            INTAKE_LOG.warn(sizing.warning());
        }
        Executor blocking = ctx.getSystem().dispatchers()
                .lookup(DispatcherSelector.fromConfig(BLOCKING_DISPATCHER));
        Starting starting = new Starting(ctx, stash, config, parts, metrics, sizing, blocking, direct, remote);
        if (config.diskDir() == null) {
            return starting.mapping();
        }
        ctx.pipeToSelf(CompletableFuture.supplyAsync(() -> DiskStore.unusable(Path.of(config.diskDir())), blocking),
                (unusable, e) -> {
                    if (e != null) {
                        Throwable cause = e instanceof CompletionException c && c.getCause() != null ? c.getCause() : e;
                        return new StartFailed("the disk directory could not be checked: " + cause,
                                StartFault.ENVIRONMENT);
                    }
                    return unusable == null ? DiskUsable.INSTANCE
                            : new StartFailed(unusable.getMessage(), unusable instanceof IllegalArgumentException
                            ? StartFault.SETTING : StartFault.ENVIRONMENT);
                });
        return starting.checkingDisk();
    }

    /** The tiers {@code config} gives the node: memory, and the disk and the pool when configured. */
    private static Set<Tier> tiers(CacheConfig config) {
        Set<Tier> tiers = EnumSet.of(Tier.MEMORY);
        if (config.diskDir() != null) {
            tiers.add(Tier.DISK);
        }
        if (config.poolEnabled()) {
            tiers.add(Tier.POOL);
        }
        return tiers;
    }

    private static boolean isCluster(ActorContext<Command> ctx) {
        String provider = ctx.getSystem().settings().config().getString("pekko.actor.provider");
        return provider.equals("cluster") || provider.endsWith("ClusterActorRefProvider");
    }

    /**
     * The node's tag in its metrics: the actor system's name, and the node actor's name too when the node is not
     * the system's guardian.
     */
    private static String nodeName(ActorContext<Command> ctx) {
        String system = ctx.getSystem().name();
        String path = ctx.getSelf().path().toStringWithoutAddress();
        return path.equals("/user") ? system : system + "_" + ctx.getSelf().path().name();
    }

    /**
     * Closes the node's metrics when the node stops (or is restarted by a parent's supervision, which sets it up
     * afresh), in whatever state it stops.
     */
    private static final class ClosingMetrics extends BehaviorInterceptor<Command, Command> {
        private final CacheMetrics metrics;
        private final DirectPublish direct;

        ClosingMetrics(CacheMetrics metrics, DirectPublish direct) {
            super(Command.class);
            this.metrics = metrics;
            this.direct = direct;
        }

        @Override
        public Behavior<Command> aroundReceive(TypedActorContext<Command> ctx, Command msg,
                                               ReceiveTarget<Command> target) {
            return target.apply(ctx, msg);
        }

        @Override
        public Behavior<Command> aroundSignal(TypedActorContext<Command> ctx, Signal signal,
                                              SignalTarget<Command> target) {
            if (signal instanceof PostStop || signal instanceof PreRestart) {
                direct.stop(); // a restart: before its children stop; a stop: after, the node's own stops clear it first
            }
            Behavior<Command> next = target.apply(ctx, signal);
            if (signal instanceof PostStop || signal instanceof PreRestart) {
                metrics.close();
            }
            return next;
        }
    }

    /**
     * The node while its disk directory is checked, its slots are mapped and its disk store recovers: everything
     * else is stashed.
     */
    private record Starting(ActorContext<Command> ctx, StashBuffer<Command> stash, CacheConfig config, Parts parts,
                            CacheMetrics metrics, IntakeSizing sizing, Executor blocking, DirectPublish direct,
                            RemoteTier remote) {

        /** Waits for the disk directory's check, which runs before the slots are mapped (it is fast, they are not). */
        Behavior<Command> checkingDisk() {
            return Behaviors.receive(Command.class)
                    .onMessage(DiskUsable.class, d -> mapping())
                    .onMessage(StartFailed.class, f -> stash.unstashAll(refused(f.reason(), f.fault())))
                    .onMessage(Command.class, this::stashed)
                    .build();
        }

        /** Maps the slots on the blocking dispatcher and waits for them. */
        Behavior<Command> mapping() {
            ctx.pipeToSelf(CompletableFuture.supplyAsync(() -> HostMemory.allocate(config.layout(),
                    sizing.totalSlots()), blocking), Mapped::new);
            return Behaviors.receive(Command.class)
                    .onMessage(Mapped.class, this::onMapped)
                    .onMessage(WhenReady.class, w -> stashed(w))
                    .onMessage(Command.class, this::stashed)
                    .build();
        }

        private Behavior<Command> failStart(Running running, String reason, StartFault fault) {
            ctx.getLog().error(LogMarkers.START_FAILURE, "the node could not start: {}", reason);
            running.host().close();
            return stash.unstashAll(refused(reason, fault));
        }

        private Behavior<Command> stashed(Command c) {
            if (stash.isFull()) {
                ctx.getLog().warn("node still starting; a message was dropped (stash full)");
            } else {
                stash.stash(c);
            }
            return Behaviors.same();
        }

        private Behavior<Command> onMapped(Mapped m) {
            if (m.failure() != null) {
                Throwable cause = m.failure() instanceof CompletionException c
                        && c.getCause() != null ? c.getCause() : m.failure();
                boolean memory = cause instanceof OutOfMemoryError || cause instanceof IllegalArgumentException;
                return stash.unstashAll(refused("host memory of " + sizing.totalSlots() + " slots could not be "
                        + "mapped: " + (cause instanceof OutOfMemoryError ? "out of memory" : cause.getMessage())
                        + (memory ? "; lower the warm size or the concurrency (selene.warm, selene.concurrency)" : ""),
                        StartFault.ENVIRONMENT));
            }
            HostMemory host = m.host();
            try {
                parts.copier().register(host);
            } catch (RuntimeException | LinkageError e) {
                // Answer WhenReady now, with the driver's error: the starter must not wait out its timeout for it.
                String reason = "the host slots (" + sizing.totalSlots() + " slots, "
                        + host.segment().byteSize() + " bytes) could not be registered with the "
                        + parts.copier().name() + " device copier: " + e.getMessage();
                host.close();
                ctx.getLog().error(LogMarkers.START_FAILURE, "the node could not start: {}", reason);
                return stash.unstashAll(refused(reason, StartFault.NODE));
            }
            RecordContext records = new RecordContext(config.layout(), host, parts.copier(), metrics,
                    parts.traces(), parts.faults(), parts.writeCheck(), parts.clock(), new DeviceTransfers());
            ActorRef<Command> self = ctx.getSelf();
            ActorRef<Store.Command> disk = null;
            if (config.diskDir() != null) {
                RecordIo recordIo = parts.recordIo().apply(blocking);
                disk = ctx.spawn(Behaviors.supervise(DiskStore.create(Path.of(config.diskDir()), config.layout(),
                                host, recordIo, blocking, metrics, parts.traces(), parts.faults(), outcome -> {
                                    if (outcome instanceof Throwable t) {
                                        self.tell(new StartFailed(t.getMessage(), t instanceof IllegalArgumentException
                                                ? StartFault.SETTING : StartFault.ENVIRONMENT));
                                    } else {
                                        self.tell(new DiskScanned((DiskStore.Recovery) outcome));
                                    }
                                }))
                                .onFailure(SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200),
                                        Duration.ofSeconds(10), 0.2)),
                        "disk-store", ActorCensus.MAILBOX.withDispatcherFromConfig(BLOCKING_DISPATCHER));
            }
            ActorRef<Store.Command> pool = null;
            if (remote != null) {
                Duration joinTimeout = Duration.ZERO; // a bad setting: the node refuses to start at once
                try {
                    joinTimeout = poolJoinTimeout(ctx.getSystem().settings().config());
                    ctx.scheduleOnce(joinTimeout, self, PoolJoinTimeout.INSTANCE);
                } catch (RuntimeException e) {
                    self.tell(new StartFailed(e.getMessage(), StartFault.SETTING));
                }
                pool = ctx.spawn(Behaviors.supervise(remote.store(new RemoteTier.Context(config.layout(), host,
                                metrics, parts.traces(), () -> self.tell(PoolReachable.INSTANCE),
                                misfit -> self.tell(new StartFailed(misfit, StartFault.SETTING)), joinTimeout)))
                                .onFailure(SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200),
                                        Duration.ofSeconds(10), 0.2)),
                        "pool-store", ActorCensus.MAILBOX.withDispatcherFromConfig(BLOCKING_DISPATCHER));
            }
            int inFlightCap = config.diskBytes() == 0 && config.poolEnabled() ? POOL_IN_FLIGHT_CAP
                    : SPILL_IN_FLIGHT_CAP;
            Catalog.Settings settings = new Catalog.Settings(config.diskBytes(), inFlightCap,
                    config.maxAge(), parts.clock(), () -> self.tell(Ready.INSTANCE), config.policy());
            ActorRef<Catalog.Command> catalog = ctx.spawn(Catalog.create(records,
                    new Catalog.SlotShape(sizing.totalSlots(), sizing.slots()), disk, pool, settings), "catalog",
                    ActorCensus.MAILBOX);
            ctx.watchWith(catalog, new ChildStopped("catalog"));
            if (disk != null) {
                ctx.watchWith(disk, new ChildStopped("disk-store"));
            }
            if (pool != null) {
                ctx.watchWith(pool, new ChildStopped("pool-store"));
            }
            ctx.getLog().info("host cache up: layout {}, {} slots of {} bytes ({} warm + {} intake), device {}",
                    config.layout().name(), sizing.totalSlots(), config.layout().slotBytes(), sizing.warmSlots(),
                    sizing.slots(), parts.copier().name());
            Running running = new Running(ctx, config, parts, metrics, sizing, host, catalog, disk,
                    records.transfers(), direct, new Target(catalog, parts.traces(), TraceSource.of("HostCache", ctx),
                    metrics, config, sizing));
            return waitingForStores(running, false, pool == null);
        }

        /** Waits for the catalog (after the disk's scan) and for a reachable pool manager, when there is a pool. */
        private Behavior<Command> waitingForStores(Running running, boolean catalogReady, boolean poolReady) {
            if (catalogReady && poolReady) {
                return stash.unstashAll(running.behavior());
            }
            return Behaviors.receive(Command.class)
                    .onMessage(DiskScanned.class, d -> {
                        running.catalog().tell(new Catalog.DiskRecovered(d.recovery()));
                        return Behaviors.same();
                    })
                    .onMessage(Ready.class, r -> waitingForStores(running, true, poolReady))
                    .onMessage(PoolReachable.class, r -> {
                        ctx.getLog().info("pool reachable: a pool manager's store is up in the cluster");
                        return waitingForStores(running, catalogReady, true);
                    })
                    .onMessage(PoolJoinTimeout.class, t -> poolReady ? Behaviors.same()
                            : failStart(running, "no pool manager reachable at " + String.join(", ",
                            config.poolManagers()) + " within " + poolJoinTimeout(ctx.getSystem().settings().config()).toSeconds() + " s: check "
                            + "selene.pool.managers and that a manager runs there"
                            + remote.unreachableHint(ctx.getSystem().settings().config()), StartFault.ENVIRONMENT))
                    .onMessage(StartFailed.class, f -> failStart(running, f.reason(), f.fault()))
                    .onMessage(ChildStopped.class, c -> {
                        ctx.getLog().error("{} stopped while the node started", c.name());
                        return stash.unstashAll(refused(c.name() + " stopped while the node started",
                                StartFault.NODE));
                    })
                    .onMessage(Command.class, this::stashed)
                    .build();
        }
    }

    /** The node serving: the protocol goes to the catalog. */
    private record Running(ActorContext<Command> ctx, CacheConfig config, Parts parts, CacheMetrics metrics,
                           IntakeSizing sizing, HostMemory host,
                           ActorRef<Catalog.Command> catalog, ActorRef<Store.Command> disk,
                           DeviceTransfers transfers, DirectPublish direct, Target target) {

        /** The node serving; from now on publications may also come straight to the catalog. */
        Behavior<Command> behavior() {
            direct.serve(target);
            return Behaviors.receive(Command.class)
                    .onMessage(Command.class, this::onCommand)
                    .onSignal(PostStop.class, s -> {
                        // Device copies may still read or write the slots: unmap only once they have ended.
                        if (!transfers.awaitAll(TRANSFER_DRAIN_TIMEOUT_SECONDS)) {
                            ctx.getLog().warn("device copies still running after {} s at stop; unmapping anyway",
                                    TRANSFER_DRAIN_TIMEOUT_SECONDS);
                        }
                        host.close();
                        return Behaviors.same();
                    })
                    .build();
        }

        private Behavior<Command> onCommand(Command command) {
            switch (command) {
                case Publish p -> onPublish(p);
                case Lookup l -> catalog.tell(new Catalog.Lookup(l.namespace(), l.chain(), l.replyTo()));
                case Restore r -> catalog.tell(new Catalog.Restore(r.namespace(), r.chain(), r.targets(),
                        r.recompute(), r.replyTo(), parts.traces().newCorrelation()));
                case Drain d -> catalog.tell(new Catalog.Drain(d.timeout(), d.replyTo()));
                case ReportAbandoned a -> onAbandoned(metrics, parts.traces(), TraceSource.of("HostCache", ctx), a);
                case DeviceRefused d -> onDeviceRefused(metrics, d);
                case GetStatus g -> catalog.tell(new Catalog.GetStatus(g.replyTo()));
                case ListRecords l -> catalog.tell(new Catalog.ListRecords(l.namespace(), l.tier(), l.offset(),
                        l.limit(), l.replyTo()));
                case DescribeRecord d -> catalog.tell(new Catalog.DescribeRecord(d.key(), d.replyTo()));
                case EvictRecord e -> catalog.tell(new Catalog.EvictRecord(e.key(), e.replyTo()));
                case ExpireNow x -> catalog.tell(new Catalog.ExpireNow(x.replyTo()));
                case CheckInvariants c -> catalog.tell(new Catalog.CheckInvariants(c.replyTo()));
                case WhenReady w -> w.replyTo().tell(new Readiness(null, null, direct));
                case Stop s -> {
                    direct.stop(); // no publication to a catalog that is about to stop
                    return Behaviors.stopped();
                }
                case ChildStopped c -> {
                    // The catalog's state (records and slots) cannot be rebuilt from nothing: stop the node rather
                    // than serve from an inconsistent one. (The disk store is restarted by its supervisor; it only
                    // stops when its restarts are exhausted.)
                    ctx.getLog().error("{} stopped after a failure; stopping the node", c.name());
                    direct.stop();
                    return Behaviors.stopped();
                }
                case Mapped m -> m.host().close();
                case DiskScanned d -> catalog.tell(new Catalog.DiskRecovered(d.recovery()));
                case Ready r -> { }
                case PoolReachable r -> { }
                case PoolJoinTimeout t -> { }
                case StartFailed f -> ctx.getLog().error("disk store failed after a restart: {}", f.reason());
                case DiskUsable d -> { }
            }
            return Behaviors.same();
        }

        private void onPublish(Publish p) {
            target.publish(p);
        }
    }

    private static void onDeviceRefused(CacheMetrics metrics, DeviceRefused d) {
        if (d.publication()) {
            metrics.publication(new PublishResult.Failed(AbandonReason.COPY_FAILED.label(), "device unusable"));
            metrics.abandoned(AbandonReason.COPY_FAILED);
        } else {
            metrics.restoreFailed();
        }
    }

    private static void onAbandoned(CacheMetrics metrics, TraceBook traces, TraceSource origin, ReportAbandoned a) {
        AbandonReason reason = AbandonReason.of(a.reason());
        metrics.abandoned(reason);
        if (traces != null) {
            traces.append(a.key(), origin, 0, "Abandoned by the caller while told to retry",
                    TraceOutcome.abandoned(reason));
        }
    }

    /** A node that could not start: it answers {@link WhenReady} with the reason and stops on anything else. */
    private static Behavior<Command> refused(String reason, StartFault fault) {
        return Behaviors.receive(Command.class)
                .onMessage(WhenReady.class, w -> {
                    w.replyTo().tell(new Readiness(reason, fault));
                    return Behaviors.same();
                })
                .onMessage(Stop.class, s -> Behaviors.stopped())
                .onAnyMessage(m -> Behaviors.same())
                .build();
    }

    private static Behavior<Command> disabled(CacheMetrics metrics) {
        return Behaviors.receive(Command.class)
                .onMessage(Stop.class, s -> Behaviors.stopped())
                .onMessage(Command.class, c -> {
                    onDisabled(metrics, c);
                    return Behaviors.same();
                })
                .build();
    }

    private static void onDisabled(CacheMetrics metrics, Command c) {
        switch (c) {
            case Publish p -> {
                PublishResult disabled = new PublishResult.Disabled();
                metrics.publication(disabled);
                p.replyTo().tell(disabled);
            }
            case Lookup l -> {
                metrics.lookup(false, 0);
                l.replyTo().tell(LookupResult.miss("the cache is disabled"));
            }
            case Restore r -> {
                metrics.restoreDisabled();
                r.replyTo().tell(RestoreResult.of(RestoreResult.Outcome.DISABLED, "no tier is configured"));
            }
            case ReportAbandoned a -> onAbandoned(metrics, null, null, a);
            case DeviceRefused d -> onDeviceRefused(metrics, d);
            case ListRecords l -> l.replyTo().tell(RecordPage.empty(l.offset()));
            case DescribeRecord d -> d.replyTo().tell(RecordDescription.absent(d.key()));
            case EvictRecord e -> e.replyTo().tell(new EvictOutcome(EvictOutcome.Result.NOT_FOUND, 0));
            case ExpireNow x -> x.replyTo().tell(new ExpiryReport(Tier.MEMORY, false, List.of()));
            case Drain d -> d.replyTo().tell(new DrainReport(0, 0, false));
            case GetStatus g -> g.replyTo().tell(new CacheStatus(false, 0, 0, 0, 0, 0, 0,
                    metrics.counters().snapshot(), null, null, metrics.node()));
            case WhenReady w -> w.replyTo().tell(Readiness.READY);
            case CheckInvariants check -> check.replyTo().tell("");
            case Stop s -> { }
            case PoolReachable r -> { }
            case PoolJoinTimeout t -> { }
            case Mapped m -> { }
            case DiskScanned d -> { }
            case Ready r -> { }
            case StartFailed f -> { }
            case DiskUsable d -> { }
            case ChildStopped s -> { }
        }
    }
}
