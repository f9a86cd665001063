package dev.selene.actors.cache;

import dev.selene.actors.store.Store;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.EvictOutcome;
import dev.selene.actors.value.ExpiryReport;
import dev.selene.actors.value.LookupResult;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RecordDescription;
import dev.selene.actors.value.RecordPage;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.Tier;
import dev.selene.engine.expiry.ExpirySweep;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.policy.Policies;
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
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The one place that decides: owns the node's {@link dev.selene.engine.catalog.RecordCatalog}, its host slots (the
 * {@link SlotLedger}: free list and the requests waiting for slots) and the read estimators; answers publications,
 * lookups and restores, chooses what is evicted, spilled and expired, and tells the record actors and the stores
 * what to do. Everything it knows about a record it holds once; the actors it spawns report back and it applies
 * their reports.
 *
 * <p>This class is the protocol and the dispatch; each concern is a part it delegates to: {@link Publications}
 * (publications, their slots, the record actors), {@link Spills} (spill plans, drain, pressure, removals),
 * {@link Restores} (lookup, restore, costing, staging), {@link Recovery} (what the stores found at start),
 * {@link Operators} (expiry and operators' evictions) and {@link CatalogViews} (listings, status, invariants).
 * Nothing here polls: a spill plan runs when the slots' pressure changes, when a publication becomes resident, when
 * a write commits or fails, and when a drain starts. The max-age sweep is the only fixed-delay timer, and only when
 * max age is set.
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

    /** The node's figures, its slots' included. */
    record GetStatus(ActorRef<CacheStatus> replyTo) implements Command {
    }

    /** Checks the catalog's and its slots' invariants; replies with the first one broken, or an empty string. */
    record CheckInvariants(ActorRef<String> replyTo) implements Command {
    }

    /**
     * From a record actor: copied in; the record is resident and the publisher is answered here, traced under the
     * publication's {@code correlation}.
     */
    record Resident(RecordSpec spec, SlotList slots, long bytes, ActorRef<PublishResult> replyTo,
                    ActorRef<RecordActor.Command> actor, long correlation) implements Command {
    }

    /**
     * From a record actor, now idle: the publication failed before the record was resident (its copy has ended or
     * never started); the catalog frees the slots it granted.
     */
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

    /** From a restore: it no longer reads these records' durable copies (pinned when it was matched). */
    record UnpinFiles(List<RecordKey> keys) implements Command {
    }

    /**
     * From a restore that ended: release these memory pins and file pins, then take the match's use, in that order
     * and in one turn (so that no max-age sweep comes between the pins' release and the use).
     */
    record RestoreEnded(List<RecordKey> unpin, List<RecordKey> unpinFiles, Used used) implements Command {
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

    /**
     * From a restore: staging slots for {@code key}; with {@code waits} the request waits in line until granted or
     * cancelled by {@code request}, otherwise it is answered at once. Always answered.
     */
    record Stage(RecordKey key, int slots, boolean waits, long request, ActorRef<StageReply> replyTo)
            implements Command {
    }

    /** From a restore: its waiting staging request {@code request} for {@code key} gives up (told not staged). */
    record CancelStaging(RecordKey key, long request) implements Command {
    }

    /** From a restore: staging slots it no longer needs. */
    record ReleaseStaging(SlotList slots) implements Command {
    }

    /** The answer to {@link Stage}. */
    sealed interface StageReply {
    }

    /** The staging slots granted, in record order. */
    record Staged(SlotList slots) implements StageReply {
    }

    /** No staging: short of slots, oversize, or cancelled while waiting. */
    record NotStaged(String why) implements StageReply {
    }

    /** From the disk store: what it found at start (or after a restart). */
    record DiskRecovered(DiskStore.Recovery recovery) implements Command {
    }

    /** A lookup or restore, with what the pool holds of the chain beyond this node's own records. */
    record PoolExtended(Command request, int from, List<Store.Held> found) implements Command {
    }

    /** A watched record actor stopped (only a failure stops one). */
    record RecordTerminated(ActorRef<RecordActor.Command> actor) implements Command {
    }

    /** How the write of a record whose actor failed ended. */
    record WriteSettled(RecordKey key, Store.WriteReply reply) implements Command {
    }

    /** The slots of a failed publication, now that the device copies that may have written them have ended. */
    record ReleaseAfterCopy(SlotList slots) implements Command {
    }

    /**
     * The snapshot lease of the waiting publication {@code ticket} of {@code key} ended (also its timer's key): its
     * publisher is told it was abandoned.
     */
    record LeaseEnded(RecordKey key, long ticket, ActorRef<PublishResult> replyTo, long correlation)
            implements Command {
    }

    /** What the pool can hold, when the pool is the only durable tier: the bound of what this host remembers. */
    record PoolCapacityKnown(Store.Capacity capacity) implements Command {
    }

    enum SweepTick implements Command {
        INSTANCE
    }

    enum DrainTimeout implements Command {
        INSTANCE
    }

    /** Makes the behaviour of a record actor: the node's {@link RecordActor} (tests put probes in its place). */
    @FunctionalInterface
    interface RecordActors {
        Behavior<RecordActor.Command> create(RecordContext records, ActorRef<Command> catalog,
                                             RecordActor.Stores stores);
    }

    /** The host slots: {@code total}, of which {@code intake} are kept free for publications when possible. */
    record SlotShape(int total, int intake) {
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

    private final CatalogCore core;
    private final Publications publications;
    private final Spills spills;
    private final Restores restores;
    private final Recovery recovery;
    private final Operators operators;
    private final CatalogViews views;

    /** The catalog of a node with {@code slots}; {@code disk} and {@code pool} are null without those tiers. */
    static Behavior<Command> create(RecordContext records, SlotShape slots, ActorRef<Store.Command> disk,
                                    ActorRef<Store.Command> pool, Settings settings) {
        return create(records, slots, disk, pool, settings, RecordActor::create);
    }

    /** The catalog of a node whose record actors come from {@code recordActors}. */
    static Behavior<Command> create(RecordContext records, SlotShape slots, ActorRef<Store.Command> disk,
                                    ActorRef<Store.Command> pool, Settings settings, RecordActors recordActors) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            if (settings.maxAge() != null) {
                timers.startTimerWithFixedDelay(SweepTick.INSTANCE, Duration.ofNanos(
                        ExpirySweep.SWEEP_INTERVAL_NANOS));
            }
            return new Catalog(ctx, timers, new CatalogCore(ctx, timers, records, slots, disk, pool, settings,
                    recordActors));
        }));
    }

    private Catalog(ActorContext<Command> ctx, TimerScheduler<Command> timers, CatalogCore core) {
        super(ctx);
        this.core = core;
        this.spills = new Spills(core);
        this.publications = new Publications(core, spills);
        spills.attach(publications);
        this.restores = new Restores(core, spills);
        this.recovery = new Recovery(core, spills);
        this.operators = new Operators(core, spills);
        this.views = new CatalogViews(core, restores);
        recovery.start();
        core.updateGauges();
        if (core.recovered) {
            core.settings.onReady().run();
        }
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder().onMessage(Command.class, this::onCommand).build();
    }

    private Behavior<Command> onCommand(Command command) {
        core.records.faults().beforeHandling("Catalog", command);
        switch (command) {
            case Publish p -> publications.publish(p);
            case LeaseEnded l -> publications.leaseEnded(l);
            case Resident r -> publications.resident(r);
            case PublicationEnded e -> publications.ended(e);
            case Released r -> publications.free(r.actor());
            case RecordTerminated t -> publications.terminated(t.actor());
            case ReleaseAfterCopy r -> core.slots.release(r.slots());
            case Committed c -> spills.committed(c);
            case WriteGivenUp g -> spills.givenUp(g);
            case WriteSettled w -> spills.settled(w);
            case FileLost f -> spills.fileLost(f.key());
            case Drain d -> spills.drain(d);
            case DrainTimeout t -> spills.finishDrain(true);
            case Lookup l -> restores.withPool(l, l.namespace(), l.chain());
            case Restore r -> restores.withPool(r, r.namespace(), r.chain());
            case PoolExtended e -> restores.extended(e);
            case AdoptRestored a -> restores.adopt(a);
            case ReadSample s -> restores.sample(s);
            case Unpin u -> u.keys().forEach(core.catalog::unpin);
            case UnpinFiles u -> restores.unpinFiles(u.keys());
            case Used u -> core.catalog.used(u.deepest(), u.fromDisk());
            case RestoreEnded r -> {
                r.unpin().forEach(core.catalog::unpin);
                if (!r.unpinFiles().isEmpty()) {
                    restores.unpinFiles(r.unpinFiles());
                }
                core.catalog.used(r.used().deepest(), r.used().fromDisk());
            }
            case Stage s -> restores.stage(s);
            case CancelStaging c -> restores.cancelStaging(c);
            case ReleaseStaging r -> core.slots.release(r.slots());
            case DiskRecovered d -> recovery.disk(d.recovery());
            case PoolCapacityKnown p -> recovery.poolCapacity(p.capacity());
            case ExpireNow x -> x.replyTo().tell(operators.sweep());
            case SweepTick t -> operators.sweep();
            case EvictRecord e -> e.replyTo().tell(operators.evict(e.key()));
            case ListRecords l -> l.replyTo().tell(views.page(l));
            case DescribeRecord d -> d.replyTo().tell(views.describe(d.key()));
            case GetStatus g -> g.replyTo().tell(views.status());
            case CheckInvariants c -> c.replyTo().tell(views.invariantViolation());
        }
        core.slots.serve(); // records may have become clean: a waiting request may now be granted after evicting
        spills.relievePressure();
        core.updateGauges();
        return this;
    }
}
