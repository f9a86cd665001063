package dev.selene.actors.cache;

import dev.selene.actors.api.CacheStatus;
import dev.selene.actors.api.EvictOutcome;
import dev.selene.actors.api.ExpiryReport;
import dev.selene.actors.api.LookupResult;
import dev.selene.actors.api.PublishResult;
import dev.selene.actors.api.RecordDescription;
import dev.selene.actors.api.RecordPage;
import dev.selene.actors.api.RestoreResult;
import dev.selene.actors.api.Tier;
import dev.selene.actors.memory.ExpirySettings;
import dev.selene.actors.memory.MemoryTier;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.record.RecordContext;
import dev.selene.actors.restore.RestoreTask;
import dev.selene.actors.slots.SlotPool;
import dev.selene.actors.trace.TraceBook;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.intake.IntakeSizing;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.host.HostMemory;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

import dev.selene.actors.disk.DiskTier;
import dev.selene.actors.restore.LookupTask;
import dev.selene.actors.spill.SpillScheduler;
import dev.selene.transport.disk.DirectRecordIo;
import dev.selene.transport.disk.RecordIo;
import org.apache.pekko.actor.typed.DispatcherSelector;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * The facade and guardian of one cache node: validates the configuration (B7), sizes the intake (B2), maps the
 * host slot pool (B1), spawns the tiers and answers publications, lookups and restores.
 */
public final class HostCache extends AbstractBehavior<HostCache.Command> {

    /** The protocol. */
    public sealed interface Command {
    }

    /** Publishes one record from its GPU snapshot; the snapshot must live until the reply. */
    public record Publish(RecordSpec spec, DevicePlacement snapshot, ActorRef<PublishResult> replyTo)
            implements Command {
    }

    /** Finds the longest cached match of a chain of keys (root first). */
    public record Lookup(String namespace, long[] chain, ActorRef<LookupResult> replyTo) implements Command {
    }

    /**
     * Restores the match of {@code chain} to {@code targets} (one device placement per chain record) unless
     * that is estimated slower than {@code recompute}.
     */
    public record Restore(String namespace, long[] chain, List<DevicePlacement> targets, Duration recompute,
                          ActorRef<RestoreResult> replyTo) implements Command {
    }

    /** The caller gave up a publication's GPU snapshot while it was still being told to retry (B17). */
    public record ReportAbandoned(RecordKey key, String reason) implements Command {
    }

    /** Asks for the node's status. */
    public record GetStatus(ActorRef<CacheStatus> replyTo) implements Command {
    }

    /**
     * Lists records for the admin API, ordered by namespace then key; null {@code namespace} or {@code tier}
     * means all.
     */
    public record ListRecords(String namespace, Tier tier, int offset, int limit, ActorRef<RecordPage> replyTo)
            implements Command {
    }

    /** Describes one record: state, chain and locations. */
    public record DescribeRecord(RecordKey key, ActorRef<RecordDescription> replyTo) implements Command {
    }

    /** Removes one record and its descendants (an operator's eviction). */
    public record EvictRecord(RecordKey key, ActorRef<EvictOutcome> replyTo) implements Command {
    }

    /** Runs the max-age sweep now (B18); replies with what the memory tier removed. */
    public record ExpireNow(ActorRef<ExpiryReport> replyTo) implements Command {
    }

    private record StatusParts(SlotPool.Stats slots, MemoryTier.Stats memory, DiskTier.Stats disk,
                               ActorRef<CacheStatus> replyTo) implements Command {
    }

    private record TierStopped(String name) implements Command {
    }

    /**
     * Spills every parked record to disk, ancestors first, within {@code timeout} (B8); replies with how many were
     * written and skipped. Without a disk tier nothing can be drained.
     */
    public record Drain(Duration timeout, ActorRef<SpillScheduler.DrainReport> replyTo) implements Command {
    }

    private record DiskStarted(Object outcome) implements Command {
    }

    private record ForwardExpiry(dev.selene.actors.api.ExpiryReport report) implements Command {
    }

    /** Records written to disk at most at once by the spill scheduler (the disk's queue depth). */
    public static final int SPILL_IN_FLIGHT_CAP = 4;

    private final CacheConfig config;
    private final IntakeSizing sizing;
    private final RecordContext records;
    private final ActorRef<SlotPool.Command> slotPool;
    private final ActorRef<MemoryTier.Command> memory;
    private final HostMemory host;
    private final CompletableFuture<Void> ready;
    private ActorRef<DiskTier.Command> disk;
    private ActorRef<SpillScheduler.Command> spill;

    /**
     * The guardian of a node. {@code copier} is the caller's: the node registers its host mapping with it but
     * does not close it.
     */
    /** The record I/O of a disk tier: real O_DIRECT files, transfers fanned out on the blocking executor. */
    public static final java.util.function.Function<Executor, RecordIo> DEFAULT_RECORD_IO =
            io -> DirectRecordIo.create(io, DirectRecordIo.DEFAULT_TRANSFERS_PER_RECORD);

    /**
     * The guardian of a node over {@code host}, the slot mapping sized by {@code sizing} (allocated by the caller,
     * off the actors' dispatcher: zeroing gigabytes blocks). {@code copier} is the caller's: the node registers
     * its host mapping with it but does not close it. {@code ready} completes once every tier can serve (the disk
     * tier has recovered), or exceptionally with the one-line reason the node could not start. Both {@code sizing}
     * and {@code host} are null when the node is disabled or refused.
     */
    public static Behavior<Command> create(CacheConfig config, IntakeSizing sizing, HostMemory host,
                                           DeviceCopier copier, CacheCounters counters, TraceBook traces,
                                           CompletableFuture<Void> ready,
                                           java.util.function.Function<Executor, RecordIo> recordIo) {
        return Behaviors.setup(ctx -> {
            if (!config.enabled()) {
                ctx.getLog().info("no tier configured (warm size 0, no disk, no pool): the cache is disabled");
                ready.complete(null);
                return disabled(counters);
            }
            if (config.poolEnabled()) {
                ready.completeExceptionally(new IllegalArgumentException(config.warmBytes() > 0
                        ? "a shared pool with a warm tier is refused (B7): set the warm size to 0 for pool mode"
                        : "the shared pool tier is not available in this build; configure a warm tier or a disk"));
                return Behaviors.stopped();
            }
            return new HostCache(ctx, config, sizing, host, copier, counters, traces, ready, recordIo);
        });
    }

    private HostCache(ActorContext<Command> ctx, CacheConfig config, IntakeSizing sizing, HostMemory host,
                      DeviceCopier copier, CacheCounters counters, TraceBook traces, CompletableFuture<Void> ready,
                      java.util.function.Function<Executor, RecordIo> recordIoFactory) {
        super(ctx);
        this.config = config;
        this.ready = ready;
        this.sizing = sizing;
        if (sizing.warning() != null) {
            ctx.getLog().warn(sizing.warning());
        }
        this.host = host;
        copier.register(host);
        this.slotPool = ctx.spawn(SlotPool.create(sizing.totalSlots(), sizing.slots(), traces), "slot-pool");
        this.records = new RecordContext(config.layout(), host, copier, slotPool, counters, traces);
        this.memory = ctx.spawn(MemoryTier.create(records, config.memoryOnly(),
                ExpirySettings.of(config.maxAge())), "memory-tier");
        ctx.watchWith(slotPool, new TierStopped("slot-pool"));
        ctx.watchWith(memory, new TierStopped("memory-tier"));
        ctx.getLog().info("host cache up: layout {}, {} slots of {} bytes ({} warm + {} intake), device {}",
                config.layout().name(), sizing.totalSlots(), config.layout().slotBytes(), sizing.warmSlots(),
                sizing.slots(), copier.name());
        if (config.diskDir() != null) {
            Executor io = ctx.getSystem().dispatchers().lookup(DispatcherSelector.fromConfig(BLOCKING_DISPATCHER));
            RecordIo recordIo = recordIoFactory.apply(io);
            ActorRef<Command> self = ctx.getSelf();
            this.disk = ctx.spawn(DiskTier.create(Path.of(config.diskDir()), config.diskBytes(), config.layout(), host,
                    recordIo, io, counters, traces, config.maxAge(), outcome -> self.tell(new DiskStarted(outcome))),
                    "disk-tier",
                    DispatcherSelector.fromConfig(BLOCKING_DISPATCHER));
        } else {
            ready.complete(null);
        }
    }

    /** The dispatcher of blocking work (disk I/O), from {@code reference.conf}. */
    public static final String BLOCKING_DISPATCHER = "selene.blocking-dispatcher";

    private Behavior<Command> onDiskStarted(Object outcome) {
        if (outcome instanceof Throwable failure) {
            getContext().getLog().error("disk tier could not start: {}", failure.getMessage());
            ready.completeExceptionally(failure);
            return Behaviors.stopped();
        }
        DiskTier.Recovery recovery = (DiskTier.Recovery) outcome;
        getContext().watchWith(disk, new TierStopped("disk-tier"));
        // Records the memory tier expires are as unused on disk: their files go too (B18).
        memory.tell(new MemoryTier.AttachExpiryListener(getContext().messageAdapter(
                dev.selene.actors.api.ExpiryReport.class, r -> new ForwardExpiry(r))));
        List<RecordKey> committed = recovery.records().stream().map(RecordSpec::key).toList();
        this.spill = getContext().spawn(SpillScheduler.create(memory, disk, slotPool, committed, SPILL_IN_FLIGHT_CAP,
                records.counters(), records.traces()), "spill-scheduler");
        getContext().watchWith(spill, new TierStopped("spill-scheduler"));
        ready.complete(null);
        return this;
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Command.class, this::onCommand)
                .onSignal(PostStop.class, s -> onStop())
                .build();
    }

    private Behavior<Command> onCommand(Command command) {
        switch (command) {
            case Publish p -> onPublish(p);
            case Lookup l -> onLookup(l);
            case Restore r -> getContext().spawnAnonymous(RestoreTask.create(records, memory, disk, r.namespace(),
                    r.chain(), r.targets(), r.recompute(), r.replyTo()));
            case Drain d -> onDrain(d);
            case ForwardExpiry f -> {
                if (disk != null) {
                    disk.tell(new DiskTier.ExpiredElsewhere(f.report()));
                }
            }
            case DiskStarted d -> {
                return onDiskStarted(d.outcome());
            }
            case ReportAbandoned a -> onAbandoned(records.counters(), records.traces(), a);
            case GetStatus g -> onGetStatus(g);
            case StatusParts s -> s.replyTo().tell(status(s));
            case ListRecords l -> onListRecords(l);
            case DescribeRecord d -> memory.tell(new MemoryTier.DescribeRecord(d.key(), d.replyTo()));
            case EvictRecord e -> memory.tell(new MemoryTier.EvictRecord(e.key(), e.replyTo()));
            case ExpireNow x -> {
                memory.tell(new MemoryTier.ExpireNow(x.replyTo()));
                if (disk != null) {
                    disk.tell(new DiskTier.ExpireNow(null));
                }
            }
            case TierStopped t -> {
                // The tiers' state (slot ownership, the index) cannot be rebuilt from nothing: stop the node
                // rather than serve from an inconsistent pool.
                getContext().getLog().error("{} stopped after a failure; stopping the node", t.name());
                return Behaviors.stopped();
            }
        }
        return this;
    }

    private void onLookup(Lookup l) {
        if (disk == null) {
            memory.tell(new MemoryTier.Lookup(l.namespace(), l.chain(), l.replyTo()));
        } else {
            getContext().spawnAnonymous(LookupTask.create(memory, disk, l.namespace(), l.chain(),
                    config.layout().tokensPerRecord(), records.counters(), l.replyTo()));
        }
    }

    private void onDrain(Drain d) {
        if (spill == null) {
            getContext().getLog().info("drain asked for, but there is no disk tier to drain to");
            d.replyTo().tell(new SpillScheduler.DrainReport(0, 0, false));
        } else {
            spill.tell(new SpillScheduler.Drain(d.timeout(), d.replyTo()));
        }
    }

    private void onPublish(Publish p) {
        int slots = p.spec().slots(config.layout());
        if (!SlotAccounting.fits(slots, sizing.totalSlots(), sizing.slots(), SlotAccounting.Purpose.PUBLISH)) {
            int max = SlotAccounting.maxGrant(sizing.totalSlots(), sizing.slots(), SlotAccounting.Purpose.PUBLISH);
            records.traces().append(p.spec().key(), "HostCache", "Publish -> Oversize " + slots + " > " + max);
            records.reply(p.replyTo(), new PublishResult.Oversize(slots, max));
            return;
        }
        memory.tell(new MemoryTier.Publish(p.spec(), p.snapshot(), p.replyTo()));
    }

    private void onListRecords(ListRecords l) {
        if (l.tier() == null || l.tier() == Tier.MEMORY) {
            memory.tell(new MemoryTier.ListRecords(l.namespace(), l.offset(), l.limit(), l.replyTo()));
        } else {
            l.replyTo().tell(RecordPage.empty(l.offset()));
        }
    }

    private static void onAbandoned(CacheCounters counters, TraceBook traces, ReportAbandoned a) {
        counters.increment("abandoned." + a.reason());
        if (traces != null) {
            traces.append(a.key(), "HostCache", "Abandoned by the caller (" + a.reason() + ")");
        }
    }

    private void onGetStatus(GetStatus g) {
        Duration timeout = Duration.ofSeconds(5);
        var scheduler = getContext().getSystem().scheduler();
        CompletionStage<SlotPool.Stats> slots = AskPattern.ask(slotPool, SlotPool.GetStats::new, timeout, scheduler);
        CompletionStage<MemoryTier.Stats> mem = AskPattern.ask(memory, MemoryTier.GetStats::new, timeout, scheduler);
        CompletionStage<DiskTier.Stats> dsk = disk == null ? CompletableFuture.completedFuture(null)
                : AskPattern.ask(disk, DiskTier.GetStats::new, timeout, scheduler);
        getContext().pipeToSelf(slots.thenCombine(mem, (s, m) -> new StatusParts(s, m, null, g.replyTo()))
                        .thenCombine(dsk, (p, d) -> new StatusParts(p.slots(), p.memory(), d, p.replyTo())),
                (parts, failure) -> parts != null ? parts : new StatusParts(null, null, null, g.replyTo()));
    }

    private CacheStatus status(StatusParts s) {
        Map<String, Long> counters = records.counters().snapshot();
        if (s.slots() == null || s.memory() == null) {
            return new CacheStatus(true, sizing.totalSlots(), sizing.slots(), -1, -1, -1, -1, counters, null);
        }
        return new CacheStatus(true, s.slots().total(), s.slots().intake(), s.slots().free(), s.slots().clean(),
                s.memory().residentRecords(), s.memory().inFlight(), counters, s.disk() == null ? null
                : new dev.selene.actors.api.DiskStatus(s.disk().records(), s.disk().bytes(), s.disk().capacityBytes(),
                        s.disk().writesInFlight(), s.disk().readBytesPerSecond(), s.disk().readSamples()));
    }

    private Behavior<Command> onStop() {
        host.close();
        return this;
    }

    private static Behavior<Command> disabled(CacheCounters counters) {
        return Behaviors.receive(Command.class)
                .onMessage(Publish.class, p -> {
                    counters.increment("publish.disabled");
                    p.replyTo().tell(new PublishResult.Disabled());
                    return Behaviors.same();
                })
                .onMessage(Lookup.class, l -> {
                    l.replyTo().tell(LookupResult.none());
                    return Behaviors.same();
                })
                .onMessage(Restore.class, r -> {
                    r.replyTo().tell(RestoreResult.of(RestoreResult.Outcome.DISABLED, "no tier is configured"));
                    return Behaviors.same();
                })
                .onMessage(ReportAbandoned.class, a -> {
                    onAbandoned(counters, null, a);
                    return Behaviors.same();
                })
                .onMessage(ListRecords.class, l -> {
                    l.replyTo().tell(RecordPage.empty(l.offset()));
                    return Behaviors.same();
                })
                .onMessage(DescribeRecord.class, d -> {
                    d.replyTo().tell(RecordDescription.absent(d.key()));
                    return Behaviors.same();
                })
                .onMessage(EvictRecord.class, e -> {
                    e.replyTo().tell(new EvictOutcome(EvictOutcome.Result.NOT_FOUND, 0));
                    return Behaviors.same();
                })
                .onMessage(ExpireNow.class, x -> {
                    x.replyTo().tell(new ExpiryReport(Tier.MEMORY, false, List.of()));
                    return Behaviors.same();
                })
                .onMessage(Drain.class, d -> {
                    d.replyTo().tell(new SpillScheduler.DrainReport(0, 0, false));
                    return Behaviors.same();
                })
                .onMessage(GetStatus.class, g -> {
                    g.replyTo().tell(new CacheStatus(false, 0, 0, 0, 0, 0, 0, counters.snapshot(), null));
                    return Behaviors.same();
                })
                .build();
    }
}
