package dev.selene.actors.pool;

import dev.selene.engine.key.RecordKey;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The directory of one namespace shard, a Cluster Sharding entity on the manager nodes: which stores hold which
 * records of the namespaces that hash to the shard, as the stores report them. It answers chain lookups, drops every
 * replica of a record one store evicted or expired (the replicas age together: a record one replica served is used
 * on the others too), with a max age keeps the ancestors of what the stores take or serve fresh on whichever store
 * holds them, and when a store goes away copies the records it held from a surviving replica to another store
 * ({@link Placement} ranks them, as hosts do when they place a new record).
 *
 * <p>It holds no fact that is not also a store's: the stores hold the records, and an entity that starts (first
 * use, a rebalance, its node lost, passivation) rebuilds its map by asking every store for its holdings of the
 * shard, stashing requests meanwhile. Stores wake every shard's entity when the set of stores changes, so
 * replicas are rebuilt even for shards no host is using.
 */
public final class PoolDirectory extends AbstractBehavior<PoolDirectory.Command> {

    /** The protocol. */
    public sealed interface Command {
    }

    /** The sharded entity type. */
    public static final EntityTypeKey<Command> TYPE = EntityTypeKey.create(Command.class, "selene-pool-directory");

    /** The longest run of {@code chain} (record key hashes of {@code namespace}, in order) the pool holds. */
    public record Find(String namespace, List<Long> chain, ActorRef<Found> replyTo) implements Command, PoolMessage {
    }

    /** Where one record is held. */
    public record Locate(RecordKey key, ActorRef<Found> replyTo) implements Command, PoolMessage {
    }

    /** From a store: it holds {@code entries} (validated), reported together. */
    public record HeldAll(List<PoolEntry> entries, ActorRef<ManagerStore.Command> store)
            implements Command, PoolMessage {
    }


    /** From a store: it dropped records it decided to drop ({@code reason}: evicted, expired), reported together. */
    public record ReleasedAll(List<RecordKey> keys, ActorRef<ManagerStore.Command> store, String reason)
            implements Command, PoolMessage {
    }

    /** From a store: it served these records to hosts since its last report; their other holders count a use too. */
    public record ServedAll(List<RecordKey> keys, ActorRef<ManagerStore.Command> store)
            implements Command, PoolMessage {
    }

    /**
     * From a store asked for a copy of {@code key}: the copy did not reach its target (the target could not be
     * reached, had no room, or the store no longer holds the record).
     */
    public record CopyFailed(RecordKey key, ActorRef<ManagerStore.Command> store) implements Command, PoolMessage {
    }

    /**
     * From a store about to leave the cluster (its manager is stopping): which records of this shard no store that
     * stays holds. The first question lists them and marks the store as leaving (no target of a replica copy from
     * then on, and not asked for copies of what stores that stay hold too); the answer comes in pages, each further
     * page asked for with the same question.
     */
    public record Leaving(ActorRef<ManagerStore.Command> store, ActorRef<LeavingReply> replyTo)
            implements Command, PoolMessage {
    }

    /**
     * Reply to {@link Leaving}: a page of the records no store that stays holds, the stores that stay (each record
     * goes to the first of them in its key's ranking), and whether another page follows.
     */
    public record LeavingReply(List<RecordKey> keys, List<ActorRef<ManagerStore.Command>> others, boolean more)
            implements PoolMessage {
    }

    /** From a store: the set of stores changed; check the replicas. Starts the entity when it is not running. */
    public enum Wake implements Command, PoolMessage {
        INSTANCE
    }


    /** Reply to {@link Find} and {@link Locate}: records in chain order with their holders. */
    public record Found(List<Located> records) implements PoolMessage {
    }

    /** One record and the stores that hold it. */
    public record Located(PoolEntry entry, List<ActorRef<ManagerStore.Command>> holders) implements PoolMessage {
    }

    /**
     * The receptionist's listing: the stores the cluster finds reachable, and every registered one. Package-private
     * so that a test can stand in for a clustered receptionist (a local one never finds a store unreachable).
     */
    record StoresListed(Set<ActorRef<ManagerStore.Command>> stores,
                        Set<ActorRef<ManagerStore.Command>> registered) implements Command {
    }

    /** The answer of {@code store} to this entity's question {@code ask} (empty when it did not answer in time). */
    private record HoldingsAnswered(ActorRef<ManagerStore.Command> store, long ask, ManagerStore.HoldingsReply reply)
            implements Command {
    }

    /** Time to forget the stores that reported records but no listing has named for {@link #UNLISTED_PATIENCE}. */
    private enum UnlistedCheck implements Command {
        INSTANCE
    }

    private enum RebuildTimeout implements Command {
        INSTANCE
    }

    private enum ReplicaCheck implements Command {
        INSTANCE
    }

    /** How long a starting entity waits for the stores' holdings before it serves what it has. */
    static final Duration REBUILD_PATIENCE = Duration.ofSeconds(3);
    /**
     * How long a record must have been short of replicas before it is copied (its other copy may still be on its way:
     * a store reports what it took a little after taking it), and how long after asking for copies a shard looks
     * again (a copy can fail).
     */
    static final Duration REPLICA_RECHECK = Duration.ofSeconds(5);
    /**
     * How long copies asked for are awaited before they are asked for again when their source has said nothing: a
     * source tells the entity of a copy that failed, and a copy that succeeds is reported by its target, so this is
     * only for a source that stopped answering while it stays listed, or a message lost on the way.
     */
    static final Duration COPY_PATIENCE = Duration.ofSeconds(60);
    /**
     * How long a store known from its report alone may go unnamed by the receptionist's listings before it is taken
     * for stopped (its registration reaches every node within seconds).
     */
    static final Duration UNLISTED_PATIENCE = Duration.ofSeconds(30);
    /**
     * Records per answer to a leaving store: a page stays far below the cluster's largest message (1 MiB) whatever
     * the namespaces' names.
     */
    static final int HAND_OFF_PAGE = 1_000;

    /** {@code Entry.shortSince} of a record that has its replicas. */
    private static final long NOT_SHORT = Long.MIN_VALUE;

    /** One record: what it is and who holds it. */
    private static final class Entry {
        final PoolEntry entry;
        final LinkedHashSet<ActorRef<ManagerStore.Command>> holders = new LinkedHashSet<>();
        /** Since when it has been short of replicas ({@link System#nanoTime()}), or {@link #NOT_SHORT}. */
        long shortSince = NOT_SHORT;
        /** Copies asked for since it was last full: each ask starts that many stores further down the ranking. */
        int copiesAsked;
        /** Copies asked for whose end (their target's report, or their source's word of a failure) is awaited. */
        int copiesPending;
        /** When copies were last asked for ({@link System#nanoTime()}; meaningful once copiesAsked is above 0). */
        long copiesAskedAt;
        /** The store the pending copies were asked of: only its word of a failure counts. */
        ActorRef<ManagerStore.Command> copySource;

        /** Notes that it is short at {@code now}, unless it was already. */
        void shortAt(long now) {
            if (shortSince == NOT_SHORT) {
                shortSince = now;
            }
        }

        /** Forgets that it was short once it has {@code required} holders again. */
        void fullAgain(int required) {
            if (holders.size() >= required) {
                notShort();
            }
        }

        void notShort() {
            shortSince = NOT_SHORT;
            copiesAsked = 0;
            copiesPending = 0;
        }

        /** A copy asked for ended, one way or the other. */
        void copyEnded() {
            copiesPending = Math.max(0, copiesPending - 1);
        }

        Entry(PoolEntry entry) {
            this.entry = entry;
        }
    }

    private final ManagerConfig config;
    private final Duration unlistedPatience;
    private final Duration copyPatience;
    private final Duration recheck;
    private final int shard;
    private final Map<RecordKey, Entry> entries = new HashMap<>();
    /**
     * Every store this entity knows (those the receptionist listed and those that reported before it listed them),
     * with when it became known ({@link System#nanoTime()}).
     */
    private final Map<ActorRef<ManagerStore.Command>, Long> knownSince = new HashMap<>();
    /** The stores this entity knows: {@link #knownSince}'s keys. */
    private final Set<ActorRef<ManagerStore.Command>> stores = knownSince.keySet();
    /** The stores of the receptionist's last listing. */
    private final Set<ActorRef<ManagerStore.Command>> listed = new HashSet<>();
    /** Stores whose manager said it is stopping: no longer targets of copies. */
    private final Set<ActorRef<ManagerStore.Command>> leaving = new HashSet<>();
    /** What each leaving store has still to be told of the records only it holds. */
    private final Map<ActorRef<ManagerStore.Command>, ArrayDeque<RecordKey>> handOffs = new HashMap<>();
    private final StashBuffer<Command> stash;
    private final TimerScheduler<Command> timers;
    /** The stores asked what they hold and not answered yet, each with the number of the question it must answer. */
    private final Map<ActorRef<ManagerStore.Command>, Long> awaited = new HashMap<>();
    private long asks;
    private boolean ready;

    /** The shard of a namespace: the same on every node (a string's hash is specified). */
    public static int shardOf(String namespace, int shards) {
        return Math.floorMod(namespace.hashCode(), shards);
    }

    /** The entity id of the directory that holds {@code namespace}. */
    public static String entityId(String namespace, int shards) {
        return "shard-" + shardOf(namespace, shards);
    }

    /** Every entity id of a cluster with {@code shards} directory shards. */
    public static List<String> entityIds(int shards) {
        List<String> ids = new ArrayList<>(shards);
        for (int i = 0; i < shards; i++) {
            ids.add("shard-" + i);
        }
        return ids;
    }

    /** The directory entity {@code entityId}. */
    public static Behavior<Command> create(String entityId, ManagerConfig config) {
        return create(entityId, config, Timings.DEFAULT);
    }

    /**
     * How long an entity waits on what it cannot see at once: a store no listing names ({@link #UNLISTED_PATIENCE}),
     * copies whose source said nothing ({@link #COPY_PATIENCE}), and a record short of replicas before it is copied
     * and between two checks ({@link #REPLICA_RECHECK}). A test shortens them.
     */
    record Timings(Duration unlistedPatience, Duration copyPatience, Duration recheck) {
        static final Timings DEFAULT = new Timings(UNLISTED_PATIENCE, COPY_PATIENCE, REPLICA_RECHECK);
    }

    /** An entity that waits as {@code timings} says. */
    static Behavior<Command> create(String entityId, ManagerConfig config, Timings timings) {
        int shard = Integer.parseInt(entityId.substring("shard-".length()));
        return Behaviors.withStash(10_000, stash -> Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            ctx.getSystem().receptionist().tell(Receptionist.subscribe(ManagerStore.KEY, ctx.messageAdapter(
                    Receptionist.Listing.class, l -> new StoresListed(l.getServiceInstances(ManagerStore.KEY),
                            l.getAllServiceInstances(ManagerStore.KEY)))));
            timers.startSingleTimer(RebuildTimeout.INSTANCE, REBUILD_PATIENCE);
            return new PoolDirectory(ctx, config, shard, stash, timers, timings);
        })));
    }

    private PoolDirectory(ActorContext<Command> ctx, ManagerConfig config, int shard, StashBuffer<Command> stash,
                          TimerScheduler<Command> timers, Timings timings) {
        super(ctx);
        this.unlistedPatience = timings.unlistedPatience();
        this.copyPatience = timings.copyPatience();
        this.recheck = timings.recheck();
        this.config = config;
        this.shard = shard;
        this.stash = stash;
        this.timers = timers;
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder().onMessage(Command.class, this::onCommand)
                .onSignal(org.apache.pekko.actor.typed.PostStop.class, s -> {
                    ReplicaShortfall.get(getContext().getSystem()).remove(shard);
                    return this;
                })
                .build();
    }

    private Behavior<Command> onCommand(Command command) {
        if (!ready) {
            return rebuilding(command);
        }
        switch (command) {
            case Find f -> f.replyTo().tell(find(f.namespace(), f.chain()));
            case Locate l -> l.replyTo().tell(locate(l.key()));
            case HeldAll h -> onHeldAll(h);
            case ReleasedAll r -> onReleasedAll(r);
            case ServedAll r -> onServedAll(r);
            case CopyFailed f -> onCopyFailed(f);
            case Leaving l -> l.replyTo().tell(onLeaving(l.store()));
            case StoresListed l -> onStores(l);
            case UnlistedCheck c -> onUnlistedCheck();
            case HoldingsAnswered h -> {
                if (answered(h) && awaited.isEmpty()) {
                    replicate();
                }
            }
            case Wake w -> replicate();
            case ReplicaCheck c -> replicate();
            case RebuildTimeout t -> {
            }
        }
        return this;
    }

    // ---- start: rebuild from the stores ----

    private Behavior<Command> rebuilding(Command command) {
        switch (command) {
            case StoresListed l -> {
                Set<ActorRef<ManagerStore.Command>> gone = new HashSet<>(listed);
                gone.removeAll(l.stores());
                forget(gone, false);
                listed.addAll(l.stores());
                l.stores().forEach(this::know);
                if (awaited.isEmpty() && !stores.isEmpty()) {
                    return becomeReady();
                }
            }
            case HoldingsAnswered h -> {
                if (answered(h) && awaited.isEmpty()) {
                    return becomeReady();
                }
            }
            case RebuildTimeout t -> {
                return becomeReady();
            }
            default -> stash.stash(command);
        }
        return this;
    }

    private Behavior<Command> becomeReady() {
        ready = true;
        timers.cancel(RebuildTimeout.INSTANCE);
        getContext().getLog().debug("directory shard {}: {} records on {} stores", shard, entries.size(),
                stores.size());
        replicate();
        return stash.unstashAll(this);
    }

    /**
     * Takes a store's answer (what it says it holds is a fact whichever question it answers); returns whether it
     * answered the question this entity waits on (an answer to an earlier one, asked before the store was forgotten
     * and known again, does not end the wait).
     */
    private boolean answered(HoldingsAnswered h) {
        if (stores.contains(h.store())) {
            int required = required();
            for (PoolEntry e : h.reply().entries()) {
                Entry entry = entries.computeIfAbsent(e.key(), k -> new Entry(e));
                if (entry.holders.add(h.store())) {
                    entry.copyEnded();
                }
                entry.fullAgain(required);
            }
        }
        return awaited.remove(h.store(), h.ask());
    }

    // ---- requests ----

    private Found find(String namespace, List<Long> chain) {
        List<Located> out = new ArrayList<>();
        for (long hash : chain) {
            Entry e = entries.get(new RecordKey(namespace, hash));
            if (e == null || e.holders.isEmpty()) {
                break;
            }
            out.add(new Located(e.entry, List.copyOf(e.holders)));
        }
        return new Found(out);
    }

    private Found locate(RecordKey key) {
        Entry e = entries.get(key);
        return e == null || e.holders.isEmpty() ? new Found(List.of())
                : new Found(List.of(new Located(e.entry, List.copyOf(e.holders))));
    }

    /**
     * Records a store's report. A record held by fewer stores than it should be (a host placed it while a manager
     * was unreachable or failing, or its other copy is still on its way) is looked at again a little later, and
     * copied then if it is still short.
     */
    private void onHeldAll(HeldAll h) {
        know(h.store()); // the receptionist's listing may come after the store's first report
        int required = required();
        long now = System.nanoTime();
        boolean anyShort = false;
        for (PoolEntry reported : h.entries()) {
            Entry e = entries.computeIfAbsent(reported.key(), k -> new Entry(reported));
            if (e.holders.add(h.store())) {
                e.copyEnded(); // a new holder: the copy asked of it, if one was, arrived
            }
            if (e.holders.size() < required) {
                e.shortAt(now);
                anyShort = true;
            } else {
                e.fullAgain(required);
            }
        }
        if (anyShort && !timers.isTimerActive(ReplicaCheck.INSTANCE)) {
            timers.startSingleTimer(ReplicaCheck.INSTANCE, recheck);
        }
        keepAncestorsFresh(h.entries().stream().map(PoolEntry::key).toList());
    }

    /**
     * A copy asked for failed: the record is asked for again at the next check, of the next store in its ranking, if
     * it is still short and no other copy of it is awaited. Not at once: a target that refuses at once (no room)
     * would otherwise be asked again and again as fast as the messages go. A word from a store other than the one the
     * pending copies were asked of is about an earlier ask (its source was taken for gone since) and is ignored.
     */
    private void onCopyFailed(CopyFailed f) {
        Entry e = entries.get(f.key());
        if (e == null || e.copiesPending == 0 || !f.store().equals(e.copySource)) {
            return;
        }
        e.copyEnded();
        if (!timers.isTimerActive(ReplicaCheck.INSTANCE)) {
            timers.startSingleTimer(ReplicaCheck.INSTANCE, recheck);
        }
    }

    /**
     * The next page of the records no store that stays holds but {@code store}, which is leaving, with the stores that
     * stay: those this entity knows, listed reachable or known from their reports before a listing named them (a
     * store that joined a moment ago may not be listed here yet). A record whose other holders are all leaving too is
     * among them, so that one of the leaving stores hands it over.
     */
    private LeavingReply onLeaving(ActorRef<ManagerStore.Command> store) {
        ArrayDeque<RecordKey> left = handOffs.get(store);
        if (left == null) {
            leaving.add(store);
            left = new ArrayDeque<>();
            for (Entry e : entries.values()) {
                if (e.holders.contains(store) && leaving.containsAll(e.holders)) {
                    left.add(e.entry.key());
                }
            }
            handOffs.put(store, left);
        }
        List<RecordKey> page = new ArrayList<>();
        while (page.size() < HAND_OFF_PAGE && !left.isEmpty()) {
            page.add(left.poll());
        }
        if (left.isEmpty()) {
            handOffs.remove(store);
        }
        List<ActorRef<ManagerStore.Command>> others = stores.stream().filter(s -> !leaving.contains(s)).toList();
        return new LeavingReply(page, others, !left.isEmpty());
    }

    /**
     * Counts {@code store} among the stores, when it is new to this entity, and asks it for its holdings of this
     * shard, since it may hold records it took before this entity started (a rebuild asks only the stores listed
     * then). Until every such answer is in, no record is copied: one could look short of replicas only because its
     * other holder has not answered yet. A store known from its report alone is forgotten if no listing names it
     * within {@link #UNLISTED_PATIENCE} (it stopped before its registration spread). Stores are not watched: a watch
     * of a store on a node that has just restarted on the same address can end at once, as if the new store had
     * stopped.
     */
    private void know(ActorRef<ManagerStore.Command> store) {
        if (knownSince.putIfAbsent(store, System.nanoTime()) != null) {
            return;
        }
        if (!listed.contains(store) && !timers.isTimerActive(UnlistedCheck.INSTANCE)) {
            timers.startSingleTimer(UnlistedCheck.INSTANCE, unlistedPatience);
        }
        long ask = ++asks;
        awaited.put(store, ask);
        getContext().ask(ManagerStore.HoldingsReply.class, store, REBUILD_PATIENCE,
                r -> new ManagerStore.Holdings(shard, config.directoryShards(), r),
                (reply, failure) -> new HoldingsAnswered(store, ask,
                        reply != null ? reply : new ManagerStore.HoldingsReply(store, List.of())));
    }

    /**
     * Replicas see the same uses: when one store evicts or expires records, the others drop them too rather than keep
     * copies the next rebuild would replicate again; each other holder is told once, all its records together.
     */
    private void onReleasedAll(ReleasedAll r) {
        String reason = r.reason() + " by another replica";
        byOtherHolder(r.keys(), r.store(), entries::remove)
                .forEach((store, keys) -> store.tell(new ManagerStore.Drop(List.copyOf(keys), reason)));
    }

    /**
     * {@code keys} grouped by the holders other than {@code store} (null: every holder) that {@code lookup} (getting
     * or removing each entry) finds for them; records with no entry are left out.
     */
    private static Map<ActorRef<ManagerStore.Command>, List<RecordKey>> byOtherHolder(
            List<RecordKey> keys, ActorRef<ManagerStore.Command> store, Function<RecordKey, Entry> lookup) {
        Map<ActorRef<ManagerStore.Command>, List<RecordKey>> out = new HashMap<>();
        for (RecordKey key : keys) {
            Entry e = lookup.apply(key);
            if (e == null) {
                continue;
            }
            for (ActorRef<ManagerStore.Command> s : e.holders) {
                if (!s.equals(store)) {
                    out.computeIfAbsent(s, x -> new ArrayList<>()).add(key);
                }
            }
        }
        return out;
    }

    /**
     * Records one store served are used on every other holder too, so that the replicas of a record keep one recency:
     * a record read only from one replica would otherwise age on the other, be evicted there, and take the copy that
     * serves with it (the replicas are dropped together).
     */
    private void onServedAll(ServedAll r) {
        byOtherHolder(r.keys(), r.store(), entries::get)
                .forEach((store, keys) -> store.tell(new ManagerStore.Refresh(List.copyOf(keys))));
        keepAncestorsFresh(r.keys());
    }

    /**
     * With a max age: the ancestors of {@code keys} (records a store took or served) have their last use refreshed
     * on every store that holds them. A store refreshes the ancestors it holds itself, but a chain is placed record
     * by record, so a parent held on another manager would age while its children are uploaded and read there,
     * expire as a leaf of its own store, and cut the chain (its other replicas are dropped with it). Each holder is
     * told once, all its records together.
     */
    private void keepAncestorsFresh(List<RecordKey> keys) {
        if (config.maxAge() == null) {
            return;
        }
        Set<RecordKey> ancestors = new LinkedHashSet<>();
        for (RecordKey key : keys) {
            Entry e = entries.get(key);
            RecordKey up = e == null ? null : e.entry.parent();
            while (up != null && ancestors.add(up)) {
                Entry a = entries.get(up);
                up = a == null ? null : a.entry.parent();
            }
        }
        if (!ancestors.isEmpty()) {
            byOtherHolder(List.copyOf(ancestors), null, entries::get)
                    .forEach((store, held) -> store.tell(new ManagerStore.KeepFresh(List.copyOf(held))));
        }
    }

    // ---- stores and replicas ----

    /**
     * A new listing. A store is gone when an earlier listing named it and this one does not: it stopped (it is no
     * longer registered; its records are copied at once), or the cluster finds it unreachable (they are copied once
     * short for {@link #REPLICA_RECHECK}, so a store back within that time costs no copy). A store that reported
     * records before any listing named it (its registration still spreading through the cluster) is not gone: taking
     * it for gone would have its records copied to stores that already hold them. Such a store leaves when a listing
     * has named it and a later one does not, or when no listing has named it within {@link #UNLISTED_PATIENCE}.
     */
    private void onStores(StoresListed listing) {
        Set<ActorRef<ManagerStore.Command>> gone = new HashSet<>(listed);
        gone.removeAll(listing.stores());
        Set<ActorRef<ManagerStore.Command>> unreachable = new HashSet<>(gone);
        unreachable.retainAll(listing.registered());
        gone.removeAll(unreachable);
        listed.clear();
        listed.addAll(listing.stores());
        listing.stores().forEach(this::know);
        int stoppedRecords = forget(gone, true);
        int awayRecords = forget(unreachable, false);
        if (stoppedRecords + awayRecords > 0) {
            getContext().getLog().info("directory shard {}: {} records lost a holder that is gone, {} one that is "
                    + "unreachable; {} records remain", shard, stoppedRecords, awayRecords, entries.size());
        }
        replicate();
    }

    /** Forgets the stores known from their reports alone for {@link #UNLISTED_PATIENCE}, then copies what they held. */
    private void onUnlistedCheck() {
        long now = System.nanoTime();
        Set<ActorRef<ManagerStore.Command>> unlisted = new HashSet<>();
        boolean waiting = false;
        for (ActorRef<ManagerStore.Command> s : stores) {
            if (!listed.contains(s)) {
                if (now - knownSince.get(s) >= unlistedPatience.toNanos()) {
                    unlisted.add(s);
                } else {
                    waiting = true;
                }
            }
        }
        int lost = forget(unlisted, true);
        if (lost > 0) {
            getContext().getLog().info("directory shard {}: {} records lost a holder that reported them but was never "
                    + "listed; {} records remain", shard, lost, entries.size());
        }
        if (waiting) {
            timers.startSingleTimer(UnlistedCheck.INSTANCE, unlistedPatience);
        }
        replicate();
    }

    /**
     * Forgets the stores {@code gone} and their holdings, the records they held short since now ({@code stopped}:
     * due for a copy at once); returns how many records lost a holder.
     */
    private int forget(Set<ActorRef<ManagerStore.Command>> gone, boolean stopped) {
        Set<ActorRef<ManagerStore.Command>> known = new HashSet<>(gone);
        known.retainAll(stores);
        stores.removeAll(gone);
        listed.removeAll(gone);
        leaving.removeAll(gone);
        handOffs.keySet().removeAll(gone);
        awaited.keySet().removeAll(gone);
        if (known.isEmpty()) {
            return 0;
        }
        long now = System.nanoTime();
        int lost = 0;
        for (Entry e : List.copyOf(entries.values())) {
            if (!e.holders.removeAll(known)) {
                continue;
            }
            lost++;
            if (e.holders.isEmpty()) {
                entries.remove(e.entry.key());
            } else {
                e.shortSince = stopped ? now - recheck.toNanos() : now;
                e.copiesPending = 0; // a copy from or to a store that is gone will not end
            }
        }
        return lost;
    }

    /**
     * Copies every record held by fewer stores than it should be (and by at least one) to another store, once it has
     * been short for {@link #REPLICA_RECHECK} (or lost a holder that stopped): a record a host has just retired to
     * two stores is short until the second one's report arrives, and a copy then would go to a store that is
     * receiving it already, pinning the source's copy meanwhile.
     */
    private void replicate() {
        int required = required();
        // counted before anything else: an operator reads it while a rejoined store is still being asked
        int shortNow = 0;
        for (Entry e : entries.values()) {
            if (!e.holders.isEmpty() && e.holders.size() < required) {
                shortNow++;
            }
        }
        ReplicaShortfall.get(getContext().getSystem()).set(shard, shortNow);
        if (!awaited.isEmpty()) {
            return; // once the stores new to this entity have said what they hold
        }
        long now = System.nanoTime();
        boolean asked = false;
        boolean waiting = false;
        for (Entry e : entries.values()) {
            if (e.holders.isEmpty() || e.holders.size() >= required) {
                e.notShort();
                continue;
            }
            e.shortAt(now);
            if (now - e.shortSince < recheck.toNanos()
                    || (e.copiesAsked > 0 && now - e.copiesAskedAt < recheck.toNanos())
                    || (e.copiesPending > 0 && now - e.copiesAskedAt < copyPatience.toNanos())) {
                waiting = true;
                continue;
            }
            if (leaving.containsAll(e.holders)) {
                continue; // held by stores that are leaving only: they hand it over themselves as they stop
            }
            List<ActorRef<ManagerStore.Command>> targets = ranked(e.entry.key(), e.holders);
            ActorRef<ManagerStore.Command> source = e.holders.stream().filter(h -> !leaving.contains(h)).findFirst()
                    .orElseThrow();
            // The first ask goes to the first stores of the ranking; after a copy failed (a target whose data plane
            // cannot be reached, or that had no room) the next ask starts one store further down, round the
            // ranking, rather than ask the same store again and again.
            int copies = 0;
            for (int i = 0; i < required - e.holders.size() && i < targets.size(); i++) {
                source.tell(new ManagerStore.CopyTo(e.entry.key(),
                        targets.get((e.copiesAsked + i) % targets.size())));
                copies++;
                asked = true;
            }
            e.copiesAsked++;
            e.copiesPending = copies;
            e.copiesAskedAt = now;
            e.copySource = source;
        }
        if (asked) {
            // Look again until every record has its replicas (a copy whose source went silent is asked for again).
            timers.startSingleTimer(ReplicaCheck.INSTANCE, recheck);
        } else if (waiting && !timers.isTimerActive(ReplicaCheck.INSTANCE)) {
            timers.startSingleTimer(ReplicaCheck.INSTANCE, recheck);
        }
    }

    private int required() {
        return Math.min(config.replicas(), stores.size());
    }

    /**
     * Live stores other than {@code except} and those leaving, by rendezvous hash with the key: every node ranks them
     * alike.
     */
    private List<ActorRef<ManagerStore.Command>> ranked(RecordKey key, Set<ActorRef<ManagerStore.Command>> except) {
        return Placement.ranked(key, stores.stream().filter(s -> !except.contains(s) && !leaving.contains(s))
                .toList());
    }
}
