package dev.selene.actors.memory;

import dev.selene.actors.api.EvictOutcome;
import dev.selene.actors.api.ExpiryReport;
import dev.selene.actors.api.LookupResult;
import dev.selene.actors.api.PublishResult;
import dev.selene.actors.api.RecordDescription;
import dev.selene.actors.api.RecordPage;
import dev.selene.actors.api.RecordView;
import dev.selene.actors.api.RetryReason;
import dev.selene.actors.api.Tier;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.record.RecordActor;
import dev.selene.actors.record.RecordContext;
import dev.selene.actors.slots.SlotPool;
import dev.selene.engine.expiry.ExpirySweep;
import dev.selene.engine.index.ChainMatch;
import dev.selene.engine.index.RecordIndex;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.gpu.DevicePlacement;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The warm tier: the index of resident records, their clean or parked state and recency order, the
 * publications in flight (one {@link RecordActor} each), eviction on demand, lookup and pinning for restores.
 */
public final class MemoryTier extends AbstractBehavior<MemoryTier.Command> {

    /** The protocol. */
    public sealed interface Command {
    }

    /** Publishes a record from its GPU snapshot. */
    public record Publish(RecordSpec spec, DevicePlacement snapshot, ActorRef<PublishResult> replyTo)
            implements Command {
    }

    /** Finds the match for a chain (B14) among resident records. */
    public record Lookup(String namespace, long[] chain, ActorRef<LookupResult> replyTo) implements Command {
    }


    /** Releases pins taken by {@link PinKeys}. */
    public record Unpin(List<RecordKey> keys) implements Command {
    }

    /** Asks for the tier's figures. */
    public record GetStats(ActorRef<Stats> replyTo) implements Command {
    }

    /** Lists resident records ordered by namespace then key; a null {@code namespace} lists every namespace. */
    public record ListRecords(String namespace, int offset, int limit, ActorRef<RecordPage> replyTo)
            implements Command {
    }

    /** Describes one record: its state, its chain and where it lives. */
    public record DescribeRecord(RecordKey key, ActorRef<RecordDescription> replyTo) implements Command {
    }

    /** Removes one record and its resident descendants (an operator's eviction). */
    public record EvictRecord(RecordKey key, ActorRef<EvictOutcome> replyTo) implements Command {
    }

    /** Runs a max-age sweep now (B18) and replies with what it removed. */
    public record ExpireNow(ActorRef<ExpiryReport> replyTo) implements Command {
    }

    /** Sets who is told the keys each sweep removed (a durable tier drops its copies of them). */
    public record AttachExpiryListener(ActorRef<ExpiryReport> listener) implements Command {
    }

    private enum SweepTick implements Command {
        INSTANCE
    }

    /** From the spill scheduler: the coldest parked records, each with its parked ancestors (B4, B11). */
    public record SpillCandidates(int max, ActorRef<Candidates> replyTo) implements Command {
    }

    /** From the spill scheduler: pin these parked records for their writes and reply with their slots. */
    public record PinForSpill(List<RecordKey> keys, ActorRef<PinnedForSpill> replyTo) implements Command {
    }

    /** From the spill scheduler: the record's file committed; it is clean now. */
    public record SpillCommitted(RecordKey key) implements Command {
    }

    /** From the spill scheduler: the record can never be written (B12): drop it and its parked descendants. */
    public record SpillGivenUp(RecordKey key) implements Command {
    }

    /** From the spill scheduler: these parked records are committed on disk already; they are clean. */
    public record MarkDurable(List<RecordKey> keys) implements Command {
    }

    /** From the spill scheduler: these parked records hang from an ancestor that is nowhere; drop them. */
    public record DropOrphans(List<RecordKey> keys) implements Command {
    }

    /** From the disk tier: these records' files are gone; resident copies become parked again. */
    public record DurableCopiesGone(List<RecordKey> keys) implements Command {
    }

    /**
     * From a restore: a record read from disk into {@code slots} (staging, now handed over) and copied to the
     * device; it becomes resident and clean, unless it is resident already, in which case the slots are freed.
     */
    public record AdoptRestored(RecordSpec spec, SlotList slots) implements Command {
    }

    /** Per chain position, the resident record (null where absent): for lookups across tiers. */
    public record Locate(String namespace, long[] chain, ActorRef<Resident> replyTo) implements Command {
    }

    /** Pins the resident records among {@code keys} for a restore; null in the reply where absent. */
    public record PinKeys(List<RecordKey> keys, ActorRef<Pinned> replyTo) implements Command {
    }

    /** Reply to {@link SpillCandidates}. */
    public record Candidates(List<dev.selene.engine.spill.SpillPlanner.Candidate> candidates) {
    }

    /** Reply to {@link PinForSpill}: the records pinned (those no longer parked are left out). */
    public record PinnedForSpill(List<PinnedRecord> records, List<RecordKey> missing) {
    }

    /** Reply to {@link Locate}: per chain position the resident spec, or null. */
    public record Resident(List<RecordSpec> specs) {
    }

    /** From a record actor: its slots are leased; {@code copy} is its copy once started, else null. */
    public record RecordLeased(RecordKey key, SlotList slots, CompletableFuture<Void> copy) implements Command {
    }

    /** From a record actor: its copy completed; index it and answer the publisher. */
    public record RecordResident(RecordSpec spec, SlotList slots, long bytes, ActorRef<PublishResult> replyTo)
            implements Command {
    }

    /** From a record actor: it ended without becoming resident and holds no slots any more. */
    public record RecordEnded(RecordKey key) implements Command {
    }

    private record RecordTerminated(RecordKey key, ActorRef<RecordActor.Command> actor) implements Command {
    }

    private record EvictRequested(SlotPool.Evict request) implements Command {
    }

    private record ReleaseAfterCopy(SlotList slots) implements Command {
    }

    /** The records of a pinned match, root first. */
    public record Pinned(List<PinnedRecord> records) {
    }

    /** One pinned record: its spec and slots. */
    public record PinnedRecord(RecordSpec spec, SlotList slots) {
    }

    /** The tier's figures. */
    public record Stats(int residentRecords, long residentSlots, long cleanSlots, long parkedSlots, int inFlight) {
    }

    private record InFlight(ActorRef<RecordActor.Command> actor, ActorRef<PublishResult> replyTo, SlotList lease,
                            CompletableFuture<Void> copy) {
        InFlight leased(SlotList slots, CompletableFuture<Void> future) {
            return new InFlight(actor, replyTo, slots, future);
        }
    }

    private final RecordContext records;
    private final ActorRef<SlotPool.Command> slotPool;
    private final CacheCounters counters;
    private final RecordIndex index;
    private final Map<RecordKey, InFlight> inFlight = new HashMap<>();
    private long reportedClean;
    private final ExpirySettings expiry;
    private ActorRef<ExpiryReport> expiryListener;

    /** Resident records in the order the admin API pages through them. */
    private static final Comparator<RecordKey> KEY_ORDER = Comparator.comparing(RecordKey::namespace)
            .thenComparing(RecordKey::hash, Long::compareUnsigned);

    /** The tier; it attaches itself to {@code slotPool} as the evictor of clean records. */
    public static Behavior<Command> create(RecordContext records, boolean memoryOnly) {
        return create(records, memoryOnly, ExpirySettings.OFF);
    }

    /**
     * The tier with max age {@code expiry} (B18): when it is set, a sweep runs once a minute; when it is off there
     * is no timer at all.
     */
    public static Behavior<Command> create(RecordContext records, boolean memoryOnly, ExpirySettings expiry) {
        if (!expiry.enabled()) {
            return Behaviors.setup(ctx -> new MemoryTier(ctx, records, memoryOnly, expiry));
        }
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            timers.startTimerWithFixedDelay(SweepTick.INSTANCE, Duration.ofNanos(ExpirySweep.SWEEP_INTERVAL_NANOS));
            return new MemoryTier(ctx, records, memoryOnly, expiry);
        }));
    }

    private MemoryTier(ActorContext<Command> ctx, RecordContext records, boolean memoryOnly, ExpirySettings expiry) {
        super(ctx);
        this.expiry = expiry;
        this.records = records;
        this.slotPool = records.slotPool();
        this.counters = records.counters();
        this.index = new RecordIndex(memoryOnly);
        ActorRef<SlotPool.Evict> evictor = ctx.messageAdapter(SlotPool.Evict.class, EvictRequested::new);
        slotPool.tell(new SlotPool.Attach(evictor, null));
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder().onMessage(Command.class, this::onCommand).build();
    }

    private Behavior<Command> onCommand(Command command) {
        switch (command) {
            case Publish p -> onPublish(p);
            case Lookup l -> onLookup(l);
            case Unpin u -> onUnpin(u);
            case GetStats g -> g.replyTo().tell(new Stats(index.size(), index.residentSlots(),
                    index.droppableSlots(), index.parkedSlots(), inFlight.size()));
            case RecordLeased l -> onLeased(l);
            case RecordResident r -> onResident(r);
            case RecordEnded e -> inFlight.remove(e.key());
            case RecordTerminated t -> onTerminated(t);
            case EvictRequested e -> onEvict(e.request());
            case ReleaseAfterCopy r -> slotPool.tell(new SlotPool.Release(r.slots(), false));
            case ListRecords l -> l.replyTo().tell(page(l));
            case DescribeRecord d -> d.replyTo().tell(describe(d.key()));
            case EvictRecord e -> e.replyTo().tell(evictByOperator(e.key()));
            case ExpireNow x -> x.replyTo().tell(sweep());
            case AttachExpiryListener a -> expiryListener = a.listener();
            case SweepTick t -> sweep();
            case SpillCandidates c -> c.replyTo().tell(spillCandidates(c.max()));
            case PinForSpill p -> p.replyTo().tell(pinForSpill(p.keys()));
            case SpillCommitted c -> onSpillCommitted(c.key());
            case SpillGivenUp g -> onSpillGivenUp(g.key());
            case MarkDurable m -> onMarkDurable(m.keys());
            case DropOrphans d -> d.keys().forEach(k -> dropWithParkedDescendants(k, "Dropped: its chain hangs "
                    + "from an ancestor that is in no tier"));
            case DurableCopiesGone g -> onDurableCopiesGone(g.keys());
            case Locate l -> l.replyTo().tell(locate(l.namespace(), l.chain()));
            case AdoptRestored a -> onAdoptRestored(a);
            case PinKeys p -> p.replyTo().tell(pinKeys(p.keys()));
        }
        reportClean();
        return this;
    }

    private void onPublish(Publish p) {
        RecordKey key = p.spec().key();
        if (inFlight.containsKey(key)) {
            records.traces().append(key, "MemoryTier", "Publish -> Retry(inflight)");
            reply(p.replyTo(), new PublishResult.Retry(RetryReason.INFLIGHT));
            return;
        }
        if (index.contains(key)) {
            records.traces().append(key, "MemoryTier", "Publish -> Present");
            reply(p.replyTo(), new PublishResult.Present());
            return;
        }
        ActorRef<RecordActor.Command> actor = getContext().spawnAnonymous(
                RecordActor.publish(records, p.spec(), p.snapshot(), p.replyTo(), getContext().getSelf()));
        getContext().watchWith(actor, new RecordTerminated(key, actor));
        inFlight.put(key, new InFlight(actor, p.replyTo(), null, null));
    }

    private void onLeased(RecordLeased l) {
        InFlight f = inFlight.get(l.key());
        if (f != null) {
            inFlight.put(l.key(), f.leased(l.slots(), l.copy()));
        }
    }

    private void onResident(RecordResident r) {
        RecordKey key = r.spec().key();
        inFlight.remove(key);
        index.insert(r.spec(), r.slots(), false, expiry.clockNanos().getAsLong());
        records.traces().append(key, "MemoryTier", "Resident (parked) in " + r.slots().count() + " slots");
        counters.add("publish.bytes", r.bytes());
        reply(r.replyTo(), new PublishResult.Stored(r.bytes()));
    }

    private void onTerminated(RecordTerminated t) {
        InFlight f = inFlight.get(t.key());
        if (f == null || !f.actor().equals(t.actor())) {
            return; // ended normally; the key may already be in flight again under a new actor
        }
        inFlight.remove(t.key());
        counters.increment("record.failures");
        records.traces().append(t.key(), "MemoryTier", "RecordActor failed; slots released");
        getContext().getLog().warn("record actor for {} failed; its slots are released", t.key());
        if (f.lease() != null) {
            SlotList lease = f.lease();
            if (f.copy() == null) {
                slotPool.tell(new SlotPool.Release(lease, false)); // no copy ever started into these slots
            } else {
                getContext().pipeToSelf(f.copy().thenApply(v -> Boolean.TRUE), (v, e) -> new ReleaseAfterCopy(lease));
            }
        }
        reply(f.replyTo(), new PublishResult.Failed("record_actor_failed", "the record's actor stopped unexpectedly"));
    }

    private void onEvict(SlotPool.Evict request) {
        List<SlotList> dropped = new ArrayList<>();
        long freed = 0;
        while (freed < request.slots()) {
            RecordIndex.Entry e = index.dropColdest();
            if (e == null) {
                break;
            }
            freed += e.slots().count();
            dropped.add(e.slots());
            counters.increment("evicted.memory");
            records.traces().append(e.key(), "MemoryTier", "Evicted (coldest clean) for allocation");
        }
        // Dropping a leaf can make its parent droppable, and the parent may be dropped in the same pass, so first
        // bring the pool's clean count up to date as if nothing had been dropped; Evicted then removes exactly
        // the dropped slots from it.
        long cleanWithDropped = index.droppableSlots() + freed;
        if (cleanWithDropped != reportedClean) {
            slotPool.tell(new SlotPool.CleanChanged((int) (cleanWithDropped - reportedClean)));
        }
        reportedClean = index.droppableSlots();
        request.replyTo().tell(new SlotPool.Evicted(dropped));
    }

    private LookupResult lookup(String namespace, long[] chain) {
        List<RecordIndex.Entry> entries = resident(namespace, chain);
        int depth = ChainMatch.depth(entries.size(), i -> true, i -> entries.get(i).spec().hasRow());
        if (depth == 0) {
            return LookupResult.none();
        }
        List<LookupResult.Located> located = new ArrayList<>(depth);
        for (int i = 0; i < depth; i++) {
            RecordIndex.Entry e = entries.get(i);
            located.add(new LookupResult.Located(e.key(), e.spec().hasRow(), Tier.MEMORY));
        }
        return new LookupResult(located, (long) depth * records.layout().tokensPerRecord());
    }


    private Candidates spillCandidates(int max) {
        List<dev.selene.engine.spill.SpillPlanner.Candidate> out = new ArrayList<>();
        for (RecordIndex.Entry e : index.coldestParked(max)) {
            List<dev.selene.engine.spill.SpillPlanner.Ancestor> ancestors = new ArrayList<>();
            for (RecordIndex.Entry a : index.parkedAncestors(e)) {
                ancestors.add(new dev.selene.engine.spill.SpillPlanner.Ancestor(a.spec(), a.slots().count()));
            }
            var candidate = new dev.selene.engine.spill.SpillPlanner.Candidate(e.spec(), e.slots().count(),
                    ancestors);
            RecordKey anchor = candidate.anchor();
            boolean anchorInMemory = anchor == null || index.contains(anchor) || inFlight.containsKey(anchor);
            out.add(new dev.selene.engine.spill.SpillPlanner.Candidate(e.spec(), e.slots().count(), ancestors,
                    anchorInMemory));
        }
        return new Candidates(out);
    }

    private PinnedForSpill pinForSpill(List<RecordKey> keys) {
        List<PinnedRecord> pinned = new ArrayList<>();
        List<RecordKey> missing = new ArrayList<>();
        for (RecordKey key : keys) {
            RecordIndex.Entry e = index.get(key);
            if (e == null || e.durable()) {
                missing.add(key);
                continue;
            }
            index.pin(key);
            records.traces().append(key, "MemoryTier", "Pinned for spill");
            pinned.add(new PinnedRecord(e.spec(), e.slots()));
        }
        return new PinnedForSpill(pinned, missing);
    }

    private void onSpillCommitted(RecordKey key) {
        if (index.contains(key)) {
            index.unpin(key);
            index.markDurable(key);
            records.traces().append(key, "MemoryTier", "Clean (file committed)");
        }
    }

    private void onSpillGivenUp(RecordKey key) {
        if (index.contains(key)) {
            index.unpin(key);
            dropWithParkedDescendants(key, "Dropped: its file (or an ancestor's) can never be written");
        }
    }

    /**
     * Drops a parked record and its parked descendants, which could never be written under it (B12). A pinned one
     * (a restore or a write is reading it) stays; a later spill round finds it orphaned and drops it then.
     */
    private void dropWithParkedDescendants(RecordKey key, String why) {
        RecordIndex.Entry e = index.get(key);
        if (e == null || e.durable()) {
            return;
        }
        List<RecordIndex.Entry> doomed = new ArrayList<>(index.residentDescendants(key));
        doomed.removeIf(RecordIndex.Entry::durable);
        doomed.addFirst(e);
        for (int i = doomed.size() - 1; i >= 0; i--) {
            RecordIndex.Entry d = doomed.get(i);
            if (d.pins() > 0) {
                continue;
            }
            RecordIndex.Entry removed = index.remove(d.key());
            slotPool.tell(new SlotPool.Release(removed.slots(), false));
            counters.increment("spill.dropped");
            records.traces().append(d.key(), "MemoryTier", why);
        }
    }

    private void onMarkDurable(List<RecordKey> keys) {
        for (RecordKey key : keys) {
            RecordIndex.Entry e = index.get(key);
            if (e != null && !e.durable()) {
                index.markDurable(key);
                records.traces().append(key, "MemoryTier", "Clean (its file is already on disk)");
            }
        }
    }

    private void onDurableCopiesGone(List<RecordKey> keys) {
        for (RecordKey key : keys) {
            RecordIndex.Entry e = index.get(key);
            if (e != null && e.durable()) {
                index.markParked(key);
                records.traces().append(key, "MemoryTier", "Parked again (its file left the disk)");
            }
        }
    }

    private void onAdoptRestored(AdoptRestored a) {
        RecordKey key = a.spec().key();
        if (index.contains(key) || inFlight.containsKey(key)) {
            slotPool.tell(new SlotPool.Release(a.slots(), false));
            return;
        }
        // Inserted parked: the file may have been dropped meanwhile; the spill scheduler, which hears of every
        // file that leaves the disk, marks it clean while its file is committed (MarkDurable).
        index.insert(a.spec(), a.slots(), false, expiry.clockNanos().getAsLong());
        counters.increment("restore.promoted");
        records.traces().append(key, "MemoryTier", "Resident again after a restore from disk");
    }

    private Resident locate(String namespace, long[] chain) {
        List<RecordSpec> specs = new ArrayList<>(chain.length);
        for (long hash : chain) {
            RecordIndex.Entry e = index.get(new RecordKey(namespace, hash));
            specs.add(e == null ? null : e.spec());
        }
        return new Resident(specs);
    }

    private Pinned pinKeys(List<RecordKey> keys) {
        List<PinnedRecord> out = new ArrayList<>(keys.size());
        long now = expiry.clockNanos().getAsLong();
        RecordKey last = null;
        for (RecordKey key : keys) {
            RecordIndex.Entry e = key == null ? null : index.get(key);
            if (e == null) {
                out.add(null);
                continue;
            }
            index.pin(key);
            records.traces().append(key, "MemoryTier", "Pinned for restore");
            out.add(new PinnedRecord(e.spec(), e.slots()));
            last = key;
        }
        if (last != null) {
            index.touch(last, now);
        }
        return new Pinned(out);
    }

    private void onUnpin(Unpin u) {
        for (RecordKey key : u.keys()) {
            if (index.contains(key)) {
                index.unpin(key);
            }
        }
    }

    /** The resident prefix of {@code chain}: entries for chain[0..k) where chain[k] is the first absent one. */
    private List<RecordIndex.Entry> resident(String namespace, long[] chain) {
        List<RecordIndex.Entry> out = new ArrayList<>();
        for (long hash : chain) {
            RecordIndex.Entry e = index.get(new RecordKey(namespace, hash));
            if (e == null) {
                break;
            }
            out.add(e);
        }
        return out;
    }

    private void onLookup(Lookup l) {
        LookupResult r = lookup(l.namespace(), l.chain());
        counters.increment("lookup.total");
        if (r.depth() > 0) {
            counters.increment("lookup.hits");
            counters.add("lookup.hit_tokens", r.tokens());
        }
        l.replyTo().tell(r);
    }

    /** One max-age sweep (B18): removes what {@link ExpirySweep} picks and tells the expiry listener. */
    private ExpiryReport sweep() {
        if (!expiry.enabled()) {
            return new ExpiryReport(Tier.MEMORY, false, List.of());
        }
        List<RecordKey> removed = ExpirySweep.plan(candidates(), expiry.clockNanos().getAsLong(),
                expiry.maxAge().toNanos(), ExpirySweep.MAX_RECORDS_PER_SWEEP);
        ExpiryReport report = new ExpiryReport(Tier.MEMORY, true, removed);
        if (!removed.isEmpty()) {
            removeResident(removed, "Expired: unused for longer than max age " + expiry.maxAge());
            counters.add("expired.memory", removed.size());
            if (expiryListener != null) {
                expiryListener.tell(report);
            }
        }
        return report;
    }

    private EvictOutcome evictByOperator(RecordKey key) {
        if (!index.contains(key)) {
            return new EvictOutcome(inFlight.containsKey(key) ? EvictOutcome.Result.BUSY
                    : EvictOutcome.Result.NOT_FOUND, 0);
        }
        ExpirySweep.Subtrees tree = new ExpirySweep.Subtrees(candidates());
        List<RecordKey> subtree = tree.deepestFirst(key);
        if (tree.anyBusy(subtree)) {
            return new EvictOutcome(EvictOutcome.Result.BUSY, 0);
        }
        removeResident(subtree, "Evicted by an operator (with its descendants)");
        counters.add("admin.evicted", subtree.size());
        return new EvictOutcome(EvictOutcome.Result.EVICTED, subtree.size());
    }

    /**
     * Removes resident records (descendants before ancestors) and frees their slots: the pool's clean count is
     * lowered first, so it never counts freed slots as clean.
     */
    private void removeResident(List<RecordKey> keys, String why) {
        List<SlotList> freed = new ArrayList<>(keys.size());
        for (RecordKey k : keys) {
            RecordIndex.Entry e = index.remove(k);
            if (e != null) {
                freed.add(e.slots());
                records.traces().append(k, "MemoryTier", why);
            }
        }
        reportClean();
        for (SlotList s : freed) {
            slotPool.tell(new SlotPool.Release(s, false));
        }
    }

    private List<ExpirySweep.Candidate> candidates() {
        List<ExpirySweep.Candidate> out = new ArrayList<>(index.size());
        for (RecordIndex.Entry e : index.entries()) {
            out.add(new ExpirySweep.Candidate(e.key(), e.spec().parent(), e.lastUseNanos(), e.pins() > 0));
        }
        return out;
    }

    private RecordView view(RecordIndex.Entry e, long nowNanos) {
        String state = e.pins() > 0 ? "pinned" : e.durable() ? "clean" : "parked";
        return new RecordView(e.key(), e.spec().parent(), e.spec().hasRow(), Tier.MEMORY, state, e.slots().count(),
                records.layout().recordBytes(e.spec().hasRow()),
                TimeUnit.NANOSECONDS.toMillis(Math.max(0, nowNanos - e.lastUseNanos())));
    }

    /** A page of resident records; sorts the index per request (thousands of records: fine for an admin call). */
    private RecordPage page(ListRecords l) {
        List<RecordIndex.Entry> matching = new ArrayList<>();
        for (RecordIndex.Entry e : index.entries()) {
            if (l.namespace() == null || l.namespace().equals(e.key().namespace())) {
                matching.add(e);
            }
        }
        matching.sort(Comparator.comparing(RecordIndex.Entry::key, KEY_ORDER));
        long now = expiry.clockNanos().getAsLong();
        int from = Math.min(Math.max(0, l.offset()), matching.size());
        int to = Math.min(matching.size(), from + Math.max(0, l.limit()));
        List<RecordView> views = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            views.add(view(matching.get(i), now));
        }
        return new RecordPage(matching.size(), l.offset(), views);
    }

    private RecordDescription describe(RecordKey key) {
        RecordIndex.Entry e = index.get(key);
        if (e == null) {
            return inFlight.containsKey(key) ? new RecordDescription(key, "in_flight", null, List.of(), false)
                    : RecordDescription.absent(key);
        }
        long now = expiry.clockNanos().getAsLong();
        ArrayDeque<RecordView> chain = new ArrayDeque<>();
        RecordIndex.Entry cur = e;
        boolean complete = false;
        while (cur != null && chain.size() <= index.size()) {
            chain.addFirst(view(cur, now));
            RecordKey parent = cur.spec().parent();
            if (parent == null) {
                complete = true;
                break;
            }
            cur = index.get(parent);
        }
        return new RecordDescription(key, "resident", view(e, now), List.copyOf(chain), complete);
    }

    private void reportClean() {
        long clean = index.droppableSlots();
        if (clean != reportedClean) {
            slotPool.tell(new SlotPool.CleanChanged((int) (clean - reportedClean)));
            reportedClean = clean;
        }
    }

    private void reply(ActorRef<PublishResult> replyTo, PublishResult result) {
        records.reply(replyTo, result);
    }
}
