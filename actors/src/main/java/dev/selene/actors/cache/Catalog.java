package dev.selene.actors.cache;

import dev.selene.actors.api.AbandonReason;
import dev.selene.actors.api.CacheStatus;
import dev.selene.actors.api.DiskStatus;
import dev.selene.actors.api.DrainReport;
import dev.selene.actors.api.Durations;
import dev.selene.actors.api.EvictOutcome;
import dev.selene.actors.api.ExpiryReport;
import dev.selene.actors.api.LookupResult;
import dev.selene.actors.api.PublishResult;
import dev.selene.actors.api.RecordDescription;
import dev.selene.actors.api.RecordPage;
import dev.selene.actors.api.RecordView;
import dev.selene.actors.api.RestoreResult;
import dev.selene.actors.api.RetryReason;
import dev.selene.actors.api.Tier;
import dev.selene.actors.census.ActorCensus;
import dev.selene.actors.pool.PoolEntry;
import dev.selene.actors.trace.TraceOutcome;
import dev.selene.actors.trace.TraceSource;
import dev.selene.engine.catalog.RecordCatalog;
import dev.selene.engine.config.ByteSize;
import dev.selene.engine.cost.BandwidthEstimator;
import dev.selene.engine.cost.RestoreCost;
import dev.selene.engine.expiry.ExpirySweep;
import dev.selene.engine.index.ChainMatch;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.policy.Policies;
import dev.selene.engine.slots.SlotAccounting;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.DevicePlacement;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The one place that decides: owns the node's {@link RecordCatalog} and the disk read estimator, answers
 * publications, lookups and restores, chooses what is evicted, spilled and expired, and tells the record actors,
 * the slot pool and the disk store what to do. Everything it knows about a record it holds once, in the
 * catalog; the actors it spawns report back and it applies their reports.
 *
 * <p>It is the slot pool's evictor of clean records (keeping the intake free) and listener of pressure. Nothing here polls: a
 * spill plan runs when pressure is reported, when a publication becomes resident, when a write commits or fails,
 * and when a drain starts. The max-age sweep is the only fixed-delay timer, and only when max age is set.
 */
final class Catalog extends AbstractBehavior<Catalog.Command> {

    /** The protocol. */
    sealed interface Command {
    }

    /**
     * Publishes a record; with a positive {@code patience} it may wait in line for slots that long. Its trace events
     * carry {@code correlation}, as do its record actor's.
     */
    record Publish(RecordSpec spec, DevicePlacement snapshot, Duration patience,
                   ActorRef<PublishResult> replyTo, long correlation) implements Command {
    }

    /** Finds the match of a chain across tiers (lookup). */
    record Lookup(String namespace, long[] chain, ActorRef<LookupResult> replyTo) implements Command {
    }

    /**
     * Restores the match of a chain unless recomputing is estimated faster (restore cost). Its trace events carry
     * {@code correlation}, as do its restore task's.
     */
    record Restore(String namespace, long[] chain, List<DevicePlacement> targets, Duration recompute,
                   ActorRef<RestoreResult> replyTo, long correlation) implements Command {
    }

    /** Spills every dirty record, ancestors first, within {@code timeout} (drain on shutdown). */
    record Drain(Duration timeout, ActorRef<DrainReport> replyTo) implements Command {
    }

    /** Lists records (null namespace or tier: all). */
    record ListRecords(String namespace, Tier tier, int offset, int limit, ActorRef<RecordPage> replyTo)
            implements Command {
    }

    /** Describes one record: state, chain, locations. */
    record DescribeRecord(RecordKey key, ActorRef<RecordDescription> replyTo) implements Command {
    }

    /** Removes one record and its descendants from every tier. */
    record EvictRecord(RecordKey key, ActorRef<EvictOutcome> replyTo) implements Command {
    }

    /** Runs a max-age sweep now. */
    record ExpireNow(ActorRef<ExpiryReport> replyTo) implements Command {
    }

    /** The node's figures, with the slot pool's. */
    record GetStatus(SlotPool.Stats slots, ActorRef<CacheStatus> replyTo) implements Command {
    }

    /** Checks the catalog's invariants; replies with the first one broken, or an empty string. */
    record CheckInvariants(ActorRef<String> replyTo) implements Command {
    }

    /**
     * From a record actor: copied in; the record is resident and the publisher is answered here, traced under the
     * publication's {@code correlation}.
     */
    record Resident(RecordSpec spec, SlotList slots, long bytes, ActorRef<PublishResult> replyTo,
                    ActorRef<RecordActor.Command> actor, long correlation) implements Command {
    }

    /** From a record actor, now idle: the publication ended without the record; it holds no slots. */
    record PublicationEnded(RecordKey key, ActorRef<RecordActor.Command> actor) implements Command {
    }

    /** From a record actor, now idle: its file committed. */
    record Committed(RecordKey key, long fileBytes, long nanos, ActorRef<RecordActor.Command> actor)
            implements Command {
    }

    /** From a record actor, now idle: its file could not be written (twice, or the disk is full). */
    record WriteGivenUp(RecordKey key, boolean diskFull, String reason, ActorRef<RecordActor.Command> actor)
            implements Command {
    }

    /** From a record actor, now idle: it was told its parked record was dropped. */
    record Released(ActorRef<RecordActor.Command> actor) implements Command {
    }

    /** From a restore: these pinned records are on the device; release the pins. */
    record Unpin(List<RecordKey> keys) implements Command {
    }

    /** From a restore: the match ending at {@code deepest} was used; {@code fromDisk} were read from disk. */
    record Used(RecordKey deepest, List<RecordKey> fromDisk) implements Command {
    }

    /** From a restore: a record read from disk into {@code slots} (now the catalog's), verified and restored. */
    record AdoptRestored(RecordSpec spec, SlotList slots) implements Command {
    }

    /** From a restore: one wave of reads from {@code tier} moved {@code bytes} in {@code nanos} (restore cost). */
    record ReadSample(Tier tier, long bytes, long nanos) implements Command {
    }

    /** From a restore: the file of {@code key} is gone or quarantined. */
    record FileLost(RecordKey key) implements Command {
    }

    /** From the disk store: what it found at start (or after a restart). */
    record DiskRecovered(DiskStore.Recovery recovery) implements Command {
    }

    /** A lookup or restore, with what the pool holds of the chain beyond this node's own records. */
    private record PoolExtended(Command request, int from, List<PoolEntry> found) implements Command {
    }

    private record PressureReported(SlotPool.Pressure pressure) implements Command {
    }

    private record EvictRequested(SlotPool.Evict request) implements Command {
    }

    private record RecordTerminated(ActorRef<RecordActor.Command> actor) implements Command {
    }

    private record WriteSettled(RecordKey key, Store.WriteReply reply) implements Command {
    }

    private record ReleaseAfterCopy(SlotList slots) implements Command {
    }

    private record LeaseGranted(SlotPool.Granted grant) implements Command {
    }

    /** What the pool can hold, when the pool is the only durable tier: the bound of what this host remembers. */
    private record PoolCapacityKnown(PoolStore.Capacity capacity) implements Command {
    }

    private enum SweepTick implements Command {
        INSTANCE
    }

    private enum DrainTimeout implements Command {
        INSTANCE
    }

    /** Read bandwidth assumed before any sample (restore cost): a conservative NVMe figure. */
    static final double PRIOR_READ_BYTES_PER_SECOND = 1.0e9;
    /** Pool read bandwidth assumed before any sample (restore cost): a conservative figure for a 25 Gb/s network. */
    static final double PRIOR_POOL_BYTES_PER_SECOND = 1.0e9;
    /** The share of the free disk (plus its records) the disk tier takes when its size is more than that. */
    static final double DISK_FILL_FRACTION = 0.95;
    /** How long a lookup waits for the pool's part of a chain; without an answer the match ends at the node's own. */
    static final Duration POOL_FIND_TIMEOUT = Duration.ofSeconds(6);
    /** The most records of a chain asked of the pool at once. */
    static final int POOL_FIND_MAX_RECORDS = 1024;
    /** Half-life with which the read estimate decays back toward the prior between samples. */
    static final long ESTIMATE_HALF_LIFE_NANOS = TimeUnit.SECONDS.toNanos(30);

    /**
     * How many idle record actors the catalog keeps for the next records; one that comes back beyond that is stopped.
     * Enough for the publications a busy node has in flight at once (a few per engine worker), and small beside the
     * node's memory (an idle actor holds well under a few KiB).
     */
    static final int IDLE_RECORD_ACTORS_KEPT = 256;

    /**
     * The record actor working for a record, the {@code ticket} of its assignment (its messages' generation) and,
     * while it publishes, who waits for it and the slots it leases.
     */
    private record Live(ActorRef<RecordActor.Command> actor, long ticket, ActorRef<PublishResult> replyTo,
                        SlotList lease) {
    }

    /** What the catalog is started with; {@code policy} names the order in which memory drops records. */
    record Settings(long diskCapacityBytes, int spillInFlightCap, Duration maxAge, LongSupplier clock,
                    Runnable onReady, String policy) {

        /** Settings with the default policy, LRU. */
        Settings(long diskCapacityBytes, int spillInFlightCap, Duration maxAge, LongSupplier clock,
                 Runnable onReady) {
            this(diskCapacityBytes, spillInFlightCap, maxAge, clock, onReady, Policies.DEFAULT);
        }
    }

    private final RecordContext records;
    private final TraceSource origin;
    private final ActorRef<SlotPool.Command> slotPool;
    /** Where spills go: the disk store, else the pool store, else null (memory only). */
    private final ActorRef<Store.Command> durable;
    /** Whether the durable store is a disk (it scans at start); otherwise it is the pool. */
    private final boolean diskTier;
    /** The pool store, or null without a pool. */
    private final ActorRef<Store.Command> pool;
    private final RecordCatalog catalog;
    private final BandwidthEstimator readEstimate;
    private final BandwidthEstimator poolEstimate;
    private final Settings settings;
    private final TimerScheduler<Command> timers;
    private final Map<RecordKey, Live> live = new HashMap<>();
    /** Record actors waiting for a record, the most recently used first. */
    private final ArrayDeque<ActorRef<RecordActor.Command>> idle = new ArrayDeque<>();
    private final ActorRef<SlotPool.Granted> grants;
    private long tickets;
    private long reportedClean;
    private long targetSlots;
    /** The slot pool's last pressure report: why spills are planned (named in each record's trace). */
    private SlotPool.Pressure pressure;
    private boolean recovered;
    private ActorRef<DrainReport> drainReplyTo;
    private int drainWritten;
    private int drainSkipped;
    private long restores;
    /** When a full disk was last said at ERROR (0: never). */
    private long diskFullSaidAt;

    /** The catalog of a node; {@code disk} and {@code pool} are null without those tiers. */
    static Behavior<Command> create(RecordContext records, ActorRef<Store.Command> disk,
                                    ActorRef<Store.Command> pool, Settings settings) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            if (settings.maxAge() != null) {
                timers.startTimerWithFixedDelay(SweepTick.INSTANCE, Duration.ofNanos(
                        ExpirySweep.SWEEP_INTERVAL_NANOS));
            }
            return new Catalog(ctx, timers, records, disk, pool, settings);
        }));
    }

    private Catalog(ActorContext<Command> ctx, TimerScheduler<Command> timers, RecordContext records,
                    ActorRef<Store.Command> disk, ActorRef<Store.Command> pool, Settings settings) {
        super(ctx);
        this.origin = TraceSource.of("Catalog", ctx);
        this.timers = timers;
        this.records = records;
        this.slotPool = records.slotPool();
        this.durable = disk != null ? disk : pool;
        this.diskTier = disk != null;
        this.pool = pool;
        this.settings = settings;
        // With the pool as its only durable tier, a node remembers of what it retired at most what the pool's
        // managers can hold (they say so when they join); past that it forgets its oldest retired records (their
        // copies stay in the pool, and a lookup finds them through the directory). Until a manager has said, nothing
        // is retired.
        long capacity = disk != null ? settings.diskCapacityBytes() : 0;
        this.catalog = new RecordCatalog(records.layout(), durable != null, capacity, settings.spillInFlightCap(),
                settings.clock(), Policies.create(settings.policy()));
        if (disk == null && pool != null) {
            pool.tell(new PoolStore.WatchCapacity(ctx.messageAdapter(PoolStore.Capacity.class,
                    PoolCapacityKnown::new)));
        }
        this.readEstimate = new BandwidthEstimator("disk", PRIOR_READ_BYTES_PER_SECOND, ESTIMATE_HALF_LIFE_NANOS);
        this.poolEstimate = new BandwidthEstimator("pool", PRIOR_POOL_BYTES_PER_SECOND, ESTIMATE_HALF_LIFE_NANOS);
        this.grants = ctx.messageAdapter(SlotPool.Granted.class, LeaseGranted::new);
        slotPool.tell(new SlotPool.Attach(ctx.messageAdapter(SlotPool.Evict.class, EvictRequested::new),
                durable == null ? null : ctx.messageAdapter(SlotPool.Pressure.class, PressureReported::new)));
        this.recovered = disk == null;
        if (disk != null) {
            records.metrics().diskCapacity(settings.diskCapacityBytes());
            records.metrics().readEstimate(PRIOR_READ_BYTES_PER_SECOND);
        }
        records.metrics().catalog(catalog, durableTier());
        if (recovered) {
            settings.onReady().run();
        }
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder().onMessage(Command.class, this::onCommand).build();
    }

    private Behavior<Command> onCommand(Command command) {
        records.faults().beforeHandling("Catalog", command);
        switch (command) {
            case Publish p -> onPublish(p);
            case Lookup l -> withPool(l, l.namespace(), l.chain());
            case Restore r -> withPool(r, r.namespace(), r.chain());
            case PoolExtended e -> onExtended(e);
            case Drain d -> onDrain(d);
            case ListRecords l -> l.replyTo().tell(page(l));
            case DescribeRecord d -> d.replyTo().tell(describe(d.key()));
            case EvictRecord e -> e.replyTo().tell(evictByOperator(e.key()));
            case ExpireNow x -> x.replyTo().tell(sweep());
            case SweepTick t -> sweep();
            case GetStatus g -> g.replyTo().tell(status(g.slots()));
            case CheckInvariants c -> onCheckInvariants(c);
            case Resident r -> onResident(r);
            case PublicationEnded e -> {
                catalog.publicationEnded(e.key());
                live.remove(e.key());
                recordActorFree(e.actor());
                plan(); // chains that waited for it may now be written, or dropped as orphans
            }
            case Committed c -> {
                recordActorFree(c.actor());
                onCommitted(c.key(), c.fileBytes(), c.nanos());
            }
            case Released r -> recordActorFree(r.actor());
            case WriteGivenUp g -> {
                recordActorFree(g.actor());
                if (g.diskFull() && diskTier) {
                    onDiskFull(g.key(), g.reason());
                } else {
                    onGivenUp(g.key(), g.reason());
                }
            }
            case Unpin u -> u.keys().forEach(catalog::unpin);
            case Used u -> catalog.used(u.deepest(), u.fromDisk());
            case AdoptRestored a -> onAdopt(a);
            case ReadSample s -> onReadSample(s);
            case FileLost f -> {
                apply(catalog.fileLost(f.key()), "Dropped: its file is gone or failed validation");
                plan();
            }
            case DiskRecovered d -> onRecovered(d.recovery());
            case PressureReported p -> {
                targetSlots = p.pressure().deficitSlots();
                pressure = p.pressure();
                plan();
            }
            case EvictRequested e -> onEvict(e.request());
            case RecordTerminated t -> onTerminated(t);
            case WriteSettled w -> onSettled(w);
            case ReleaseAfterCopy r -> slotPool.tell(new SlotPool.Release(r.slots(), false));
            case LeaseGranted g -> onGranted(g.grant());
            case PoolCapacityKnown p -> onPoolCapacity(p.capacity());
            case DrainTimeout t -> finishDrain(true);
        }
        reportClean();
        records.metrics().catalog(catalog, durableTier());
        return this;
    }

    // ---- publication ----

    private void onPublish(Publish p) {
        RecordKey key = p.spec().key();
        long correlation = p.correlation();
        switch (catalog.admit(p.spec())) {
            case IN_FLIGHT -> {
                records.traces().append(key, origin, correlation, "Publish: another publication is in flight",
                        TraceOutcome.retry(RetryReason.INFLIGHT));
                records.reply(p.replyTo(), new PublishResult.Retry(RetryReason.INFLIGHT));
            }
            case PRESENT -> {
                records.traces().append(key, origin, correlation, "Publish: already here (last use refreshed)",
                        TraceOutcome.PRESENT);
                records.reply(p.replyTo(), new PublishResult.Present());
            }
            case ADMITTED -> {
                long ticket = ++tickets;
                ActorRef<RecordActor.Command> actor = recordActor();
                actor.tell(new RecordActor.Publish(p.spec(), p.snapshot(), p.patience(),
                        new SlotPool.LeaseNotice(ticket, grants), p.replyTo(), correlation));
                live.put(key, new Live(actor, ticket, p.replyTo(), null));
            }
        }
    }

    /** An idle record actor: one kept from an earlier record, or a new one (watched: its failure is handled). */
    private ActorRef<RecordActor.Command> recordActor() {
        ActorRef<RecordActor.Command> actor = idle.pollFirst();
        if (actor == null) {
            actor = getContext().spawnAnonymous(RecordActor.create(records, getContext().getSelf(), stores()),
                    ActorCensus.MAILBOX);
            getContext().watchWith(actor, new RecordTerminated(actor));
        }
        return actor;
    }

    /** {@code actor} has no record any more: kept for the next one, or stopped when enough are kept. */
    private void recordActorFree(ActorRef<RecordActor.Command> actor) {
        if (idle.size() < IDLE_RECORD_ACTORS_KEPT) {
            idle.addFirst(actor);
        } else {
            getContext().unwatch(actor);
            getContext().stop(actor);
        }
    }

    private void onGranted(SlotPool.Granted g) {
        Live f = live.get(g.key());
        if (f != null && f.ticket() == g.ticket()) {
            live.put(g.key(), new Live(f.actor(), f.ticket(), f.replyTo(), g.slots()));
        } else {
            // Granted to a publication whose actor has failed meanwhile (its end reached the catalog first): the
            // actor may have started its copy into them before it failed.
            records.traces().append(g.key(), origin, "Slots granted to a failed publication; released");
            releaseAfterCopies(g.slots());
        }
    }

    /**
     * Releases {@code slots} of a failed publication once every device copy in flight now has ended: its actor may
     * have started a copy into them before it failed, and it no longer reports. A failed actor starts no copy, so
     * waiting for the copies running now covers its; the node's other copies only delay the release.
     */
    private void releaseAfterCopies(SlotList slots) {
        getContext().pipeToSelf(records.transfers().inFlight(), (v, e) -> new ReleaseAfterCopy(slots));
    }

    private void onResident(Resident r) {
        RecordKey key = r.spec().key();
        catalog.resident(r.spec(), r.slots());
        if (durable == null) {
            live.remove(key);
            recordActorFree(r.actor());
        } else {
            Live f = live.get(key);
            live.put(key, new Live(r.actor(), f == null ? 0 : f.ticket(), null, null));
        }
        records.traces().append(key, origin, r.correlation(), "Resident (dirty) in {} slots", r.slots().count(),
                TraceOutcome.STORED);
        records.reply(r.replyTo(), new PublishResult.Stored(r.bytes()));
        plan();
    }

    private void onTerminated(RecordTerminated t) {
        // Only a failure stops a watched record actor (one stopped for being one too many is unwatched first). It
        // holds at most one record: a rare event, so a scan finds it.
        idle.remove(t.actor());
        RecordKey key = null;
        for (Map.Entry<RecordKey, Live> e : live.entrySet()) {
            if (e.getValue().actor().equals(t.actor())) {
                key = e.getKey();
                break;
            }
        }
        if (key == null) {
            return; // it failed between records
        }
        Live f = live.remove(key);
        records.metrics().recordActorFailed();
        getContext().getLog().warn("record actor for {} failed; its record is released", key);
        onFailed(key, f);
    }

    private void onFailed(RecordKey key, Live f) {
        RecordCatalog.State state = catalog.state(key);
        if (state == RecordCatalog.State.IN_FLIGHT) {
            records.traces().append(key, origin, "RecordActor failed while publishing; slots released once the copies in flight end");
            slotPool.tell(new SlotPool.Cancel(key, SlotAccounting.Purpose.PUBLISH, f.ticket()));
            if (f.lease() != null) {
                releaseAfterCopies(f.lease());
            }
            catalog.publicationEnded(key);
            records.metrics().abandoned(AbandonReason.RECORD_ACTOR_FAILED);
            records.reply(f.replyTo(), new PublishResult.Failed(AbandonReason.RECORD_ACTOR_FAILED.label(),
                    "the record's actor stopped unexpectedly"));
        } else if (state == RecordCatalog.State.BEING_WRITTEN) {
            // Its write may still be reading the slots: wait for the store to say how it ended.
            records.traces().append(key, origin, "RecordActor failed while writing; waiting for the write");
            durable.tell(new Store.Settle(key, getContext().messageAdapter(Store.WriteReply.class,
                    r -> new WriteSettled(r.key(), r))));
        } else {
            records.traces().append(key, origin, "RecordActor failed while parked; the record stays dirty");
        }
    }

    private void onSettled(WriteSettled w) {
        if (catalog.state(w.key()) != RecordCatalog.State.BEING_WRITTEN || live.containsKey(w.key())) {
            return;
        }
        switch (w.reply()) {
            case Store.Written ok -> onCommitted(w.key(), ok.bytes(), ok.nanos());
            case Store.WriteFailed f -> onGivenUp(w.key(), f.reason());
            case Store.NotWritten n -> {
                // The write never ran: the record is dirty as before and is planned again (with a new actor).
                catalog.writeNeverRan(w.key());
                records.traces().append(w.key(), origin, "Its write never ran; dirty again");
                plan();
            }
        }
    }

    // ---- spill ----

    private void plan() {
        if (durable == null || !recovered) {
            return;
        }
        long target = drainReplyTo != null ? Long.MAX_VALUE : targetSlots;
        if (target <= catalog.writingSlots() && drainReplyTo == null) {
            return;
        }
        RecordCatalog.SpillPlan plan = catalog.planSpills(target);
        records.metrics().evicted(durableTier(), plan.removal().files().size());
        apply(plan.removal(), "File evicted from the disk for room");
        if (!plan.orphans().removed().isEmpty()) {
            records.metrics().droppedOrphans(plan.orphans().removed().size());
            if (drainReplyTo != null) {
                drainSkipped += plan.orphans().removed().size();
            }
            apply(plan.orphans(), "Dropped: its chain hangs from an ancestor that is in no tier, so it can never be "
                    + "written nor matched");
        }
        String why = plan.start().isEmpty() ? null : spillReason();
        for (RecordCatalog.SpillStart s : plan.start()) {
            RecordKey key = s.spec().key();
            Live f = live.get(key);
            if (f == null) {
                f = new Live(recordActor(), ++tickets, null, null);
                live.put(key, f);
            }
            records.traces().append(key, origin, "Spill planned: " + why + "; " + catalog.writesInFlight()
                    + " writes in flight");
            records.metrics().spillStarted(catalog.writesInFlight());
            f.actor().tell(new RecordActor.Spill(f.ticket(), s.spec(), s.slots()));
        }
        if (drainReplyTo != null && catalog.writesInFlight() == 0) {
            finishDrain(false);
        }
    }

    /** Why the records of a plan are written, in words for their traces. */
    private String spillReason() {
        if (drainReplyTo != null) {
            return "a drain writes every dirty record";
        }
        if (pressure == null) {
            return "memory pressure";
        }
        return "memory pressure (free + clean slots are " + pressure.deficitSlots()
                + " short of two intakes plus the waiting requests: " + pressure.freeSlots() + " free, "
                + pressure.cleanSlots() + " clean); written coldest first, parents before children";
    }

    private void onCommitted(RecordKey key, long fileBytes, long nanos) {
        live.remove(key);
        switch (catalog.committed(key, fileBytes)) {
            case COMMITTED -> {
                if (drainReplyTo != null) {
                    drainWritten++;
                }
                records.metrics().spillCommitted();
                records.traces().append(key, origin, 0, "Clean (file committed)", TraceOutcome.SPILLED);
            }
            case PARENT_GONE -> {
                durable.tell(new Store.Delete(List.of(key)));
                records.traces().append(key, origin, "Written, then deleted: its parent's file is gone; dirty "
                        + "again");
            }
            case RECORD_GONE -> {
                durable.tell(new Store.Delete(List.of(key)));
                records.traces().append(key, origin, "Written, then deleted: the record left memory");
            }
        }
        plan();
    }

    private void onGivenUp(RecordKey key, String reason) {
        live.remove(key);
        records.metrics().spillGivenUp();
        records.traces().append(key, origin, 0, "Spill given up (" + reason + ")", TraceOutcome.SPILL_GIVEN_UP);
        RecordCatalog.Removal dropped = catalog.writeFailed(key);
        records.metrics().droppedUnwritable(dropped.removed().size());
        if (drainReplyTo != null) {
            drainSkipped += dropped.removed().size(); // dropped, so no longer dirty: counted here or never
        }
        apply(dropped, "Dropped: its file (or an ancestor's) can never be written");
        plan();
    }

    /**
     * A write found the disk full before the tier's size was reached: the tier's size becomes what the disk held,
     * the coldest files make room, and the record is written again (write failures's retry does not apply: a full disk is not
     * a failed record). Said once at ERROR, then at most once a minute.
     */
    private void onDiskFull(RecordKey key, String reason) {
        live.remove(key);
        long before = catalog.diskCapacityBytes();
        RecordCatalog.Removal r = catalog.diskFull(key);
        records.metrics().diskFull(catalog.diskCapacityBytes());
        records.metrics().evicted(Tier.DISK, r.files().size());
        records.traces().append(key, origin, "The disk was full: dirty again, written once room is made");
        long now = settings.clock().getAsLong();
        if (diskFullSaidAt == 0 || now - diskFullSaidAt > TimeUnit.MINUTES.toNanos(1)) {
            diskFullSaidAt = now;
            getContext().getLog().error("the disk tier's disk is full ({}): the tier now holds at most {} (was {}); "
                    + "the coldest files are deleted to make room and writing goes on", reason,
                    ByteSize.format(catalog.diskCapacityBytes()), ByteSize.format(before));
        }
        apply(r, "File evicted: the disk was full");
        plan();
    }

    private void onDrain(Drain d) {
        if (durable == null) {
            getContext().getLog().info("drain asked for, but there is no disk or pool to drain to");
            d.replyTo().tell(new DrainReport(0, 0, false));
            return;
        }
        if (drainReplyTo != null) {
            d.replyTo().tell(new DrainReport(0, 0, false));
            return;
        }
        drainReplyTo = d.replyTo();
        drainWritten = 0;
        drainSkipped = 0;
        timers.startSingleTimer(DrainTimeout.INSTANCE, d.timeout());
        getContext().getLog().info("draining dirty records to the {} (timeout {})", durableTier().label(),
                human(d.timeout()));
        plan();
    }

    private void finishDrain(boolean timedOut) {
        if (drainReplyTo == null) {
            return;
        }
        timers.cancel(DrainTimeout.INSTANCE);
        int skipped = drainSkipped + catalog.dirtyRecords();
        getContext().getLog().info("drain {}: {} records written, {} skipped", timedOut ? "timed out" : "done",
                drainWritten, skipped);
        drainReplyTo.tell(new DrainReport(drainWritten, skipped, timedOut));
        drainReplyTo = null;
    }

    // ---- memory pressure ----

    private void onEvict(SlotPool.Evict request) {
        long cleanBefore = catalog.cleanSlots();
        RecordCatalog.Removal r = catalog.evictClean(request.slots());
        long freed = 0;
        for (SlotList s : r.slots()) {
            freed += s.count();
        }
        records.metrics().evicted(Tier.MEMORY, r.removed().size());
        for (RecordKey k : r.removed()) {
            records.traces().append(k, origin, 0, "Evicted from memory (coldest clean) for an allocation",
                    TraceOutcome.EVICTED);
        }
        // Dropping a leaf can make its parent droppable, and the parent may go in the same pass: first bring the
        // pool's clean count up to date as if nothing had been dropped; Evicted then removes exactly those slots.
        long cleanWithDropped = catalog.cleanSlots() + freed;
        if (cleanWithDropped != reportedClean) {
            slotPool.tell(new SlotPool.CleanChanged((int) (cleanWithDropped - reportedClean)));
        }
        reportedClean = catalog.cleanSlots();
        if (cleanBefore < 0) {
            throw new IllegalStateException("negative clean count");
        }
        request.replyTo().tell(new SlotPool.Evicted(r.slots()));
    }

    /** Carries out a removal: stops the actors of removed records, deletes files, frees slots. */
    private void apply(RecordCatalog.Removal r, String why) {
        if (r.isEmpty()) {
            return;
        }
        for (RecordKey k : r.removed()) {
            records.traces().append(k, origin, why);
            if (catalog.state(k) == null || catalog.state(k) == RecordCatalog.State.DURABLE_ONLY) {
                Live f = live.remove(k);
                if (f != null) {
                    f.actor().tell(new RecordActor.Dropped(f.ticket()));
                }
            }
        }
        if (!r.files().isEmpty()) {
            durable.tell(new Store.Delete(List.copyOf(r.files())));
        }
        reportClean();
        for (SlotList s : r.slots()) {
            slotPool.tell(new SlotPool.Release(s, false));
        }
    }

    private void reportClean() {
        long clean = catalog.cleanSlots();
        if (clean != reportedClean) {
            slotPool.tell(new SlotPool.CleanChanged((int) (clean - reportedClean)));
            reportedClean = clean;
        }
    }

    // ---- lookup and restore ----

    /**
     * Answers a lookup or restore at once when the node's own records cover the chain or there is no pool;
     * otherwise first asks the pool for the rest of the chain ({@link PoolExtended} continues).
     */
    private void withPool(Command request, String namespace, long[] chain) {
        int from = catalog.present(namespace, chain).size();
        if (pool == null || from >= chain.length) {
            answer(request, List.of());
            return;
        }
        List<Long> rest = new ArrayList<>();
        for (int i = from; i < chain.length && rest.size() < POOL_FIND_MAX_RECORDS; i++) {
            rest.add(chain[i]);
        }
        getContext().ask(PoolStore.Found.class, pool, POOL_FIND_TIMEOUT, r -> new PoolStore.Find(namespace, rest, r),
                (found, failure) -> new PoolExtended(request, from, found == null ? List.of() : found.entries()));
    }

    private void onExtended(PoolExtended e) {
        String namespace = e.request() instanceof Lookup l ? l.namespace() : ((Restore) e.request()).namespace();
        long[] chain = e.request() instanceof Lookup l ? l.chain() : ((Restore) e.request()).chain();
        // The node's own part may have changed while the pool answered: its records continue only where they
        // still end.
        boolean joins = catalog.present(namespace, chain).size() == e.from();
        answer(e.request(), joins ? e.found() : List.of());
    }

    private void answer(Command request, List<PoolEntry> fromPool) {
        switch (request) {
            case Lookup l -> l.replyTo().tell(lookup(l.namespace(), l.chain(), fromPool));
            case Restore r -> onRestore(r, fromPool);
            default -> throw new IllegalArgumentException("not a lookup or restore: " + request);
        }
    }

    /** One record of a match and the tier it comes from. */
    private record Matched(RecordSpec spec, Tier tier) {
    }

    /**
     * The match of a chain: the node's own records, then the pool's, up to the deepest record with a row (lookup);
     * empty with the reason when nothing matches.
     */
    private List<Matched> match(String namespace, long[] chain, List<PoolEntry> fromPool) {
        List<Matched> present = new ArrayList<>();
        for (RecordCatalog.Located l : catalog.present(namespace, chain)) {
            present.add(new Matched(l.spec(), tier(l.where())));
        }
        for (PoolEntry p : fromPool) {
            present.add(new Matched(p.spec(), Tier.POOL));
        }
        int depth = ChainMatch.depth(present.size(), i -> true, i -> present.get(i).spec().hasRow());
        return present.subList(0, depth);
    }

    private String missReason(String namespace, long[] chain) {
        String local = catalog.match(namespace, chain).missReason();
        return pool == null ? local : local + " (nor held by the pool)";
    }

    private LookupResult lookup(String namespace, long[] chain, List<PoolEntry> fromPool) {
        List<Matched> m = match(namespace, chain, fromPool);
        long tokens = (long) m.size() * records.layout().tokensPerRecord();
        records.metrics().lookup(!m.isEmpty(), tokens);
        if (m.isEmpty()) {
            return LookupResult.miss(missReason(namespace, chain));
        }
        List<LookupResult.Located> located = new ArrayList<>(m.size());
        for (Matched l : m) {
            located.add(new LookupResult.Located(l.spec().key(), l.spec().hasRow(), l.tier()));
        }
        return new LookupResult(located, tokens, "");
    }

    private void onRestore(Restore r, List<PoolEntry> fromPool) {
        records.metrics().restoreRequested((long) r.chain().length * records.layout().tokensPerRecord());
        List<Matched> m = match(r.namespace(), r.chain(), fromPool);
        if (m.isEmpty()) {
            records.metrics().restoreMissed();
            r.replyTo().tell(RestoreResult.of(RestoreResult.Outcome.MISS, missReason(r.namespace(), r.chain())));
            return;
        }
        if (r.targets().size() < m.size()) {
            records.metrics().restoreFailed();
            r.replyTo().tell(RestoreResult.of(RestoreResult.Outcome.FAILED, "restore of " + m.size()
                    + " records got only " + r.targets().size() + " device placements"));
            return;
        }
        long diskBytes = 0;
        long poolBytes = 0;
        for (Matched l : m) {
            long bytes = records.layout().recordBytes(l.spec().hasRow());
            if (l.tier() == Tier.DISK) {
                diskBytes += bytes;
            } else if (l.tier() == Tier.POOL) {
                poolBytes += bytes;
            }
        }
        if (diskBytes + poolBytes > 0) {
            long now = settings.clock().getAsLong();
            double diskRate = readEstimate.bytesPerSecond(now);
            double poolRate = poolEstimate.bytesPerSecond(now);
            if (diskBytes > 0) {
                records.metrics().readEstimate(diskRate);
            }
            long estimate = (long) (diskBytes / diskRate * 1e9 + poolBytes / poolRate * 1e9);
            if (RestoreCost.refuse(estimate, r.recompute().toNanos())) {
                records.metrics().restoreRefused();
                r.replyTo().tell(RestoreResult.of(RestoreResult.Outcome.REFUSED, String.format(Locale.ROOT,
                        "reading %d bytes from disk (%.2f GB/s) and %d from the pool (%.2f GB/s) is estimated at "
                                + "%.1f ms > recompute %.1f ms", diskBytes, diskRate / 1e9, poolBytes,
                        poolRate / 1e9, estimate / 1e6, r.recompute().toNanos() / 1e6)));
                return;
            }
        }
        List<RestoreTask.Part> parts = new ArrayList<>(m.size());
        for (Matched l : m) {
            RecordKey key = l.spec().key();
            boolean own = catalog.state(key) != null;
            if (l.tier() == Tier.MEMORY && catalog.pin(key)) {
                records.traces().append(key, origin, r.correlation(), "Pinned for restore", null);
                parts.add(RestoreTask.Part.memory(l.spec(), catalog.slotsOf(key)));
            } else if (own) {
                parts.add(RestoreTask.Part.stored(l.spec(), durable, durableTier(), true));
            } else {
                parts.add(RestoreTask.Part.stored(l.spec(), pool, Tier.POOL, false));
            }
        }
        getContext().spawn(RestoreTask.create(records, getContext().getSelf(), parts, r.targets(),
                r.replyTo(), r.correlation()), "restore-" + (++restores), ActorCensus.MAILBOX);
    }

    private void onAdopt(AdoptRestored a) {
        if (catalog.adoptRestored(a.spec(), a.slots())) {
            records.metrics().promoted();
            records.traces().append(a.spec().key(), origin, "Resident again after a restore from disk");
            plan();
        } else {
            slotPool.tell(new SlotPool.Release(a.slots(), false));
        }
    }

    private void onReadSample(ReadSample s) {
        if (s.bytes() <= 0 || s.nanos() <= 0) {
            return; // a wave that moved nothing tells nothing about bandwidth
        }
        if (s.tier() == Tier.POOL) {
            poolEstimate.sample(s.bytes(), s.nanos(), settings.clock().getAsLong());
            return;
        }
        readEstimate.sample(s.bytes(), s.nanos(), settings.clock().getAsLong());
        records.metrics().readSample(s.bytes(), s.nanos());
        records.metrics().readEstimate(readEstimate.bytesPerSecond(settings.clock().getAsLong()));
    }

    private void onRecovered(DiskStore.Recovery recovery) {
        if (recovered) {
            // A restarted store has scanned the directory again (temporaries deleted, bad files quarantined). The
            // catalog keeps its own view: a write that commits while the scan lists the directory, or a delete the
            // store had not run yet, would make the scan's list wrong in either direction. A file the scan
            // quarantined is forgotten when a read finds it gone.
            getContext().getLog().info("disk store restarted: it found {} record files; the catalog keeps its view",
                    recovery.records().size());
            plan();
            return;
        }
        long recordBytes = 0;
        for (DiskStore.Found f : recovery.records()) {
            recordBytes += f.fileBytes();
        }
        // The filesystem may hold less than the tier was given: the tier then uses what it can (with a margin for
        // temporaries), says so once, and a later full disk lowers it further.
        long fits = (long) ((recovery.usableBytes() + recordBytes) * DISK_FILL_FRACTION);
        if (fits < settings.diskCapacityBytes()) {
            getContext().getLog().warn("selene.disk.size = {} is more than the disk can hold ({} free and {} of "
                    + "records): the disk tier uses {}", ByteSize.format(settings.diskCapacityBytes()),
                    ByteSize.format(recovery.usableBytes()), ByteSize.format(recordBytes), ByteSize.format(fits));
            apply(catalog.limitDiskCapacity(fits), "Deleted at start: the disk holds less than the tier's size");
            records.metrics().diskCapacity(catalog.diskCapacityBytes());
        }
        long wallNow = System.currentTimeMillis();
        List<RecordCatalog.Recovered> found = new ArrayList<>(recovery.records().size());
        for (DiskStore.Found f : recovery.records()) {
            long ageNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, wallNow - f.lastUse().toEpochMilli()));
            found.add(new RecordCatalog.Recovered(f.spec(), f.fileBytes(), ageNanos));
        }
        apply(catalog.recovered(found), "Deleted at start: the disk tier is over its size");
        recovered = true;
        settings.onReady().run();
        plan();
    }

    private void onPoolCapacity(PoolStore.Capacity c) {
        getContext().getLog().info("the pool holds {} of records on {} manager(s): this host remembers at most that "
                + "much of what it retired", ByteSize.format(c.bytes()), c.managers());
        apply(catalog.setDurableCapacity(c.bytes()), "Forgotten by this host: it remembers no more than the pool's "
                + "managers hold (" + ByteSize.format(c.bytes()) + "); the pool keeps its copy");
        plan();
    }

    // ---- expiry and operators ----

    private ExpiryReport sweep() {
        if (settings.maxAge() == null) {
            return new ExpiryReport(Tier.MEMORY, false, List.of());
        }
        RecordCatalog.Removal r = catalog.expire(settings.maxAge().toNanos());
        List<RecordKey> removed = List.copyOf(new LinkedHashSet<>(r.removed()));
        if (!removed.isEmpty()) {
            records.metrics().expired(Tier.MEMORY, r.slots().size());
            records.metrics().expired(durableTier(), r.files().size());
            apply(r, "Expired: unused for longer than max age " + human(settings.maxAge()));
        }
        return new ExpiryReport(Tier.MEMORY, true, removed);
    }

    private EvictOutcome evictByOperator(RecordKey key) {
        RecordCatalog.Eviction e = catalog.evict(key);
        return switch (e.result()) {
            case NOT_FOUND -> new EvictOutcome(EvictOutcome.Result.NOT_FOUND, 0);
            case BUSY -> new EvictOutcome(EvictOutcome.Result.BUSY, 0);
            case EVICTED -> {
                int n = new HashSet<>(e.removal().removed()).size();
                apply(e.removal(), "Evicted by an operator (with its descendants)");
                records.metrics().evictedByOperator(n);
                yield new EvictOutcome(EvictOutcome.Result.EVICTED, n);
            }
        };
    }

    // ---- views ----

    /**
     * Checks the catalog, then has the slot pool check its accounting and that its clean count is the one pushed
     * last (the clean count changes only by this actor's messages, which the check follows in order).
     */
    private void onCheckInvariants(CheckInvariants c) {
        String violation = invariantViolation();
        if (!violation.isEmpty()) {
            c.replyTo().tell(violation);
        } else {
            reportClean();
            slotPool.tell(new SlotPool.CheckInvariants(reportedClean, c.replyTo()));
        }
    }

    private String invariantViolation() {
        try {
            catalog.checkInvariants();
            return "";
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
    }

    /** The tier of a record the catalog holds: memory, or the durable store's. */
    private Tier tier(RecordCatalog.Where where) {
        return where == RecordCatalog.Where.MEMORY ? Tier.MEMORY : durableTier();
    }

    /** The tier spills go to: disk when there is one, else the pool (memory when there is neither). */
    private Tier durableTier() {
        return diskTier ? Tier.DISK : pool != null ? Tier.POOL : Tier.MEMORY;
    }

    /** Where record actors write: the durable store, and the pool besides when the durable store is a disk. */
    private RecordActor.Stores stores() {
        return new RecordActor.Stores(durable, diskTier ? pool : null);
    }

    private RecordView view(RecordCatalog.Info i) {
        String state = i.pins() > 0 && i.state() != RecordCatalog.State.BEING_WRITTEN ? "pinned"
                : i.state().label();
        return new RecordView(i.key(), i.spec().parent(), i.spec().hasRow(), tier(i.where()), state, i.slots(),
                records.layout().recordBytes(i.spec().hasRow()), TimeUnit.NANOSECONDS.toMillis(i.idleNanos()),
                i.onDisk());
    }

    private RecordPage page(ListRecords l) {
        RecordCatalog.Where where = l.tier() == null ? null : l.tier() == Tier.MEMORY ? RecordCatalog.Where.MEMORY
                : l.tier() == durableTier() ? RecordCatalog.Where.DISK : null;
        if (l.tier() != null && where == null) {
            return RecordPage.empty(l.offset());
        }
        List<RecordCatalog.Info> all = catalog.list(l.namespace(), where);
        int from = Math.min(Math.max(0, l.offset()), all.size());
        int to = Math.min(all.size(), from + Math.max(0, l.limit()));
        List<RecordView> views = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            views.add(view(all.get(i)));
        }
        return new RecordPage(all.size(), l.offset(), views);
    }

    private RecordDescription describe(RecordKey key) {
        RecordCatalog.Description d = catalog.describe(key);
        if (d == null) {
            return RecordDescription.absent(key);
        }
        if (d.record().state() == RecordCatalog.State.IN_FLIGHT) {
            return new RecordDescription(key, "in_flight", null, List.of(), false);
        }
        List<RecordView> chain = new ArrayList<>(d.chain().size());
        d.chain().forEach(i -> chain.add(view(i)));
        return new RecordDescription(key, d.record().where() == RecordCatalog.Where.MEMORY ? "resident"
                : diskTier ? "on_disk" : "in_pool",
                view(d.record()), List.copyOf(chain), d.complete());
    }

    private CacheStatus status(SlotPool.Stats s) {
        RecordCatalog.Stats c = catalog.stats();
        DiskStatus diskStatus = !diskTier ? null : new DiskStatus(c.diskRecords(), c.diskBytes(),
                catalog.diskCapacityBytes(), c.writing(), readEstimate.bytesPerSecond(settings.clock().getAsLong()),
                readEstimate.samples());
        return new CacheStatus(true, s.total(), s.intake(), s.free(), s.clean(), c.residentRecords(), c.inFlight(),
                records.metrics().counters().snapshot(), diskStatus, records.metrics().node());
    }

    private static String human(Duration d) {
        return Durations.human(d);
    }
}
