package dev.selene.actors.cache;

import dev.selene.actors.cache.Store.Delete;
import dev.selene.actors.cache.Store.NotWritten;
import dev.selene.actors.cache.Store.Read;
import dev.selene.actors.cache.Store.ReadFailed;
import dev.selene.actors.cache.Store.ReadReply;
import dev.selene.actors.cache.Store.Settle;
import dev.selene.actors.cache.Store.SettleRead;
import dev.selene.actors.cache.Store.Write;
import dev.selene.actors.cache.Store.WriteFailed;
import dev.selene.actors.cache.Store.WriteReply;
import dev.selene.actors.cache.Store.Written;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.pool.ManagerConfig;
import dev.selene.actors.pool.ManagerStore;
import dev.selene.actors.pool.PoolCluster;
import dev.selene.actors.pool.PoolDirectory;
import dev.selene.actors.pool.PoolEntry;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.trace.TraceSource;
import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.host.HostMemory;
import dev.selene.transport.pool.DataPlane;
import dev.selene.transport.pool.NettyDataPlane;
import dev.selene.transport.pool.OutgoingImage;
import dev.selene.transport.pool.RecordImage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The host side of the shared pool, a store like the disk store: a write retires a record (the directory places
 * it on {@code replicas} managers, and it counts as written once each of them has stored and validated it), a read
 * fetches one into staging slots (failing over to the next holder); a delete only forgets (the pool is shared, its
 * managers decide what it keeps). It also
 * answers which part of a chain the pool holds ({@link Find}), so a match can go on where the host's own tiers
 * end. Each transfer is a child actor; this actor keeps which are running, for settles.
 */
final class PoolStore extends AbstractBehavior<Store.Command> {

    /** Asks for the longest run of {@code chain} (record key hashes, in order) the pool holds. */
    record Find(String namespace, List<Long> chain, ActorRef<Found> replyTo) implements Store.Command {
    }

    /** Reply to {@link Find}: the entries in chain order (empty when the directory did not answer). */
    record Found(List<PoolEntry> entries) {
    }

    private record Placed(Write write, RecordImage.Frame frame, PoolDirectory.Placed placed, Throwable failure)
            implements Store.Command {
    }

    private record Located(Read read, PoolDirectory.Found found, Throwable failure) implements Store.Command {
    }

    private record StoresListed(boolean any) implements Store.Command {
    }

    private record FindAnswered(ActorRef<Found> replyTo, PoolDirectory.Found found)
            implements Store.Command {
    }

    private record WriteEnded(RecordKey key, WriteReply reply) implements Store.Command {
    }

    /** From a fetch child: how the read into the staging slots starting at {@code firstSlot} ended. */
    record FetchEnded(int firstSlot, ReadReply reply) implements Store.Command {
    }

    /** Directory shards of the pool's cluster: the same number on hosts and managers. */
    static final int DIRECTORY_SHARDS = ManagerConfig.DEFAULT_DIRECTORY_SHARDS;

    /** How long a directory request may take (a lost manager's shards move to another within seconds). */
    static final Duration DIRECTORY_TIMEOUT = Duration.ofSeconds(5);
    /** Why a transfer fails at once while no manager is up. */
    static final String NO_MANAGER = "no pool manager is up";

    /** How long one retirement may take, all replicas together. */
    static final Duration UPLOAD_DEADLINE = Duration.ofSeconds(60);
    /** How long a fetch may take on one holder before the next holder is tried. */
    static final Duration FETCH_HOLDER_DEADLINE = Duration.ofSeconds(10);
    /** Threads of a host's data plane. */
    static final int DATA_THREADS = 2;

    private final Layout layout;
    private final HostMemory host;
    private final CacheMetrics metrics;
    private final TraceBook traces;
    private final TraceSource origin;
    private final ClusterSharding sharding;
    private final DataPlane data;
    private final int shards;
    private final Map<RecordKey, List<ActorRef<WriteReply>>> writing = new HashMap<>();
    private final Map<Integer, List<ActorRef<ReadReply>>> reading = new HashMap<>();
    /** When each running read started, by its first staging slot. */
    private final Map<Integer, Long> readStarted = new HashMap<>();
    private final Map<RecordKey, WriteReply> ended = new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<RecordKey, WriteReply> eldest) {
            return size() > DiskStore.RECENT_OUTCOMES;
        }
    };
    private long transfers;
    private final Runnable onReachable;
    private boolean everUp;
    private boolean up;

    /**
     * The pool store of a host whose cluster has {@code shards} directory shards; {@code onReachable} runs once,
     * when a manager's store is first seen in the cluster.
     */
    static Behavior<Store.Command> create(Layout layout, HostMemory host, int shards, CacheMetrics metrics,
                                          TraceBook traces, Runnable onReachable) {
        return Behaviors.setup(ctx -> {
            ctx.getSystem().receptionist().tell(Receptionist.subscribe(ManagerStore.KEY, ctx.messageAdapter(
                    Receptionist.Listing.class, l -> new StoresListed(!l.getServiceInstances(ManagerStore.KEY)
                            .isEmpty()))));
            return new PoolStore(ctx, layout, host, shards, metrics, traces, onReachable);
        });
    }

    private PoolStore(ActorContext<Store.Command> ctx, Layout layout, HostMemory host, int shards,
                      CacheMetrics metrics, TraceBook traces, Runnable onReachable) {
        super(ctx);
        this.origin = TraceSource.of("PoolStore", ctx);
        this.onReachable = onReachable;
        this.layout = layout;
        this.host = host;
        this.shards = shards;
        this.metrics = metrics;
        this.traces = traces;
        this.sharding = ClusterSharding.get(ctx.getSystem());
        this.data = NettyDataPlane.client(NettyDataPlane.Backend.best(), NettyDataPlane.DEFAULT_SILENCE,
                DATA_THREADS);
        // Hosts only proxy to the directory: its entities run on manager nodes, so this factory is never used here.
        sharding.init(Entity.of(PoolDirectory.TYPE, e -> Behaviors.<PoolDirectory.Command>empty())
                .withRole(PoolCluster.MANAGER_ROLE));
    }

    @Override
    public Receive<Store.Command> createReceive() {
        // The data plane's threads read and write the host's slots: they stop before the node unmaps them.
        return newReceiveBuilder().onMessage(Store.Command.class, this::onCommand)
                .onSignal(PostStop.class, s -> closeData())
                .onSignal(PreRestart.class, s -> closeData())
                .build();
    }

    private Behavior<Store.Command> closeData() {
        data.close();
        return this;
    }

    private Behavior<Store.Command> onCommand(Store.Command command) {
        switch (command) {
            case Write w -> onWrite(w);
            case Placed p -> onPlaced(p);
            case WriteEnded e -> onWriteEnded(e);
            case Read r -> onRead(r);
            case Located l -> onLocated(l);
            case FetchEnded e -> finishRead(e.firstSlot(), e.reply());
            case Delete d -> onDelete(d);
            case Settle s -> onSettle(s);
            case SettleRead s -> onSettleRead(s);
            case Find f -> onFind(f);
            case StoresListed l -> onStoresListed(l.any());
            case FindAnswered a -> {
                List<PoolEntry> entries = new ArrayList<>();
                if (a.found() != null) {
                    a.found().records().forEach(l -> entries.add(l.entry()));
                }
                a.replyTo().tell(new Found(entries));
            }
            default -> throw new IllegalArgumentException("not a pool store command: " + command);
        }
        return this;
    }

    private void onStoresListed(boolean any) {
        if (any && !everUp) {
            everUp = true;
            onReachable.run();
        } else if (any != up) {
            getContext().getLog().warn(any ? "a pool manager is up again"
                    : "no pool manager is up: retirements fail and the pool's records are misses until one is");
        }
        up = any;
    }

    // ---- retire ----

    private void onWrite(Write w) {
        RecordKey key = w.spec().key();
        writing.computeIfAbsent(key, k -> new ArrayList<>()).add(w.replyTo());
        ended.remove(key);
        if (!up) {
            finishWrite(key, new WriteFailed(key, false, NO_MANAGER));
            return;
        }
        RecordImage.Frame frame;
        try {
            frame = RecordImage.frame(w.spec(), layout, shares(w.slots()));
        } catch (RuntimeException e) {
            finishWrite(key, new WriteFailed(key, false, "could not frame it: " + e.getMessage()));
            return;
        }
        PoolEntry entry = PoolEntry.of(w.spec(), RecordImage.imageBytes(layout, w.spec().hasRow()));
        traces.append(key, origin, "Retire: asking the directory where");
        getContext().ask(PoolDirectory.Placed.class, directory(key.namespace()), DIRECTORY_TIMEOUT,
                r -> new PoolDirectory.Place(entry, r), (placed, failure) -> new Placed(w, frame, placed, failure));
    }

    private void onPlaced(Placed p) {
        RecordKey key = p.write().spec().key();
        if (p.failure() != null) {
            // The directory is moving (its manager left) or busy: not a failed record. The record actor asks again.
            traces.append(key, origin, "The pool directory did not answer; the retirement is asked again");
            finishWrite(key, new NotWritten(key));
            return;
        }
        if (p.placed().present()) {
            traces.append(key, origin, "Already in the pool");
            finishWrite(key, new Written(key, RecordImage.imageBytes(layout, p.write().spec().hasRow()), 0));
            return;
        }
        if (p.placed().stores().isEmpty()) {
            finishWrite(key, new WriteFailed(key, false, NO_MANAGER));
            return;
        }
        traces.append(key, origin, "Retire: sending to " + p.placed().stores().size() + " manager(s)");
        boolean hasRow = p.write().spec().hasRow();
        PoolEntry entry = PoolEntry.of(p.write().spec(), RecordImage.imageBytes(layout, hasRow));
        OutgoingImage image = new OutgoingImage(layout, hasRow, p.frame().headerBlock(), p.frame().footerBlock(),
                shares(p.write().slots()));
        ActorRef<WriteReply> done = getContext().messageAdapter(WriteReply.class, r -> new WriteEnded(r.key(), r));
        getContext().spawn(PoolUpload.create(entry, image, data, p.placed().stores(), UPLOAD_DEADLINE, done),
                "upload-" + (++transfers));
    }

    private void onWriteEnded(WriteEnded e) {
        finishWrite(e.key(), e.reply());
    }

    private void finishWrite(RecordKey key, WriteReply reply) {
        switch (reply) {
            case Written w -> {
                metrics.poolRetired(w.bytes(), w.nanos());
                traces.append(key, origin, "Retired: held by the pool");
            }
            case WriteFailed f -> {
                metrics.poolRetireFailed();
                traces.append(key, origin, "Retire failed: " + f.reason());
                getContext().getLog().info("retiring {} to the pool failed: {}", key, f.reason());
            }
            case NotWritten n -> {
            }
        }
        ended.put(key, reply);
        List<ActorRef<WriteReply>> waiting = writing.remove(key);
        if (waiting != null) {
            waiting.forEach(r -> r.tell(reply));
        }
    }

    private void onSettle(Settle s) {
        List<ActorRef<WriteReply>> waiting = writing.get(s.key());
        if (waiting != null) {
            waiting.add(s.replyTo());
        } else {
            WriteReply outcome = ended.get(s.key());
            s.replyTo().tell(outcome != null ? outcome : new NotWritten(s.key()));
        }
    }

    // ---- restore ----

    private void onRead(Read r) {
        reading.computeIfAbsent(r.slots().slot(0), k -> new ArrayList<>()).add(r.replyTo());
        readStarted.putIfAbsent(r.slots().slot(0), System.nanoTime());
        if (!up) {
            finishRead(r.slots().slot(0), new ReadFailed(r.key(), false, NO_MANAGER));
            return;
        }
        getContext().ask(PoolDirectory.Found.class, directory(r.key().namespace()), DIRECTORY_TIMEOUT,
                q -> new PoolDirectory.Locate(r.key(), q), (found, failure) -> new Located(r, found, failure));
    }

    private void onLocated(Located l) {
        Read r = l.read();
        if (l.failure() != null) {
            finishRead(r.slots().slot(0), new ReadFailed(r.key(), false, "the pool directory did not answer: "
                    + l.failure().getMessage()));
            return;
        }
        if (l.found().records().isEmpty()) {
            finishRead(r.slots().slot(0), new ReadFailed(r.key(), true, "the pool no longer holds it"));
            return;
        }
        // The child answers with its staging slot: a message adapter could not tell two fetches apart (an actor has
        // one adapter per reply class).
        getContext().spawn(PoolFetch.create(r.key(), layout, shares(r.slots()), data,
                l.found().records().getFirst().holders(), FETCH_HOLDER_DEADLINE, getContext().getSelf(),
                r.slots().slot(0)), "fetch-" + (++transfers));
    }

    private void finishRead(int firstSlot, ReadReply reply) {
        Long started = readStarted.remove(firstSlot);
        if (reply instanceof Store.ReadDone d) {
            metrics.poolRead(d.bytes(), started == null ? 0 : System.nanoTime() - started);
            traces.append(d.key(), origin, "Fetched from the pool: " + d.bytes() + " bytes, verified");
        } else if (reply instanceof ReadFailed f) {
            metrics.poolReadFailed();
            traces.append(f.key(), origin, "Fetch failed: " + f.reason());
        }
        List<ActorRef<ReadReply>> waiting = reading.remove(firstSlot);
        if (waiting != null) {
            waiting.forEach(w -> w.tell(reply));
        }
    }

    private void onSettleRead(SettleRead s) {
        List<ActorRef<ReadReply>> waiting = reading.get(s.slots().slot(0));
        if (waiting != null) {
            waiting.add(s.replyTo());
        } else {
            s.replyTo().tell(new ReadFailed(s.key(), false, "no read of it is running"));
        }
    }

    // ---- lookups and removal ----

    private void onFind(Find f) {
        if (f.chain().isEmpty() || !up) {
            f.replyTo().tell(new Found(List.of()));
            return;
        }
        ActorRef<Found> replyTo = f.replyTo();
        getContext().ask(PoolDirectory.Found.class, directory(f.namespace()), DIRECTORY_TIMEOUT,
                q -> new PoolDirectory.Find(f.namespace(), f.chain(), q),
                (found, failure) -> new FindAnswered(replyTo, found));
    }

    /**
     * The catalog forgot records (for room in its own bookkeeping, expiry, an operator's eviction): the pool's copies
     * stay, since other hosts may use them; the managers drop them by their own recency, size and max age.
     */
    private void onDelete(Delete d) {
        for (RecordKey k : d.keys()) {
            ended.remove(k);
            traces.append(k, origin, "Forgotten by this host; the pool keeps its copy");
        }
    }

    private EntityRef<PoolDirectory.Command> directory(String namespace) {
        return sharding.entityRefFor(PoolDirectory.TYPE, PoolDirectory.entityId(namespace, shards));
    }

    private PieceShares shares(SlotList slots) {
        int page = layout.pageBytes();
        return (piece, rank) -> host.share(slots.slot(piece), rank, page);
    }
}
