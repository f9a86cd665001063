package dev.selene.actors.memory;

import dev.selene.actors.api.LookupResult;
import dev.selene.actors.api.PublishResult;
import dev.selene.actors.api.RetryReason;
import dev.selene.actors.api.Tier;
import dev.selene.actors.metrics.CacheCounters;
import dev.selene.actors.record.RecordActor;
import dev.selene.actors.record.RecordContext;
import dev.selene.actors.slots.SlotPool;
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

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

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

    /** Pins the resident match of a chain for a restore and replies with its records' slots. */
    public record PinMatch(String namespace, long[] chain, ActorRef<Pinned> replyTo) implements Command {
    }

    /** Releases pins taken by {@link PinMatch}. */
    public record Unpin(List<RecordKey> keys) implements Command {
    }

    /** Asks for the tier's figures. */
    public record GetStats(ActorRef<Stats> replyTo) implements Command {
    }

    /** From a record actor: its slots are leased and its copy has started. */
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

    /** The tier; it attaches itself to {@code slotPool} as the evictor of clean records. */
    public static Behavior<Command> create(RecordContext records, boolean memoryOnly) {
        return Behaviors.setup(ctx -> new MemoryTier(ctx, records, memoryOnly));
    }

    private MemoryTier(ActorContext<Command> ctx, RecordContext records, boolean memoryOnly) {
        super(ctx);
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
            case Lookup l -> l.replyTo().tell(lookup(l.namespace(), l.chain()));
            case PinMatch p -> onPinMatch(p);
            case Unpin u -> onUnpin(u);
            case GetStats g -> g.replyTo().tell(new Stats(index.size(), index.residentSlots(),
                    index.droppableSlots(), index.parkedSlots(), inFlight.size()));
            case RecordLeased l -> onLeased(l);
            case RecordResident r -> onResident(r);
            case RecordEnded e -> inFlight.remove(e.key());
            case RecordTerminated t -> onTerminated(t);
            case EvictRequested e -> onEvict(e.request());
            case ReleaseAfterCopy r -> slotPool.tell(new SlotPool.Release(r.slots(), false));
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
        index.insert(r.spec(), r.slots(), false, System.nanoTime());
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
            getContext().pipeToSelf(f.copy(), (v, e) -> new ReleaseAfterCopy(lease));
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

    private void onPinMatch(PinMatch p) {
        List<RecordIndex.Entry> entries = resident(p.namespace(), p.chain());
        int depth = ChainMatch.depth(entries.size(), i -> true, i -> entries.get(i).spec().hasRow());
        List<PinnedRecord> pinned = new ArrayList<>(depth);
        long now = System.nanoTime();
        for (int i = 0; i < depth; i++) {
            RecordIndex.Entry e = entries.get(i);
            index.pin(e.key());
            records.traces().append(e.key(), "MemoryTier", "Pinned for restore");
            pinned.add(new PinnedRecord(e.spec(), e.slots()));
        }
        if (depth > 0) {
            index.touch(entries.get(depth - 1).key(), now);
        }
        p.replyTo().tell(new Pinned(pinned));
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
