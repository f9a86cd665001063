package dev.selene.actors.pool;

import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.expiry.ExpirySweep;
import dev.selene.engine.pool.PoolHoldings;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.codec.PieceShares;
import dev.selene.transport.host.HostMemory;
import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.DataPlane;
import dev.selene.transport.pool.DataPlaneTls;
import dev.selene.transport.pool.NettyDataPlane;
import dev.selene.transport.pool.OutgoingImage;
import dev.selene.transport.pool.ReceivedImage;
import dev.selene.transport.pool.RecordService;
import dev.selene.transport.pool.RecordImage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * A manager node's record store: record images held in off-heap slots of its own (the host's slot mapping and
 * record codec), with the host's slot accounting, recency index and max-age sweep ({@link PoolHoldings}): least
 * recently used first out when room is needed (one recency order for the whole store, so namespaces compete
 * fairly), and once a minute the stale leaves of every namespace expire, oldest first, at most 64 per namespace.
 * Record bytes travel on the store's own data plane, apart from the cluster, named by their keys: a pushed record
 * lands straight in the slots reserved for it and is validated with the record codec's checksums before it counts as
 * held; a partial upload (its sender died, or went quiet) is dropped. A requested record is sent straight from its
 * slots, which stay pinned until it has been sent.
 *
 * <p>The store owns the bytes and the recency; the directory entity of each namespace shard learns what it holds
 * ({@link PoolDirectory.HeldAll}, {@link PoolDirectory.ReleasedAll}) and can always ask again ({@link Holdings}).
 * What it served to hosts goes in the same reports ({@link PoolDirectory.ServedAll}), and the entity has the
 * other replicas count those uses ({@link Refresh}), so that the replicas of a record keep one recency. With a max
 * age the entity also has the holders of the ancestors of what a store took or served refresh their last use
 * ({@link KeepFresh}), so that a chain placed over several managers expires from its tips inward.
 *
 * <p>As its manager stops ({@link HandOff}), the store refuses uploads and copies the records no other reachable
 * manager holds to the others, so that a manager stopped on purpose takes no sole copy with it.
 */
public final class ManagerStore extends AbstractBehavior<ManagerStore.Command> {

    /** The protocol. */
    public sealed interface Command {
    }

    /** Every manager's store registers under this key with the receptionist. */
    public static final ServiceKey<Command> KEY = ServiceKey.create(Command.class, "selene-pool-store");

    /** Drops records (the directory dropped them, or a host removed them). */
    public record Drop(List<RecordKey> keys, String reason) implements Command, PoolMessage {
    }

    /** From the directory: another replica served these records to hosts; each one held here counts a use too. */
    public record Refresh(List<RecordKey> keys) implements Command, PoolMessage {
    }

    /**
     * From the directory, with a max age: records below these were uploaded or served (here or on another manager);
     * each one held here has its last use refreshed, not its place in the recency order, so that it does not expire
     * under a chain that is still in use.
     */
    public record KeepFresh(List<RecordKey> keys) implements Command, PoolMessage {
    }

    /** Lists the records held of namespaces in directory shard {@code shard} of {@code shards}. */
    public record Holdings(int shard, int shards, ActorRef<HoldingsReply> replyTo) implements Command, PoolMessage {
    }

    /**
     * Which records of {@code chain} (key hashes of {@code namespace}) this store holds: a host asks the stores
     * themselves when the directory does not answer in time (its shard is moving).
     */
    public record Probe(String namespace, List<Long> chain, ActorRef<ProbeReply> replyTo)
            implements Command, PoolMessage {
    }

    /** Reply to {@link Probe}: the records of the chain this store holds, in chain order. */
    public record ProbeReply(ActorRef<Command> store, List<PoolEntry> held) implements PoolMessage {
    }

    /**
     * Copies a held record to {@code target} (a replica rebuilt) on the data plane; the target tells the directory
     * once it holds it, this store if the copy fails.
     */
    public record CopyTo(RecordKey key, ActorRef<Command> target) implements Command, PoolMessage {
    }

    /**
     * From this node as its manager stops, before it leaves the cluster: refuse uploads from now on, copy every record
     * no other reachable manager holds to the manager that ranks first for it (the next one when that fails), and
     * answer once every copy has ended.
     */
    public record HandOff(ActorRef<HandedOff> replyTo) implements Command {
    }

    /**
     * From this node when the hand-off ran out of its time ({@code after}): the store says how far it got and starts
     * no more copies; what was not copied leaves with the manager.
     */
    public record HandOffCutShort(Duration after) implements Command {
    }

    /**
     * Reply to {@link HandOff}: records held nowhere else, how many of them another manager took, and directory
     * shards that did not say which records they are (those stay here alone).
     */
    public record HandedOff(int records, int copied, int shardsUnanswered) {
    }

    /** The store's figures. */
    public record GetStatus(ActorRef<StoreStatus> replyTo) implements Command, PoolMessage {
    }

    /** Runs a max-age sweep now (from this JVM: tests, or code embedding a manager); the reply lists what expired. */
    public record ExpireNow(ActorRef<Expired> replyTo) implements Command {
    }

    /** Reply to {@link ExpireNow}: the records that expired (empty with max age off). */
    public record Expired(List<RecordKey> keys) {
    }

    /**
     * Checks the store's accounting (from this JVM: tests): the reply is empty when every invariant holds, else it
     * names the first broken one.
     */
    public record CheckInvariants(ActorRef<String> replyTo) implements Command {
    }

    /** Reply to {@link Holdings}. */
    public record HoldingsReply(ActorRef<Command> store, List<PoolEntry> entries) implements PoolMessage {
    }

    /**
     * A store's figures: records held and the bytes of their slots, the slots' capacity in bytes (a record's image
     * header and footer are kept beside its slots, in neither figure), transfers, and expiry and eviction totals
     * (expiry per namespace); where its data plane listens ({@code host:port}) and how many managers hold each
     * record.
     */
    public record StoreStatus(String address, long records, long bytes, long capacityBytes, int slotsFree,
                              int slotsTotal, int uploading, int serving, long uploads, long uploadBytes,
                              long serves, long serveBytes, long refused, long evicted, long refreshed,
                              long keptFresh, Map<String, Long> expiredByNamespace, String dataAddress, int replicas,
                              String layout) implements PoolMessage {
    }

    /** From the data plane (this JVM only): a peer offers a record. */
    private record Offered(RecordSpec spec, long imageBytes, RecordService.Admission admission) implements Command {
    }

    /** From the data plane (this JVM only): a peer asks for a record. */
    private record Requested(RecordKey key, RecordService.Delivery delivery) implements Command {
    }

    private record UploadEnded(RecordKey key, long upload, long nanos, ReceivedImage image, Throwable failure)
            implements Command {
    }

    private record ServeEnded(RecordKey key, long bytes) implements Command {
    }

    /** A copy's target store {@code to} said where its data plane listens; {@code handOff}: a copy of the hand-off. */
    private record CopyAddressed(RecordKey key, ActorRef<Command> to, StoreStatus target, Throwable failure,
                                 boolean handOff) implements Command {
    }

    /** A copy ended; {@code failure} says why it failed, or is null; {@code handOff}: a copy of the hand-off. */
    private record CopyEnded(RecordKey key, String failure, boolean handOff) implements Command {
    }

    /** Directory entity {@code shard} named records only this store holds (null: it did not answer in time). */
    private record HandOffListed(String shard, PoolDirectory.LeavingReply reply) implements Command {
    }

    private enum SweepTick implements Command {
        INSTANCE
    }

    /** Sends the directory entities what this store took and dropped since the last report. */
    private enum Report implements Command {
        INSTANCE
    }

    /** Logs the replica copies that failed since the last such line, one line per reason. */
    private enum CopyFailuresLogged implements Command {
        INSTANCE
    }

    /** An upload or a serve whose peer sends or takes nothing for this long is dropped (its peer died or stalled). */
    static final Duration UPLOAD_IDLE_TIMEOUT = NettyDataPlane.DEFAULT_SILENCE;
    /**
     * How long a store gathers the records it took and dropped before it reports them to their directory entities.
     */
    static final Duration REPORT_DELAY = Duration.ofMillis(20);
    /** Threads of a manager's data plane. */
    static final int DATA_THREADS = 2;
    /**
     * How long a store gathers the replica copies that failed before it logs them: a target that cannot be reached
     * fails every copy the directory asks for, hundreds at once, and one line per reason says as much.
     */
    static final Duration COPY_FAILURES_LOGGED_EVERY = Duration.ofSeconds(1);
    /**
     * Hand-off copies at once: small records are bound by each copy's round trips, so enough of them to hide those;
     * few enough to leave room for hosts' reads.
     */
    static final int HAND_OFF_IN_FLIGHT = 16;
    /**
     * Why a store refuses an upload once its manager is stopping: a host that reads it leaves the store out of
     * placement until it has left.
     */
    static final String STOPPING = "this pool manager is stopping";
    private static final String NO_OTHER_MANAGER = "no other manager is reachable";
    /**
     * How long a directory entity may take to say which records only this store holds, and another store where its
     * data plane listens, during the hand-off.
     */
    static final Duration HAND_OFF_ASK = Duration.ofSeconds(5);

    /** Replica copies that failed for one reason since the last log line: how many, and the first record's key. */
    private static final class CopyFailures {
        final RecordKey first;
        int count;

        CopyFailures(RecordKey first) {
            this.first = first;
        }
    }

    /** What the store keeps with a held record beside its slots: its entry and the image's header and footer. */
    private record Image(PoolEntry entry, byte[] header, byte[] footer) {
    }

    /** A change of what this store holds, waiting for its report. */
    private sealed interface Change permits Took, Dropped {
    }

    /** The store holds {@code entry}'s record (validated). */
    private record Took(PoolEntry entry) implements Change {
    }

    /** The store dropped the record on its own (evicted, expired: {@code reason}). */
    private record Dropped(String reason) implements Change {
    }

    /** An upload in progress (its slots are reserved in the holdings). */
    private record Upload(PoolEntry entry, long id) {
    }

    /** A record to hand over: its targets, best first, which of them is tried, and its last use here. */
    private record HandOffCopy(RecordKey key, List<ActorRef<Command>> targets, int target, long lastUse) {
    }

    private final Layout layout;
    private final HostMemory memory;
    private final ManagerConfig config;
    private final LongSupplier clock;
    private final DataPlane data;
    private final ClusterSharding sharding;
    private final PoolMetrics metrics;
    private final PoolHoldings<Image> holdings;
    private final Map<RecordKey, Upload> uploads = new HashMap<>();
    /**
     * What this store has not yet reported to each directory entity (by entity): the last change of each record. A
     * record taken and dropped again before the report is reported as dropped.
     */
    private final Map<String, LinkedHashMap<RecordKey, Change>> toReport = new HashMap<>();
    /** Records served to hosts since the last report, by directory entity (told to the other replicas). */
    private final Map<String, LinkedHashSet<RecordKey>> served = new HashMap<>();
    private boolean reportScheduled;
    private long lastReportNanos;
    private final Map<String, Long> expired = new TreeMap<>();
    private long uploadIds;
    private long refusedLogged;
    /** Replica copies that failed since the last log line, by reason (the record's own key taken out of it). */
    private final Map<String, CopyFailures> copyFailures = new LinkedHashMap<>();
    private int serving;
    private long uploadCount;
    private long uploadBytes;
    private long serveCount;
    private long serveBytes;
    private long refused;
    private long evicted;
    /** Uses counted because another replica served the record. */
    private long refreshed;
    private long keptFresh;
    /** The manager is stopping: uploads are refused, records held nowhere else are handed to other managers. */
    private boolean leaving;
    private ActorRef<HandedOff> handOffReplyTo;
    /** The hand-off ran out of its time: no copy starts any more. */
    private boolean handOffCutShort;
    /** Directory shards asked which records only this store holds, whose last page has not come yet. */
    private final Set<String> handOffAsking = new HashSet<>();
    /** Shards to ask again once their answer has ended: a record landed here meanwhile. */
    private final Set<String> handOffAskAgain = new HashSet<>();
    private int handOffShardsUnanswered;
    /** The records to hand over, the most recently used first (the likeliest to be asked for again). */
    private final PriorityQueue<HandOffCopy> handOffQueue = new PriorityQueue<>(
            Comparator.comparingLong(HandOffCopy::lastUse).reversed());
    private final Set<RecordKey> handOffSeen = new HashSet<>();
    private final Map<RecordKey, HandOffCopy> handOffCopies = new HashMap<>();
    /** Where the other stores' data planes listen, asked once per store (a store keeps its port while it runs). */
    private final Map<ActorRef<Command>, String> dataAddresses = new HashMap<>();
    /**
     * Stores that did not answer, or whose data plane failed a copy other than by refusing it, during the hand-off:
     * skipped for the records after, so that one silent store costs the hand-off one wait, not one per record.
     */
    private final Set<ActorRef<Command>> handOffSilent = new HashSet<>();
    private int handOffRecords;
    private int handOffCopied;
    private String handOffFailure;

    /** The store of a manager node; it registers with the receptionist at once. */
    public static Behavior<Command> create(ManagerConfig config, PoolMetrics metrics) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            if (config.maxAge() != null) {
                timers.startTimerWithFixedDelay(SweepTick.INSTANCE, Duration.ofNanos(
                        ExpirySweep.SWEEP_INTERVAL_NANOS));
            }
            ManagerStore store;
            try {
                store = new ManagerStore(ctx, config, metrics);
            } catch (Exception e) { // Netty's bind failure is an IOException it throws unchecked
                // Its memory or its data port: one line, and the manager node, which watches its store, stops.
                ctx.getLog().error("the pool store could not start: {}{}", e.getMessage(),
                        e instanceof IllegalArgumentException ? "; lower its size (selene.manager.store-size)" : "");
                return Behaviors.stopped();
            }
            ctx.getSystem().receptionist().tell(Receptionist.register(KEY, ctx.getSelf()));
            return store;
        }));
    }

    private ManagerStore(ActorContext<Command> ctx, ManagerConfig config, PoolMetrics metrics) {
        super(ctx);
        this.config = config;
        this.layout = config.layout();
        int slots = (int) Math.max(1, Math.min(Integer.MAX_VALUE, config.storeBytes() / layout.slotBytes()));
        this.memory = HostMemory.allocate(layout, slots);
        this.clock = System::nanoTime;
        this.holdings = new PoolHoldings<>(slots, clock);
        this.lastReportNanos = clock.getAsLong() - REPORT_DELAY.toNanos();
        String host = ctx.getSystem().address().getHost().orElse("127.0.0.1");
        try {
            ActorRef<Command> self = ctx.getSelf();
            // TLS when the node's cluster runs it (the same certificates), with the manager's namespace rules.
            DataPlaneTls tls = PoolSecurity.from(ctx.getSystem().settings().config()).dataPlane();
            if (tls != null) {
                tls.access().onDenied(d -> metrics.accessRefused(d.operation()));
            }
            this.data = NettyDataPlane.serve(host, config.dataPort(), null, NettyDataPlane.Backend.best(),
                    UPLOAD_IDLE_TIMEOUT, DATA_THREADS, new RecordService() {
                        @Override
                        public void offered(RecordSpec spec, long imageBytes, Admission admission) {
                            self.tell(new Offered(spec, imageBytes, admission));
                        }

                        @Override
                        public void requested(RecordKey key, Delivery delivery) {
                            self.tell(new Requested(key, delivery));
                        }
                    }, tls);
        } catch (Exception e) { // Netty's bind failure is an IOException it throws unchecked
            memory.close();
            throw new IllegalStateException("its data plane cannot listen on " + host + ":" + config.dataPort() + " ("
                    + e.getMessage() + ")", e);
        }
        this.sharding = ClusterSharding.get(ctx.getSystem());
        this.metrics = metrics;
        metrics.capacity((long) slots * layout.slotBytes());
        ctx.getLog().info("pool store: {} slots of {} bytes ({} layout), max age {}, record bytes on {} ({})", slots,
                layout.slotBytes(), layout.name(), config.maxAge() == null ? "off" : config.maxAge(), data.address(),
                data.stats().transport());
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Command.class, this::onCommand)
                .onSignal(PostStop.class, s -> {
                    data.close(); // its threads read and write the slots: they stop first
                    memory.close();
                    return this;
                })
                .build();
    }

    private Behavior<Command> onCommand(Command command) {
        switch (command) {
            case Offered o -> onOffered(o);
            case UploadEnded u -> {
                onUploadEnded(u);
                if (leaving) {
                    pumpHandOff(); // the hand-off answers once the uploads in progress as it began have ended
                }
            }
            case Requested r -> onRequested(r);
            case ServeEnded s -> onServeEnded(s);
            case Drop d -> d.keys().forEach(this::drop);
            case Refresh r -> onRefresh(r);
            case KeepFresh k -> k.keys().forEach(key -> {
                if (holdings.refreshAge(key)) {
                    keptFresh++;
                }
            });
            case Holdings h -> h.replyTo().tell(new HoldingsReply(getContext().getSelf(), holdings(h)));
            case Probe p -> p.replyTo().tell(new ProbeReply(getContext().getSelf(), probe(p)));
            case CopyTo c -> onCopyTo(c);
            case HandOff h -> onHandOff(h);
            case HandOffListed l -> onHandOffListed(l);
            case HandOffCutShort c -> onHandOffCutShort(c);
            case CopyAddressed a -> onCopyAddressed(a);
            case CopyEnded c -> onCopyEnded(c);
            case GetStatus g -> g.replyTo().tell(status());
            case SweepTick t -> sweep();
            case ExpireNow x -> x.replyTo().tell(new Expired(config.maxAge() == null ? List.of() : sweep()));
            case CheckInvariants c -> c.replyTo().tell(invariantViolation());
            case Report r -> flushReports();
            case CopyFailuresLogged l -> logCopyFailures();
        }
        metrics.held(holdings.size(), holdings.heldSlots() * layout.slotBytes());
        return this;
    }

    // ---- uploads ----

    private void onOffered(Offered o) {
        RecordSpec spec = o.spec();
        RecordKey key = spec.key();
        PoolEntry e = PoolEntry.of(spec, o.imageBytes());
        if (leaving) {
            refuse(o, STOPPING);
            return;
        }
        if (holdings.isDoomed(key)) {
            refuse(o, "it is being dropped");
            return;
        }
        if (holdings.holds(key)) {
            holdings.use(key);
            report(key, new Took(holdings.value(key).entry()));
            o.admission().alreadyHeld();
            return;
        }
        if (uploads.containsKey(key)) {
            refuse(o, "an upload of it is in progress");
            return;
        }
        if (e.imageBytes() != RecordImage.imageBytes(layout, e.hasRow())) {
            refuse(o, "its image is " + e.imageBytes() + " bytes; this store holds the " + layout.name()
                    + " layout (" + RecordImage.imageBytes(layout, e.hasRow()) + " bytes)");
            return;
        }
        int need = RecordFileFormat.pieceCount(layout, e.hasRow());
        PoolHoldings.Room room = holdings.reserve(spec, need);
        if (room == null) {
            refuse(o, "no room: " + need + " slots needed, " + holdings.freeSlots() + " free and every other record "
                    + "is being served");
            return;
        }
        for (RecordKey gone : room.evicted()) {
            evicted++;
            metrics.evicted();
            report(gone, new Dropped("evicted"));
        }
        int[] slots = room.slots().toArray();
        long start = clock.getAsLong();
        long id = ++uploadIds;
        ActorRef<Command> self = getContext().getSelf();
        uploads.put(key, new Upload(e, id));
        // The data plane's threads write only into the slots reserved above until they report the upload ended.
        o.admission().land(layout, shares(slots), (image, failure) -> self.tell(new UploadEnded(key, id,
                clock.getAsLong() - start, image, failure)));
    }

    private void refuse(Offered o, String reason) {
        refused++;
        metrics.refused();
        if (refusedLogged++ % 100 == 0) {
            getContext().getLog().warn("refused a record ({} refused so far): {}", refused, reason);
        }
        o.admission().refuse(reason);
    }

    private void onUploadEnded(UploadEnded u) {
        Upload up = uploads.get(u.key());
        if (up == null || up.id() != u.upload()) {
            return;
        }
        uploads.remove(u.key());
        Throwable failure = u.failure();
        if (failure != null) {
            holdings.unreserve(u.key());
            refused++;
            metrics.refused();
            String reason = failure.getClass().getSimpleName() + ": " + failure.getMessage();
            getContext().getLog().info("upload of {} dropped: {}", u.key(), reason);
            return;
        }
        holdings.hold(up.entry().spec(), up.entry().imageBytes(), new Image(up.entry(), u.image().headerBlock(),
                u.image().footerBlock()));
        uploadCount++;
        uploadBytes += up.entry().imageBytes();
        metrics.transfer(PoolMetrics.Direction.IN, up.entry().imageBytes(), u.nanos());
        report(up.entry().key(), new Took(up.entry()));
        if (handOffReplyTo != null) {
            landedWhileLeaving(up.entry().key());
        }
    }

    // ---- serving ----

    private void onRequested(Requested r) {
        RecordKey key = r.key();
        if (!holdings.holds(key)) {
            r.delivery().notHeld("this pool manager does not hold " + key);
            return;
        }
        holdings.use(key);
        reportServed(key);
        holdings.pin(key);
        serving++;
        ActorRef<Command> self = getContext().getSelf();
        r.delivery().send(image(key), (bytes, failure) -> self.tell(new ServeEnded(key, failure == null ? bytes : 0)));
    }

    /** The image of held {@code key}, read straight from its slots. */
    private OutgoingImage image(RecordKey key) {
        Image i = holdings.value(key);
        return new OutgoingImage(layout, i.entry().hasRow(), i.header(), i.footer(),
                shares(holdings.slotsOf(key).toArray()));
    }

    private PieceShares shares(int[] slots) {
        int page = layout.pageBytes();
        return (piece, rank) -> memory.share(slots[piece], rank, page);
    }

    private void onRefresh(Refresh r) {
        for (RecordKey key : r.keys()) {
            if (holdings.holds(key)) {
                holdings.use(key);
                refreshed++;
            }
        }
    }

    private void onServeEnded(ServeEnded s) {
        serving--;
        holdings.unpin(s.key()); // a record dropped while served leaves now
        if (s.bytes() > 0) {
            serveCount++;
            serveBytes += s.bytes();
            metrics.transfer(PoolMetrics.Direction.OUT, s.bytes(), 0);
        }
    }

    // ---- replicas ----

    private void onCopyTo(CopyTo c) {
        if (!holdings.holds(c.key())) {
            copyFailed(c.key()); // dropped before the ask came: another holder, if any, is asked next
            return;
        }
        copy(c.key(), c.target(), false);
    }

    /** Copies held {@code key} to {@code target}, pinned until it ends ({@link CopyEnded}). */
    private void copy(RecordKey key, ActorRef<Command> target, boolean handOff) {
        holdings.pin(key);
        String known = dataAddresses.get(target);
        if (known != null) {
            pushCopy(key, known, handOff);
            return;
        }
        getContext().ask(StoreStatus.class, target, handOff ? HAND_OFF_ASK : Duration.ofSeconds(10), GetStatus::new,
                (status, failure) -> new CopyAddressed(key, target, status, failure, handOff));
    }

    private void onCopyAddressed(CopyAddressed a) {
        if (holdings.value(a.key()) == null) {
            return; // dropped meanwhile (a pinned record is only doomed, so this does not happen)
        }
        if (a.failure() != null) {
            if (a.handOff()) {
                handOffSilent.add(a.to());
            }
            onCopyEnded(new CopyEnded(a.key(), "the target store did not answer: " + a.failure().getMessage(),
                    a.handOff()));
            return;
        }
        dataAddresses.put(a.to(), a.target().dataAddress());
        pushCopy(a.key(), a.target().dataAddress(), a.handOff());
    }

    /** Pushes pinned {@code key} to the data plane at {@code address}; its end comes as {@link CopyEnded}. */
    private void pushCopy(RecordKey key, String address, boolean handOff) {
        ActorRef<Command> self = getContext().getSelf();
        data.push(DataAddress.parse(address), holdings.value(key).entry().spec(), image(key)).done()
                .whenComplete((pushed, failure) -> self.tell(new CopyEnded(key,
                        failure == null ? null : failure.getMessage(), handOff)));
    }

    private void onCopyEnded(CopyEnded c) {
        if (c.handOff()) {
            holdings.unpin(c.key());
            handOffCopyEnded(c.key(), c.failure());
            return;
        }
        if (c.failure() != null) {
            if (copyFailures.isEmpty()) {
                getContext().scheduleOnce(COPY_FAILURES_LOGGED_EVERY, getContext().getSelf(),
                        CopyFailuresLogged.INSTANCE);
            }
            String reason = c.failure().replace(c.key().toString(), "the record");
            copyFailures.computeIfAbsent(reason, r -> new CopyFailures(c.key())).count++;
            copyFailed(c.key());
        }
        holdings.unpin(c.key()); // a record dropped while copied leaves now
    }

    /**
     * Tells the record's directory entity that the copy it asked for failed, so that it asks the next store at its next
     * check instead of waiting for a copy that will not come.
     */
    private void copyFailed(RecordKey key) {
        sharding.entityRefFor(PoolDirectory.TYPE, PoolDirectory.entityId(key.namespace(), config.directoryShards()))
                .tell(new PoolDirectory.CopyFailed(key, getContext().getSelf()));
    }

    private void logCopyFailures() {
        copyFailures.forEach((reason, f) -> {
            if (f.count == 1) {
                getContext().getLog().info("replica of {} not copied: {}", f.first, reason);
            } else {
                getContext().getLog().info("{} replicas not copied (the first: {}): {}", f.count, f.first, reason);
            }
        });
        copyFailures.clear();
    }

    // ---- hand-off as the manager stops ----

    /**
     * Starts the hand-off: uploads are refused from now on, what this store took is reported, and the directory
     * entities of the namespaces it holds or is receiving are asked which of its records no store that stays holds.
     */
    private void onHandOff(HandOff h) {
        leaving = true;
        handOffReplyTo = h.replyTo();
        flushReports(); // an entity learns of the records taken last before it answers (messages keep their order)
        Set<String> shards = new TreeSet<>();
        holdings.forEach((spec, image) -> shards.add(shardOf(spec.key())));
        uploads.keySet().forEach(k -> shards.add(shardOf(k)));
        shards.forEach(this::askLeaving);
        pumpHandOff();
    }

    private String shardOf(RecordKey key) {
        return PoolDirectory.entityId(key.namespace(), config.directoryShards());
    }

    /** Asks directory entity {@code shard} for (the next page of) the records only this store holds. */
    private void askLeaving(String shard) {
        handOffAsking.add(shard);
        ActorRef<Command> self = getContext().getSelf();
        getContext().ask(PoolDirectory.LeavingReply.class, sharding.entityRefFor(PoolDirectory.TYPE, shard),
                HAND_OFF_ASK, r -> new PoolDirectory.Leaving(self, r),
                (reply, failure) -> new HandOffListed(shard, reply));
    }

    /**
     * A record whose upload was in progress as the hand-off began has landed: its entity is asked again (once its
     * current answer has ended), after this store's report of it.
     */
    private void landedWhileLeaving(RecordKey key) {
        String shard = shardOf(key);
        if (handOffAsking.contains(shard)) {
            handOffAskAgain.add(shard);
        } else {
            flushReports();
            askLeaving(shard);
        }
    }

    private void onHandOffListed(HandOffListed l) {
        PoolDirectory.LeavingReply reply = l.reply();
        if (handOffCutShort) {
            return;
        }
        if (reply == null) {
            handOffAsking.remove(l.shard());
            handOffAskAgain.remove(l.shard());
            handOffShardsUnanswered++;
        } else {
            for (RecordKey key : reply.keys()) {
                if (holdings.holds(key) && !holdings.isDoomed(key) && handOffSeen.add(key)) {
                    handOffQueue.add(new HandOffCopy(key, Placement.ranked(key, reply.others()), 0,
                            holdings.lastUseNanos(key)));
                    handOffRecords++;
                }
            }
            if (reply.more()) {
                askLeaving(l.shard());
            } else {
                handOffAsking.remove(l.shard());
                if (handOffAskAgain.remove(l.shard())) {
                    flushReports();
                    askLeaving(l.shard());
                }
            }
        }
        pumpHandOff();
    }

    /**
     * Starts hand-off copies up to {@link #HAND_OFF_IN_FLIGHT}; answers once every entity has answered, every copy
     * has ended and the uploads in progress as the hand-off began have ended.
     */
    private void pumpHandOff() {
        while (!handOffCutShort && handOffCopies.size() < HAND_OFF_IN_FLIGHT && !handOffQueue.isEmpty()) {
            HandOffCopy c = handOffQueue.poll();
            if (!holdings.holds(c.key()) || holdings.isDoomed(c.key())) {
                handOffRecords--; // dropped meanwhile (a host removed it, or every replica expired it)
            } else if (c.targets().isEmpty()) {
                handOffFailure = NO_OTHER_MANAGER;
            } else if (!startHandOffCopy(c)) {
                handOffFailure = "every other manager failed a copy or did not answer";
            }
        }
        if (handOffReplyTo == null || !handOffAsking.isEmpty() || !handOffQueue.isEmpty()
                || !handOffCopies.isEmpty() || !uploads.isEmpty()) {
            return;
        }
        HandedOff done = new HandedOff(handOffRecords, handOffCopied, handOffShardsUnanswered);
        if (done.copied() == 0 && NO_OTHER_MANAGER.equals(handOffFailure) && done.shardsUnanswered() == 0) {
            getContext().getLog().info("pool store: no other manager is left to take the {} records only this one "
                    + "holds; they leave with it", done.records());
        } else if (done.records() > 0 || done.shardsUnanswered() > 0) {
            getContext().getLog().info("pool store: {} of {} records no other manager held were copied to another "
                    + "before this manager left{}{}", done.copied(), done.records(),
                    handOffFailure == null ? "" : " (the others stay here and leave with it: " + handOffFailure + ")",
                    done.shardsUnanswered() == 0 ? "" : "; " + done.shardsUnanswered() + " directory shards did not "
                            + "answer in time, and the records only they know of leave with it");
        }
        handOffReplyTo.tell(done);
        handOffReplyTo = null;
    }

    private void onHandOffCutShort(HandOffCutShort c) {
        if (handOffReplyTo == null) {
            return; // it ended meanwhile
        }
        getContext().getLog().warn("pool store: the hand-off ran out of its {} s: {} of the {} records found that no "
                + "other manager held were copied ({} still to copy or being copied{}); the rest leave with this "
                + "manager", c.after().toSeconds(), handOffCopied, handOffRecords, handOffQueue.size()
                + handOffCopies.size(), handOffAsking.isEmpty() ? "" : "; " + handOffAsking.size() + " directory "
                + "shards had not finished answering");
        handOffQueue.clear();
        handOffCutShort = true;
        handOffReplyTo = null; // no more copies start; those in flight end by themselves
    }

    /** Starts the copy of {@code c} to its target, or to the next one that has not gone silent; false when none. */
    private boolean startHandOffCopy(HandOffCopy c) {
        for (int t = c.target(); t < c.targets().size(); t++) {
            if (!handOffSilent.contains(c.targets().get(t))) {
                HandOffCopy next = new HandOffCopy(c.key(), c.targets(), t, c.lastUse());
                handOffCopies.put(c.key(), next);
                copy(c.key(), c.targets().get(t), true);
                return true;
            }
        }
        return false;
    }

    private void handOffCopyEnded(RecordKey key, String failure) {
        HandOffCopy c = handOffCopies.remove(key);
        if (c != null) {
            if (failure == null) {
                handOffCopied++;
            } else if (!holdings.holds(key) || holdings.isDoomed(key)) {
                handOffRecords--; // dropped meanwhile
            } else if (!handOffCutShort) {
                if (!failure.contains(" refused: ")) {
                    handOffSilent.add(c.targets().get(c.target())); // its data plane failed, not its store
                }
                if (!startHandOffCopy(new HandOffCopy(key, c.targets(), c.target() + 1, c.lastUse()))) {
                    handOffFailure = failure.replace(key.toString(), "the record");
                }
            }
        }
        pumpHandOff();
    }

    // ---- expiry and checks ----

    /** One max-age sweep; tells the directory what expired. */
    private List<RecordKey> sweep() {
        List<RecordKey> gone = holdings.expire(config.maxAge().toNanos());
        for (RecordKey k : gone) {
            expired.merge(k.namespace(), 1L, Long::sum);
            metrics.expired();
            report(k, new Dropped("expired"));
        }
        if (!gone.isEmpty()) {
            getContext().getLog().info("pool store: {} records unused for longer than {} expired", gone.size(),
                    config.maxAge());
        }
        return gone;
    }

    /** A record the directory dropped (or a host removed) leaves; one being sent leaves when its transfer ends. */
    private void drop(RecordKey key) {
        holdings.drop(key);
    }

    private String invariantViolation() {
        try {
            holdings.checkInvariants();
            if (uploads.size() != holdings.reservations()) {
                throw new IllegalStateException(uploads.size() + " uploads in progress, " + holdings.reservations()
                        + " reservations");
            }
            for (RecordKey k : uploads.keySet()) {
                if (holdings.reservedFor(k) == null) {
                    throw new IllegalStateException("the upload of " + k + " has no slots reserved");
                }
            }
            if (serving < 0) {
                throw new IllegalStateException("serving " + serving + " records");
            }
            return "";
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
    }

    /**
     * Reports a change of what this store holds to the record's directory entity. A record taken is reported at once
     * when no record taken was reported within {@link #REPORT_DELAY}, otherwise together with the others changed
     * until that much has passed; a record dropped (evicted, expired) goes with the next report, at most that much
     * later. So a busy store sends a few cluster messages per entity per report rather than one per record taken or
     * evicted, and the directory learns of a change at most that much later (until then a lookup in another host
     * misses a record just taken, or names this store for one it has just dropped, which its read then finds not
     * held).
     */
    private void report(RecordKey key, Change change) {
        String shard = PoolDirectory.entityId(key.namespace(), config.directoryShards());
        LinkedHashMap<RecordKey, Change> changes = toReport.computeIfAbsent(shard, s -> new LinkedHashMap<>());
        changes.put(key, change);
        long sinceLast = clock.getAsLong() - lastReportNanos;
        if (change instanceof Took && sinceLast >= REPORT_DELAY.toNanos()) {
            flushReports();
        } else if (!reportScheduled) {
            reportScheduled = true;
            Duration wait = change instanceof Took ? REPORT_DELAY.minusNanos(sinceLast) : REPORT_DELAY;
            getContext().scheduleOnce(wait, getContext().getSelf(), Report.INSTANCE);
        }
    }

    /**
     * Notes that this store served {@code key} to a host: the next report tells its directory entity, which has the
     * record's other holders count the use too. Records go in the order of their last use here, so that the other
     * replicas end in this store's order. Reported whatever this manager's own replica setting, which another
     * manager's may exceed; the entity finds the holders.
     */
    private void reportServed(RecordKey key) {
        String shard = PoolDirectory.entityId(key.namespace(), config.directoryShards());
        LinkedHashSet<RecordKey> keys = served.computeIfAbsent(shard, s -> new LinkedHashSet<>());
        keys.remove(key);
        keys.add(key);
        if (!reportScheduled) {
            reportScheduled = true;
            getContext().scheduleOnce(REPORT_DELAY, getContext().getSelf(), Report.INSTANCE);
        }
    }

    /**
     * Sends each entity its changes: the records dropped (one message per reason), then those taken, then those
     * served. A record appears once among the changes, with its last change, so the messages' order does not matter.
     */
    private void flushReports() {
        reportScheduled = false;
        ActorRef<Command> self = getContext().getSelf();
        served.forEach((shard, keys) -> sharding.entityRefFor(PoolDirectory.TYPE, shard)
                .tell(new PoolDirectory.ServedAll(List.copyOf(keys), self)));
        served.clear();
        toReport.forEach((shard, changes) -> {
            var entity = sharding.entityRefFor(PoolDirectory.TYPE, shard);
            Map<String, List<RecordKey>> dropped = new TreeMap<>();
            List<PoolEntry> took = new ArrayList<>();
            changes.forEach((key, change) -> {
                switch (change) {
                    case Dropped d -> dropped.computeIfAbsent(d.reason(), r -> new ArrayList<>()).add(key);
                    case Took t -> took.add(t.entry());
                }
            });
            dropped.forEach((reason, keys) -> entity.tell(new PoolDirectory.ReleasedAll(keys, self, reason)));
            if (!took.isEmpty()) {
                entity.tell(new PoolDirectory.HeldAll(took, self));
                lastReportNanos = clock.getAsLong();
            }
        });
        toReport.clear();
    }

    private List<PoolEntry> holdings(Holdings q) {
        List<PoolEntry> out = new ArrayList<>();
        holdings.forEach((spec, image) -> {
            if (PoolDirectory.shardOf(spec.key().namespace(), q.shards()) == q.shard()) {
                out.add(image.entry());
            }
        });
        return out;
    }

    private List<PoolEntry> probe(Probe p) {
        List<PoolEntry> out = new ArrayList<>();
        for (long hash : p.chain()) {
            RecordKey key = new RecordKey(p.namespace(), hash);
            if (holdings.holds(key) && !holdings.isDoomed(key)) {
                out.add(holdings.value(key).entry());
            }
        }
        return out;
    }

    private StoreStatus status() {
        return new StoreStatus(getContext().getSystem().address().toString(), holdings.size(),
                holdings.heldSlots() * layout.slotBytes(),
                (long) memory.slotCount() * layout.slotBytes(), holdings.freeSlots(), memory.slotCount(),
                uploads.size(),
                serving, uploadCount, uploadBytes, serveCount, serveBytes, refused, evicted, refreshed, keptFresh,
                Map.copyOf(expired),
                data.address().toString(), config.replicas(), layout.name());
    }
}
