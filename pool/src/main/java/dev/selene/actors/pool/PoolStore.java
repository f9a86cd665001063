package dev.selene.actors.pool;

import dev.selene.actors.cache.Piped;
import dev.selene.actors.store.Store;
import dev.selene.actors.store.Store.Delete;
import dev.selene.actors.store.Store.NotWritten;
import dev.selene.actors.store.Store.Read;
import dev.selene.actors.store.Store.ReadFailed;
import dev.selene.actors.store.Store.ReadReply;
import dev.selene.actors.store.Store.Settle;
import dev.selene.actors.store.Store.SettleRead;
import dev.selene.actors.store.Store.Write;
import dev.selene.actors.store.Store.WriteFailed;
import dev.selene.actors.store.Store.WriteReply;
import dev.selene.actors.store.Store.Written;
import dev.selene.actors.value.LogMarkers;
import dev.selene.actors.metrics.CacheMetrics;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.trace.TraceSource;
import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.slots.SlotList;
import dev.selene.transport.host.HostMemory;
import dev.selene.transport.pool.DataAddress;
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
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The host side of the shared pool, a store like the disk store: a write retires a record (placed on
 * {@code replicas} managers by rendezvous hashing over the managers' stores the cluster lists, and counted as
 * written once each of them has stored and validated it), a read fetches one into staging slots (failing over to
 * the next holder); a delete only forgets (the pool is shared, its managers decide what it keeps). It also answers
 * which part of a chain the pool holds ({@link Store.Find}), so a match can go on where the host's own tiers end.
 *
 * <p>The cluster is the control plane: it lists the stores (each tells, once, where its data plane listens, its
 * layout and its replica count) and the directory says who holds what. Record bytes go on the data plane, named by
 * their keys, with no cluster message per transfer. A record this host knows without a lookup (one it retired) is read
 * from the stores its key ranks first, as it was placed; the directory is asked only when they do not hold it.
 */
final class PoolStore extends AbstractBehavior<Store.Command> {

    /**
     * The directory's answer to lookup {@code id} (null: it failed or timed out); {@code heldBack} once a test's
     * {@link #directoryHeldBack} has delayed it.
     */
    private record DirectoryAnswered(long id, PoolDirectory.Found found, boolean heldBack) implements Store.Command {
    }

    /** The directory has not answered lookup {@code id} within the failover deadline. */
    private record DirectoryLate(long id) implements Store.Command {
    }

    /** A store's answer to lookup {@code id}'s probe (null: none in time). */
    private record StoreProbed(long id, ActorRef<ManagerStore.Command> store, List<PoolEntry> held)
            implements Store.Command {
    }

    /** A fetch from the store at {@code address} failed (it did not say it lacks the record: it failed). */
    private record HolderFailed(DataAddress address) implements Store.Command {
    }

    /** Checks whether still no manager is up, {@code generation} counting the times the last one went. */
    private record NoManagerCheck(long generation) implements Store.Command {
    }

    private record StoresListed(Set<ActorRef<ManagerStore.Command>> stores) implements Store.Command {
    }

    /** A starting host has waited long enough for the rest of the managers' stores: it starts with those it has. */
    private enum StartGraceEnded implements Store.Command {
        INSTANCE
    }

    /** A listed store's figures: where its data plane listens, its layout, its replica count. */
    private record StoreAnswered(ActorRef<ManagerStore.Command> store, ManagerStore.StoreStatus status,
                                 Throwable failure) implements Store.Command {
    }

    private record WriteEnded(RecordKey key, PoolUpload.Outcome outcome) implements Store.Command {
    }

    /** A cluster member became unreachable or reachable again. */
    private record Reachability(String address, boolean reachable) implements Store.Command {
    }

    /** How the read into the staging slots starting at {@code firstSlot} ended. */
    private record FetchEnded(int firstSlot, ReadReply reply) implements Store.Command {
    }

    /**
     * How the read of {@code read} from the stores tried first ({@code tried}: those the lookup that found it named,
     * or those its key's placement ranks first) ended: done, or failed, and then the directory is asked who holds it
     * now.
     */
    private record FirstFetchEnded(Read read, List<ActorRef<ManagerStore.Command>> tried, ReadReply reply)
            implements Store.Command {
    }

    /**
     * What the holders of {@code read} that this host had not seen listed said of themselves ({@code answers}; a
     * null status: no answer in time): the fetch from {@code from} goes on with those that answered.
     */
    private record UnlistedHoldersAnswered(Read read, List<ActorRef<ManagerStore.Command>> from,
                                           java.util.function.Function<ReadReply, Store.Command> ended,
                                           List<StoreAnswered> answers) implements Store.Command {
    }

    /**
     * Stores this JVM's hosts leave out of the cluster's listings, as if it had not listed them yet: a fault injected
     * by tests only (a host that joined a moment ago learns the stores one by one); nothing else sets it.
     */
    static volatile java.util.function.Predicate<ActorRef<?>> notYetListed = s -> false;

    /**
     * How long this JVM's hosts hold the directory's answers back before they use them, as if the directory were
     * late: a fault injected by tests only (zero: not at all); nothing else sets it.
     */
    static volatile Duration directoryHeldBack = Duration.ZERO;

    /** Directory shards of the pool's cluster: the same number on hosts and managers. */
    static final int DIRECTORY_SHARDS = ManagerConfig.DEFAULT_DIRECTORY_SHARDS;

    /**
     * How long a directory request may take in all (a lost manager's shards move to another within seconds); the
     * stores themselves are asked once it has not answered within the failover deadline.
     */
    static final Duration DIRECTORY_TIMEOUT = Duration.ofSeconds(5);
    /** How long after a directory entity was late lookups of its namespaces ask the stores at once as well. */
    static final Duration DIRECTORY_LATE_MEMORY = Duration.ofSeconds(2);
    /** Why a transfer fails at once while no manager is up. */
    static final String NO_MANAGER = "no pool manager is up";

    /** How long one retirement may take, all replicas together. */
    static final Duration UPLOAD_DEADLINE = Duration.ofSeconds(60);
    /**
     * How long a fetch may take on one holder in all before the next holder is tried: a safety net only, for a
     * holder that trickles bytes; a silent holder is left after the failover deadline.
     */
    static final Duration FETCH_HOLDER_DEADLINE = Duration.ofSeconds(60);
    /** Threads of a host's data plane. */
    static final int DATA_THREADS = 2;
    /**
     * How long a starting host that uses some managers' stores waits for the others the cluster has up (at most half
     * the time it may wait for a manager at all): started with fewer, it would place its first retirements on fewer
     * replicas than the pool keeps.
     */
    static final Duration START_GRACE = Duration.ofSeconds(5);

    /**
     * The start's grace in this JVM ({@link #START_GRACE}): a test that starts a manager while a host waits sets it
     * longer, so that a slow machine does not end the wait first; nothing else sets it.
     */
    static volatile Duration startGrace = START_GRACE;
    /** How long a listed store may take to say where its data plane listens. */
    static final Duration STORE_STATUS_TIMEOUT = Duration.ofSeconds(5);
    /**
     * How long a store whose data connection failed is left out of placement and tried last for reads: long enough
     * for the retirements behind it not to fail the same way, short enough to take it back soon after it recovers.
     */
    static final Duration SUSPECT_FOR = Duration.ofSeconds(3);
    /** How long a host leaves out a manager that refused an upload because it is stopping. */
    static final Duration STOPPING_SUSPECT_FOR = Duration.ofSeconds(60);
    /** Holders of records found in the pool that a host remembers for the reads that follow its lookups. */
    static final int HOLDERS_REMEMBERED = 16_384;

    private final Layout layout;
    /** What a slot byte of the managers' room is worth in the image bytes the catalog charges. */
    private final double imageBytesPerSlotByte;
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
            return size() > Store.RECENT_OUTCOMES;
        }
    };
    /** The managers' stores the cluster lists and this host can use: where each one's data plane listens. */
    private static final long RETIRE_FAILURE_LOG_INTERVAL_NANOS = 1_000_000_000L;

    private final Map<ActorRef<ManagerStore.Command>, ManagerStore.StoreStatus> stores = new HashMap<>();
    /** How long this host waits, once every manager has gone, for one to come back before it stops. */
    private final Duration joinTimeout;
    /** Counts the times the last manager went (a check made for an earlier time is void). */
    private long noManagerGeneration;
    /** Retirements that failed since the last one logged, and when one was logged last (nanos). */
    private long retireFailuresUnlogged;
    private long retireFailureLoggedAt = System.nanoTime() - RETIRE_FAILURE_LOG_INTERVAL_NANOS;
    private Set<ActorRef<ManagerStore.Command>> listed = Set.of();
    /** Stores left out for now, until when ({@link System#nanoTime()}; Long.MAX_VALUE: while unreachable). */
    private final Map<ActorRef<ManagerStore.Command>, Long> suspect = new HashMap<>();
    private final Set<String> unreachable = new java.util.HashSet<>();
    /** Who held the records the last lookups found, for the reads that follow them. */
    private final Map<RecordKey, List<ActorRef<ManagerStore.Command>>> holders =
            new LinkedHashMap<>(1024, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<RecordKey, List<ActorRef<ManagerStore.Command>>> e) {
                    return size() > HOLDERS_REMEMBERED;
                }
            };
    /** Directory entities that were late to answer, until when the stores are asked at once beside them. */
    private final Map<String, Long> directoryLate = new HashMap<>();
    /** Lookups waiting for the directory or the stores, by id. */
    private final Map<Long, Lookup> lookups = new HashMap<>();
    private long lookupIds;
    /** Lookups the stores answered because the directory did not in time. */
    private long lookupsFromStores;
    private final Duration failover;
    private final Runnable onReachable;
    private final java.util.function.Consumer<String> onMisfit;
    /** Who is told the pool's capacity; it outlives a restart of this actor (it belongs to the behaviour's factory). */
    private final List<ActorRef<Store.Capacity>> capacityWatchers;
    private Store.Capacity capacity;
    /** Whether the node has been told the pool is reachable; it outlives a restart of this actor, as it does. */
    private final java.util.concurrent.atomic.AtomicBoolean started;
    private boolean up;
    /**
     * By when a starting host stops waiting for more stores than it has: half its wait for a manager at all, counted
     * from the node's start, as the node counts that wait.
     */
    private final long startBy;
    /** When this starting host's grace for more stores ends, counted from the first it used (once it has one). */
    private long graceEnds;
    private boolean graceCounting;
    /** Retirements in flight placed on, or stored by, fewer managers than the replica count. */
    private final Set<RecordKey> shortOfReplicas = new HashSet<>();
    /** Retirements and fetches on the data plane now, and since when each kind has had one in flight throughout. */
    private int uploadsInFlight;
    private long uploadBusySince;
    private int fetchesInFlight;
    private long fetchBusySince;

    /**
     * The pool store of a host whose cluster has {@code shards} directory shards; {@code onReachable} runs once,
     * when the host uses as many managers' stores as the pool keeps replicas, or every manager's the cluster has, or
     * 5 s after the first (at most half of {@code joinTimeout}, the node's wait for it from now); {@code onMisfit}
     * runs, with one line naming both layouts, when a manager of another layout is seen before any this host can use.
     */
    static Behavior<Store.Command> create(Layout layout, HostMemory host, int shards, CacheMetrics metrics,
                                          TraceBook traces, Runnable onReachable,
                                          java.util.function.Consumer<String> onMisfit, Duration joinTimeout) {
        List<ActorRef<Store.Capacity>> capacityWatchers = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean refusalsCounted = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
        long startBy = System.nanoTime() + joinTimeout.dividedBy(2).toNanos();
        return Behaviors.setup(ctx -> {
            // This host's TLS refusals are counted once per node, not again when the store restarts.
            dev.selene.transport.tls.PoolTls tls = PoolSecurity.from(ctx.getSystem().settings().config()).poolTls();
            if (tls != null && refusalsCounted.compareAndSet(false, true)) {
                PoolMetrics.countHostRefusals(Cluster.get(ctx.getSystem()).selfMember().address().toString(), tls);
            }
            ctx.getSystem().receptionist().tell(Receptionist.subscribe(ManagerStore.KEY, ctx.messageAdapter(
                    Receptionist.Listing.class, l -> new StoresListed(l.getServiceInstances(ManagerStore.KEY).stream()
                            .filter(st -> !notYetListed.test(st)).collect(java.util.stream.Collectors.toSet())))));
            // A manager the failure detector suspects is left out of placement and tried last for reads at once,
            // long before the cluster downs it.
            Cluster.get(ctx.getSystem()).subscriptions().tell(Subscribe.create(ctx.messageAdapter(
                    ClusterEvent.ReachabilityEvent.class, e -> new Reachability(e.member().address().toString(),
                            e instanceof ClusterEvent.ReachableMember)), ClusterEvent.ReachabilityEvent.class));
            return new PoolStore(ctx, layout, host, shards, metrics, traces, onReachable, onMisfit,
                    capacityWatchers, started, startBy, joinTimeout);
        });
    }

    private PoolStore(ActorContext<Store.Command> ctx, Layout layout, HostMemory host, int shards,
                      CacheMetrics metrics, TraceBook traces, Runnable onReachable,
                      java.util.function.Consumer<String> onMisfit, List<ActorRef<Store.Capacity>> capacityWatchers,
                      java.util.concurrent.atomic.AtomicBoolean started, long startBy, Duration joinTimeout) {
        super(ctx);
        this.joinTimeout = joinTimeout;
        // A store restarted (by its supervisor) on a node that had started takes its managers as up until its first
        // listing says otherwise, so that finding none then counts as losing them (and starts the wait to stop).
        this.up = started.get();
        this.capacityWatchers = capacityWatchers;
        this.onMisfit = onMisfit;
        this.origin = TraceSource.of("PoolStore", ctx);
        this.onReachable = onReachable;
        this.layout = layout;
        this.imageBytesPerSlotByte = imageBytesPerSlotByte(layout);
        this.host = host;
        this.shards = shards;
        this.metrics = metrics;
        this.traces = traces;
        this.sharding = ClusterSharding.get(ctx.getSystem());
        this.failover = PoolCluster.failoverAfter(ctx.getSystem().settings().config());
        this.started = started;
        this.startBy = startBy;
        // A transfer that moves no byte for the failover deadline fails (a slow one that keeps moving does not):
        // the retirement completes on the other replicas, the read goes to the next holder. TLS when the node's
        // cluster runs it (the same certificates: PoolCluster wrote them into its settings).
        this.data = NettyDataPlane.client(NettyDataPlane.Backend.best(), failover, DATA_THREADS,
                PoolSecurity.from(ctx.getSystem().settings().config()).dataPlane());
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
            case WriteEnded e -> {
                // guarded: after a restart the count starts at 0 while the earlier incarnation's answers arrive
                if (uploadsInFlight > 0 && --uploadsInFlight == 0) {
                    metrics.poolBusy(CacheMetrics.Direction.WRITE, System.nanoTime() - uploadBusySince);
                }
                onWriteEnded(e);
            }
            case Read r -> onRead(r);
            case DirectoryAnswered a -> onDirectoryAnswered(a);
            case DirectoryLate l -> onDirectoryLate(l);
            case StoreProbed p -> onStoreProbed(p);
            case HolderFailed f -> suspectStores(List.of(f.address()));
            case FetchEnded e -> {
                fetchEnded();
                finishRead(e.firstSlot(), e.reply());
            }
            case FirstFetchEnded e -> {
                fetchEnded();
                onFirstFetchEnded(e);
            }
            case Delete d -> onDelete(d);
            case Settle s -> onSettle(s);
            case SettleRead s -> onSettleRead(s);
            case Store.Find f -> onFind(f);
            case Store.WatchCapacity w -> {
                capacityWatchers.add(w.replyTo());
                if (capacity != null) {
                    w.replyTo().tell(capacity);
                }
            }
            case StoresListed l -> onStoresListed(l.stores());
            case NoManagerCheck c -> onNoManagerCheck(c);
            case StartGraceEnded g -> noteUp();
            case StoreAnswered a -> onStoreAnswered(a);
            case UnlistedHoldersAnswered u -> onUnlistedHoldersAnswered(u);
            case Reachability r -> {
                if (r.reachable()) {
                    unreachable.remove(r.address());
                } else {
                    unreachable.add(r.address());
                }
            }
            default -> throw new IllegalArgumentException("not a pool store command: " + command);
        }
        return this;
    }

    private void onStoresListed(Set<ActorRef<ManagerStore.Command>> now) {
        listed = now;
        stores.keySet().retainAll(now);
        for (ActorRef<ManagerStore.Command> s : now) {
            if (!stores.containsKey(s)) {
                getContext().ask(ManagerStore.StoreStatus.class, s, STORE_STATUS_TIMEOUT, ManagerStore.GetStatus::new,
                        (status, failure) -> new StoreAnswered(s, status, failure));
            }
        }
        noteUp();
    }

    private void onStoreAnswered(StoreAnswered a) {
        if (!listed.contains(a.store())) {
            return;
        }
        if (a.failure() != null) {
            // Asked again the next time the cluster's listing changes; meanwhile this host does not use it.
            getContext().getLog().warn("pool manager {} did not say where its data plane listens: {}",
                    a.store().path().address(), a.failure().getMessage());
            return;
        }
        use(a);
    }

    /** Uses the store that answered {@code a} from now on, unless it holds another layout than this host. */
    private void use(StoreAnswered a) {
        if (!layout.name().equals(a.status().layout())) {
            String line = "pool manager " + a.store().path().address().hostPort() + " holds the "
                    + a.status().layout() + " layout and this host the " + layout.name() + " layout (selene.layout): "
                    + "records cannot move between them";
            if (!started.get() && stores.isEmpty()) {
                // The host does not start: the line reaches its starter as the reason, so it is marked as such.
                getContext().getLog().error(LogMarkers.START_FAILURE, "{}; this host does not use it", line);
                onMisfit.accept(line); // refused at join: the host does not start with a pool it cannot use
            } else {
                getContext().getLog().error("{}; this host does not use it", line);
            }
            return;
        }
        stores.put(a.store(), a.status());
        noteUp();
    }

    private void noteUp() {
        noteCapacity();
        boolean any = !stores.isEmpty();
        if (!started.get()) {
            if (any && readyToStart()) {
                started.set(true);
                onReachable.run();
            }
        } else if (any != up) {
            getContext().getLog().warn(any ? "a pool manager is up again"
                    : "no pool manager is up: retirements fail and the pool's records are misses until one is");
            noManagerGeneration++;
            if (!any) {
                getContext().scheduleOnce(joinTimeout, getContext().getSelf(),
                        new NoManagerCheck(noManagerGeneration));
            }
        }
        up = any;
    }

    /**
     * Stops the node when no manager has come back within the join timeout: managers that left (stopped, or
     * restarted into a cluster of their own) never return to this host's cluster, which only a new start of the
     * host joins. The node stops as one the cluster removed, so that its supervisor restarts it.
     */
    private void onNoManagerCheck(NoManagerCheck c) {
        if (c.generation() != noManagerGeneration || !stores.isEmpty()) {
            return;
        }
        getContext().getLog().error("no pool manager has been in this host's cluster for {} s "
                + "(selene.pool.join-timeout): they left or were restarted, and only a new start of this host joins "
                + "them again; stopping", joinTimeout.toSeconds());
        org.apache.pekko.actor.CoordinatedShutdown.get(getContext().getSystem()).run(PoolCluster.PoolLost.INSTANCE);
    }

    /**
     * Whether a starting host that uses at least one store starts now: it uses as many stores as the pool keeps
     * replicas, or every manager's the cluster has up or joining, or it waited the start's grace for the others (the
     * cluster lists the stores to a new member one by one as its gossip spreads).
     */
    private boolean readyToStart() {
        long now = System.nanoTime();
        if (!graceCounting) {
            graceCounting = true;
            graceEnds = now + Math.min(startBy - now, startGrace.toNanos());
            if (graceEnds - now > 0) {
                getContext().scheduleOnce(Duration.ofNanos(graceEnds - now), getContext().getSelf(),
                        StartGraceEnded.INSTANCE);
            }
        }
        return stores.size() >= replicas() || usesEveryManager(true) || graceEnds - now <= 0;
    }

    /** Replicas the pool keeps of each record: the most any store this host uses says (1 before it uses one). */
    private int replicas() {
        return stores.values().stream().mapToInt(ManagerStore.StoreStatus::replicas).max().orElse(1);
    }

    /**
     * Tells the watchers what the pool can hold when that changed. With no usable manager the last figure stands:
     * a manager that is away for a moment does not make the host forget what it retired.
     */
    private void noteCapacity() {
        if (stores.isEmpty()) {
            return;
        }
        long bytes = stores.values().stream().mapToLong(ManagerStore.StoreStatus::capacityBytes).sum();
        Store.Capacity now = new Store.Capacity((long) (bytes / Math.min(replicas(), stores.size())
                * imageBytesPerSlotByte), stores.size());
        if (!now.equals(capacity)) {
            capacity = now;
            capacityWatchers.forEach(w -> w.tell(now));
        }
    }

    /**
     * The catalog charges a retired record the length of its image; a manager holds the image's pieces in its slots
     * and its header and footer beside them. So a pool of {@code n} slot bytes holds at least {@code n} times the
     * smallest ratio of image length to slot bytes over the layout's two kinds of record (with a row, without): the
     * capacity the catalog is told, so that it remembers what the managers hold, never more. About 1 for the large
     * layouts, 1.2 for the small one, whose header and footer together are as large as a piece.
     */
    private static double imageBytesPerSlotByte(Layout layout) {
        double ratio = Double.MAX_VALUE;
        for (boolean row : new boolean[] {true, false}) {
            long slotBytes = (long) RecordFileFormat.pieceCount(layout, row) * layout.slotBytes();
            ratio = Math.min(ratio, (double) RecordImage.imageBytes(layout, row) / slotBytes);
        }
        return ratio;
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
        int replicas = replicas();
        List<ActorRef<ManagerStore.Command>> usable = stores.keySet().stream().filter(s -> !isSuspect(s)).toList();
        if (usable.isEmpty()) {
            // Every manager failed a transfer a moment ago. A stall of this host, or of the managers' machine, looks
            // like that to every connection at once; failing every retirement for the suspicion's length would drop
            // what memory cannot keep. They are tried anyway, as reads try suspected holders last; only the
            // managers the cluster finds unreachable are left out.
            usable = stores.keySet().stream()
                    .filter(s -> !unreachable.contains(s.path().address().toString())).toList();
        }
        if (usable.isEmpty()) {
            finishWrite(key, new WriteFailed(key, false, "every pool manager is unreachable"));
            return;
        }
        List<ActorRef<ManagerStore.Command>> placed = Placement.ranked(key, usable).stream().limit(replicas)
                .toList();
        if (placed.size() < replicas) {
            // Short of the pool's replica count, whether a manager is unreachable or has left the cluster.
            shortOfReplicas.add(key);
            traces.append(key, origin, "Retire: " + placed.size() + " of " + replicas + " managers reachable; the "
                    + "record is short of replicas until the directory copies it");
        }
        List<DataAddress> targets = placed.stream().map(s -> DataAddress.parse(stores.get(s).dataAddress()))
                .toList();
        traces.append(key, origin, "Retire: sending to " + targets.size() + " manager(s)");
        OutgoingImage image = new OutgoingImage(layout, w.spec().hasRow(), frame.headerBlock(), frame.footerBlock(),
                shares(w.slots()));
        if (uploadsInFlight++ == 0) {
            uploadBusySince = System.nanoTime();
        }
        getContext().pipeToSelf(PoolUpload.start(data, w.spec(), image, targets, UPLOAD_DEADLINE),
                (outcome, failure) -> new WriteEnded(key, outcome != null ? outcome : new PoolUpload.Outcome(
                        new WriteFailed(key, false, "the retirement failed: " + failure.getMessage()), List.of(),
                        List.of())));
    }

    /** Whether {@code store} is left out for now: unreachable, or its data plane failed a moment ago. */
    private boolean isSuspect(ActorRef<ManagerStore.Command> store) {
        if (unreachable.contains(store.path().address().toString())) {
            return true;
        }
        Long until = suspect.get(store);
        if (until != null && until - System.nanoTime() <= 0) {
            suspect.remove(store);
            return false;
        }
        return until != null;
    }

    /** Leaves out the stores at {@code addresses} for a while: their data plane failed a transfer. */
    private void suspectStores(List<DataAddress> addresses) {
        suspectStores(addresses, SUSPECT_FOR);
    }

    /** Leaves out the stores at {@code addresses} for {@code duration}. */
    private void suspectStores(List<DataAddress> addresses, Duration duration) {
        if (addresses.isEmpty()) {
            return;
        }
        long until = System.nanoTime() + duration.toNanos();
        stores.forEach((s, status) -> {
            if (addresses.contains(DataAddress.parse(status.dataAddress()))) {
                suspect.put(s, until);
            }
        });
    }

    private void onWriteEnded(WriteEnded e) {
        suspectStores(e.outcome().failed());
        // A manager that is stopping refuses every upload until it has left the cluster (up to a few minutes with a
        // large store): it is left out of placement for that long rather than tried again every few seconds.
        suspectStores(e.outcome().stopping(), STOPPING_SUSPECT_FOR);
        if (!e.outcome().failed().isEmpty() && e.outcome().reply() instanceof Written) {
            shortOfReplicas.add(e.key());
            traces.append(e.key(), origin, "Retired short of replicas: " + e.outcome().failed().size()
                    + " manager(s) failed; the directory copies it when they are back or replaced");
        }
        finishWrite(e.key(), e.outcome().reply());
    }

    private void finishWrite(RecordKey key, WriteReply reply) {
        boolean shortOfReplicas = this.shortOfReplicas.remove(key);
        switch (reply) {
            case Written w -> {
                metrics.poolRetired(w.bytes(), w.nanos());
                if (shortOfReplicas) { // counted once, and only for a record the pool holds
                    metrics.poolUnderReplicated();
                }
                traces.append(key, origin, "Retired: held by the pool");
            }
            case WriteFailed f -> {
                metrics.poolRetireFailed();
                traces.append(key, origin, "Retire failed: " + f.reason());
                logRetireFailure(key, f.reason());
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

    /**
     * Logs a failed retirement, at most one a second with the count of those left unlogged since (each is in its
     * record's trace and in the failures counter): a pool gone away fails every retirement.
     */
    private void logRetireFailure(RecordKey key, String reason) {
        long now = System.nanoTime();
        if (now - retireFailureLoggedAt < RETIRE_FAILURE_LOG_INTERVAL_NANOS) {
            retireFailuresUnlogged++;
            return;
        }
        getContext().getLog().info("retiring {} to the pool failed: {}{}", key, reason, retireFailuresUnlogged == 0
                ? "" : " (and " + retireFailuresUnlogged + " more since the last such line)");
        retireFailuresUnlogged = 0;
        retireFailureLoggedAt = now;
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
        List<ActorRef<ManagerStore.Command>> known = holders.remove(r.key());
        if (known != null) {
            // The lookup that found it said who held it then; when they all fail, the directory is asked again (a
            // holder may have gone and another taken its copy since).
            startFetch(r, known, reply -> new FirstFetchEnded(r, known, reply));
            return;
        }
        // Where the record was placed follows from its key: every node ranks the stores alike, and the directory
        // copies a lost replica to the next store in the same ranking. So the read goes to those stores at once,
        // with no cluster message; the directory is asked only when none of them has it.
        List<ActorRef<ManagerStore.Command>> placed = placedHolders(r.key());
        if (placed.isEmpty()) {
            lookup(r.key().namespace(), List.of(r.key().hash()), found -> onLocated(r, found, List.of()));
            return;
        }
        startFetch(r, placed, reply -> new FirstFetchEnded(r, placed, reply));
    }

    /**
     * The stores that hold {@code key} when the stores now listed are those it was placed on: the first
     * {@code replicas} of the ranking of every store this host uses (suspected or not; the fetch tries suspected
     * ones last).
     */
    private List<ActorRef<ManagerStore.Command>> placedHolders(RecordKey key) {
        int replicas = replicas();
        return Placement.ranked(key, stores.keySet()).stream().limit(replicas).toList();
    }

    private void onFirstFetchEnded(FirstFetchEnded e) {
        if (e.reply() instanceof Store.ReadDone || !up) {
            finishRead(e.read().slots().slot(0), e.reply());
            return;
        }
        // Not where its key places it or where the lookup found it (a store came or went since), or those stores
        // failed: the directory says who holds it. Stores that said they do not hold it are not asked again; one
        // whose transfer failed may be (last: it is suspected now), since the directory may name it as the only one.
        Read r = e.read();
        List<ActorRef<ManagerStore.Command>> notHolding = e.reply() instanceof ReadFailed f && f.fileLost()
                ? e.tried() : List.of();
        lookup(r.key().namespace(), List.of(r.key().hash()), found -> onLocated(r, found, notHolding));
    }

    /** The directory's answer for {@code r}: its holders but those that said they do not hold it are read. */
    private void onLocated(Read r, PoolDirectory.Found found, List<ActorRef<ManagerStore.Command>> notHolding) {
        if (found == null) {
            finishRead(r.slots().slot(0), new ReadFailed(r.key(), false, "neither the pool directory nor a pool "
                    + "manager answered within " + DIRECTORY_TIMEOUT.toSeconds() + " s"));
            return;
        }
        List<ActorRef<ManagerStore.Command>> untried = found.records().isEmpty() ? List.of()
                : found.records().getFirst().holders().stream().filter(h -> !notHolding.contains(h)).toList();
        if (untried.isEmpty()) {
            finishRead(r.slots().slot(0), new ReadFailed(r.key(), true, "the pool no longer holds it"));
            return;
        }
        fetch(r, untried);
    }

    /** Fetches {@code r} from those of {@code from} this host can reach, in order. */
    private void fetch(Read r, List<ActorRef<ManagerStore.Command>> from) {
        int firstSlot = r.slots().slot(0);
        startFetch(r, from, reply -> new FetchEnded(firstSlot, reply));
    }

    /**
     * Fetches {@code r} from those of {@code from} this host can reach, in order, and tells this actor how it ended
     * in the message {@code ended} makes.
     */
    private void startFetch(Read r, List<ActorRef<ManagerStore.Command>> from,
                            java.util.function.Function<ReadReply, Store.Command> ended) {
        List<ActorRef<ManagerStore.Command>> unlisted = from.stream().filter(s -> !stores.containsKey(s)
                && !unreachable.contains(s.path().address().toString())).distinct().toList();
        if (!unlisted.isEmpty()) {
            // The directory named a holder the cluster has not listed to this host yet (a host that joined a moment
            // ago learns the stores one by one, as the listing spreads): it is asked where its data plane listens,
            // then read like the others, rather than leaving a record unread that a reachable store holds. A live
            // store answers within the failover deadline; a silent one costs no more than a silent data connection.
            traces.append(r.key(), origin, "Fetch: asking " + unlisted.size() + " holder(s) not yet listed to this "
                    + "host where their data planes listen");
            List<CompletableFuture<StoreAnswered>> asks = unlisted.stream().map(s ->
                    AskPattern.<ManagerStore.Command, ManagerStore.StoreStatus>ask(
                            s, ManagerStore.GetStatus::new, failover, getContext().getSystem().scheduler())
                            .toCompletableFuture()
                            .handle((status, failure) -> new StoreAnswered(s, status, failure))).toList();
            getContext().pipeToSelf(Piped.nonNull(CompletableFuture.allOf(
                    asks.toArray(CompletableFuture[]::new))), (v, failure) ->
                    new UnlistedHoldersAnswered(r, from, ended, asks.stream().map(
                            CompletableFuture::join).toList()));
            return;
        }
        fetchFrom(r, from, ended);
    }

    private void onUnlistedHoldersAnswered(UnlistedHoldersAnswered u) {
        for (StoreAnswered a : u.answers()) {
            // One of another layout is left to the listing, which reports it; it cannot hold this host's records.
            if (a.failure() == null && !stores.containsKey(a.store())
                    && layout.name().equals(a.status().layout())) {
                use(a);
            }
        }
        fetchFrom(u.read(), u.from(), u.ended());
    }

    /** Fetches {@code r} from those of {@code from} whose data planes this host knows, as {@link #startFetch}. */
    private void fetchFrom(Read r, List<ActorRef<ManagerStore.Command>> from,
                           java.util.function.Function<ReadReply, Store.Command> ended) {
        // Holders this host suspects are tried last, not left out: they may be the only ones.
        List<DataAddress> addresses = from.stream().filter(stores::containsKey)
                .sorted(java.util.Comparator.comparing(this::isSuspect))
                .map(s -> DataAddress.parse(stores.get(s).dataAddress())).toList();
        if (fetchesInFlight++ == 0) {
            fetchBusySince = System.nanoTime();
        }
        ActorRef<Store.Command> self = getContext().getSelf();
        getContext().pipeToSelf(PoolFetch.start(data, r.key(), layout, shares(r.slots()), addresses,
                FETCH_HOLDER_DEADLINE, a -> self.tell(new HolderFailed(a))), (reply, failure) -> ended.apply(
                reply != null ? reply : new ReadFailed(r.key(), false, "the fetch failed: " + failure.getMessage())));
    }

    private void fetchEnded() {
        if (fetchesInFlight > 0 && --fetchesInFlight == 0) {
            metrics.poolBusy(CacheMetrics.Direction.READ, System.nanoTime() - fetchBusySince);
        }
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

    private void onFind(Store.Find f) {
        if (f.chain().isEmpty() || !up) {
            f.replyTo().tell(new Store.Found(List.of()));
            return;
        }
        ActorRef<Store.Found> replyTo = f.replyTo();
        lookup(f.namespace(), f.chain(), found -> {
            List<Store.Held> entries = new ArrayList<>();
            if (found != null) {
                found.records().forEach(l -> {
                    PoolEntry e = l.entry();
                    entries.add(new Store.Held(e.key(), e.parent(), e.hasRow(), e.imageBytes()));
                    holders.put(l.entry().key(), l.holders());
                });
            }
            replyTo.tell(new Store.Found(entries));
        });
    }

    // ---- lookups: the directory, or the stores themselves while it does not answer ----

    /** One lookup of a chain: answered by the directory, or by the stores when the directory is late. */
    private static final class Lookup {
        final String namespace;
        final String entity;
        final List<Long> chain;
        final java.util.function.Consumer<PoolDirectory.Found> answer;
        final Map<ActorRef<ManagerStore.Command>, List<PoolEntry>> probed = new LinkedHashMap<>();
        /** The stores whose answers the lookup waits for; null before they are asked. */
        java.util.Set<ActorRef<ManagerStore.Command>> awaited;
        boolean directoryFailed;

        Lookup(String namespace, String entity, List<Long> chain,
               java.util.function.Consumer<PoolDirectory.Found> answer) {
            this.namespace = namespace;
            this.entity = entity;
            this.chain = chain;
            this.answer = answer;
        }
    }

    /**
     * Looks {@code chain} up in its namespace's directory entity; when the entity has not answered within the
     * failover deadline (its manager died or stopped, its shard is moving or rebuilding), asks every store this host
     * uses which of the records it holds, and answers with the longest run that some store holds. The directory
     * holds nothing the stores do not, so both answers are alike; whichever comes first is used (the stores' only
     * once this host uses the store of every manager up, else it could miss what an unseen one holds). For a while
     * after an entity was late, the stores are asked at once, beside it. {@code answer} gets null when neither
     * answered.
     */
    private void lookup(String namespace, List<Long> chain, java.util.function.Consumer<PoolDirectory.Found> answer) {
        long id = ++lookupIds;
        String entity = PoolDirectory.entityId(namespace, shards);
        Lookup l = new Lookup(namespace, entity, chain, answer);
        lookups.put(id, l);
        getContext().ask(PoolDirectory.Found.class, directory(namespace), DIRECTORY_TIMEOUT,
                q -> new PoolDirectory.Find(namespace, chain, q),
                (found, failure) -> new DirectoryAnswered(id, found, false));
        Long lateUntil = directoryLate.get(entity);
        if (lateUntil != null && lateUntil - System.nanoTime() > 0) {
            probeStores(id, l);
        } else {
            getContext().scheduleOnce(failover, getContext().getSelf(), new DirectoryLate(id));
        }
    }

    private void onDirectoryAnswered(DirectoryAnswered a) {
        Lookup l = lookups.get(a.id());
        if (l == null) {
            return; // the stores answered first
        }
        Duration hold = directoryHeldBack;
        if (!a.heldBack() && hold.isPositive()) {
            getContext().scheduleOnce(hold, getContext().getSelf(), new DirectoryAnswered(a.id(), a.found(), true));
            return;
        }
        if (a.found() != null) {
            directoryLate.remove(l.entity);
            answerLookup(a.id(), a.found());
            return;
        }
        l.directoryFailed = true;
        if (l.awaited == null) {
            probeStores(a.id(), l);
        } else if (l.awaited.isEmpty()) {
            answerLookup(a.id(), l.probed.isEmpty() ? null : fromStores(l));
        }
    }

    private void onDirectoryLate(DirectoryLate late) {
        Lookup l = lookups.get(late.id());
        if (l != null && l.awaited == null) {
            directoryLate.put(l.entity, System.nanoTime() + DIRECTORY_LATE_MEMORY.toNanos());
            probeStores(late.id(), l);
        }
    }

    /**
     * Asks the stores (but those the cluster marks unreachable) what they hold of the chain; the answer waits for
     * those this host does not suspect (a store whose transfer just failed answers too if it can, but is not waited
     * for), or for all of them when it suspects every one.
     */
    private void probeStores(long id, Lookup l) {
        List<ActorRef<ManagerStore.Command>> asked = stores.keySet().stream()
                .filter(s -> !unreachable.contains(s.path().address().toString())).toList();
        l.awaited = new java.util.HashSet<>();
        asked.stream().filter(s -> !isSuspect(s)).forEach(l.awaited::add);
        if (l.awaited.isEmpty()) {
            l.awaited.addAll(asked);
        }
        if (asked.isEmpty()) {
            if (l.directoryFailed) {
                answerLookup(id, null);
            }
            return;
        }
        for (ActorRef<ManagerStore.Command> s : asked) {
            getContext().ask(ManagerStore.ProbeReply.class, s, failover,
                    q -> new ManagerStore.Probe(l.namespace, l.chain, q),
                    (reply, failure) -> new StoreProbed(id, s, reply == null ? null : reply.held()));
        }
    }

    private void onStoreProbed(StoreProbed p) {
        Lookup l = lookups.get(p.id());
        if (l == null) {
            return;
        }
        if (p.held() != null) {
            l.probed.put(p.store(), p.held());
        }
        if (!l.awaited.remove(p.store()) || !l.awaited.isEmpty()) {
            return;
        }
        if (!l.probed.isEmpty() && (l.directoryFailed || usesEveryManager(false))) {
            lookupsFromStores++;
            if (lookupsFromStores == 1 || lookupsFromStores % 1000 == 0) {
                getContext().getLog().info("the pool directory did not answer within {} ms: lookups answered by "
                        + "the pool managers' stores themselves ({} so far)", failover.toMillis(), lookupsFromStores);
            }
            answerLookup(p.id(), fromStores(l));
        } else if (l.directoryFailed) {
            answerLookup(p.id(), null);
        }
        // otherwise no store answered, or some manager's store is not known here yet: the directory may still
    }

    /**
     * Whether this host uses the store of every manager the cluster has up and reachable: only then do the stores'
     * answers to a lookup say all the directory would. A host that joined a moment ago learns the stores one by one
     * as the cluster's listing spreads; until it knows them all, a lookup waits for the directory (or its timeout).
     * With {@code joining}, the managers still joining the cluster count too: a starting host waits for their stores.
     */
    private boolean usesEveryManager(boolean joining) {
        Set<String> used = new java.util.HashSet<>();
        stores.keySet().forEach(s -> used.add(s.path().address().toString()));
        for (Member m : Cluster.get(getContext().getSystem()).state().getMembers()) {
            String at = m.address().toString();
            boolean counted = m.status() == MemberStatus.up() || joining
                    && (m.status() == MemberStatus.joining() || m.status() == MemberStatus.weaklyUp());
            if (m.hasRole(PoolCluster.MANAGER_ROLE) && counted && !unreachable.contains(at) && !used.contains(at)) {
                return false;
            }
        }
        return true;
    }

    /** The longest run of the lookup's chain that some store holds, with the stores that hold each record. */
    private static PoolDirectory.Found fromStores(Lookup l) {
        Map<Long, PoolEntry> entries = new HashMap<>();
        Map<Long, List<ActorRef<ManagerStore.Command>>> holding = new HashMap<>();
        l.probed.forEach((store, held) -> held.forEach(e -> {
            entries.putIfAbsent(e.key().hash(), e);
            holding.computeIfAbsent(e.key().hash(), h -> new ArrayList<>()).add(store);
        }));
        List<PoolDirectory.Located> out = new ArrayList<>();
        for (long hash : l.chain) {
            PoolEntry e = entries.get(hash);
            if (e == null) {
                break;
            }
            out.add(new PoolDirectory.Located(e, List.copyOf(holding.get(hash))));
        }
        return new PoolDirectory.Found(out);
    }

    private void answerLookup(long id, PoolDirectory.Found found) {
        Lookup l = lookups.remove(id);
        if (l != null) {
            l.answer.accept(found);
        }
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
