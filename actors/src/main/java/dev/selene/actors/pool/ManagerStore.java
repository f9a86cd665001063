package dev.selene.actors.pool;

import dev.selene.engine.codec.RecordFileFormat;
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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * A manager node's record store: record images held in off-heap slots of its own (the host's slot mapping and
 * record codec), least recently used first out when room is needed (one access counter for the whole store, so
 * namespaces compete fairly), records unused for longer than max age swept in every namespace. Record bytes travel
 * on the store's own data plane, apart from the cluster: an accepted upload is a handle its sender pushes the image
 * under, landing straight in the reserved slots and validated with the record codec's checksums before it counts as
 * held; a partial upload (its sender died, or went quiet) is dropped. Serving hands out a handle the reader fetches
 * the image under, sent straight from the slots, which stay pinned until it has been sent.
 *
 * <p>The store owns the bytes and the recency; the directory entity of each namespace shard learns what it holds
 * ({@link PoolDirectory.HeldAll}, {@link PoolDirectory.Released}) and can always ask again ({@link Holdings}).
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

    /** Lists the records held of namespaces in directory shard {@code shard} of {@code shards}. */
    public record Holdings(int shard, int shards, ActorRef<HoldingsReply> replyTo) implements Command, PoolMessage {
    }

    /** Copies a held record to {@code target} (a replica rebuilt) on the data plane; the target tells the directory. */
    public record CopyTo(RecordKey key, ActorRef<Command> target) implements Command, PoolMessage {
    }

    /** The store's figures. */
    public record GetStatus(ActorRef<StoreStatus> replyTo) implements Command, PoolMessage {
    }

    /** Reply to {@link Holdings}. */
    public record HoldingsReply(ActorRef<Command> store, List<PoolEntry> entries) implements PoolMessage {
    }

    /**
     * A store's figures: records and bytes held, capacity, transfers, and expiry and eviction totals (expiry per
     * namespace); where its data plane listens ({@code host:port}) and how many managers hold each record.
     */
    public record StoreStatus(String address, long records, long bytes, long capacityBytes, int slotsFree,
                              int slotsTotal, int uploading, int serving, long uploads, long uploadBytes,
                              long serves, long serveBytes, long refused, long evicted,
                              Map<String, Long> expiredByNamespace, String dataAddress, int replicas,
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

    private record CopyAddressed(RecordKey key, StoreStatus target, Throwable failure) implements Command {
    }

    /** A replica copy ended; {@code failure} says why it failed, or is null. */
    private record CopyEnded(RecordKey key, String failure) implements Command {
    }

    private enum SweepTick implements Command {
        INSTANCE
    }

    /** Sends the directory entities what this store took since the last report. */
    private enum ReportHeld implements Command {
        INSTANCE
    }

    /** An upload or a serve whose peer sends or takes nothing for this long is dropped (its peer died or stalled). */
    static final Duration UPLOAD_IDLE_TIMEOUT = NettyDataPlane.DEFAULT_SILENCE;
    /** How long a store gathers the records it took before it reports them to their directory entities. */
    static final Duration HELD_REPORT_DELAY = Duration.ofMillis(20);
    /** Threads of a manager's data plane. */
    static final int DATA_THREADS = 2;

    /** A held record: its slots, the image's header and footer blocks, and its recency. */
    private static final class Held {
        final PoolEntry entry;
        final int[] slots;
        final byte[] header;
        final byte[] footer;
        long tick;
        long lastUseNanos;
        int pins;
        /** Dropped while being served: the slots are freed when the last stream ends. */
        boolean doomed;

        Held(PoolEntry entry, int[] slots, byte[] header, byte[] footer) {
            this.entry = entry;
            this.slots = slots;
            this.header = header;
            this.footer = footer;
        }
    }

    /** An upload in progress: its reserved slots and who waits for the outcome. */
    private record Upload(PoolEntry entry, int[] slots, long id) {
    }

    private final Layout layout;
    private final HostMemory memory;
    private final ManagerConfig config;
    private final LongSupplier clock;
    private final DataPlane data;
    private final ClusterSharding sharding;
    private final PoolMetrics metrics;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private final Map<RecordKey, Held> held = new HashMap<>();
    private final TreeMap<Long, RecordKey> byTick = new TreeMap<>();
    private final Map<RecordKey, Upload> uploads = new HashMap<>();
    /** Records taken and not yet reported to their directory entity, by entity. */
    private final Map<String, List<PoolEntry>> heldToReport = new HashMap<>();
    private boolean reportScheduled;
    private long lastReportNanos;
    private final Map<String, Long> expired = new TreeMap<>();
    private long ticks;
    private long uploadIds;
    private long refusedLogged;
    private long bytes;
    private int serving;
    private long uploadCount;
    private long uploadBytes;
    private long serveCount;
    private long serveBytes;
    private long refused;
    private long evicted;

    /** The store of a manager node; it registers with the receptionist at once. */
    public static Behavior<Command> create(ManagerConfig config, PoolMetrics metrics) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            if (config.maxAge() != null) {
                Duration every = config.maxAge().dividedBy(4);
                Duration interval = every.compareTo(Duration.ofMinutes(1)) > 0 ? Duration.ofMinutes(1)
                        : every.compareTo(Duration.ofMillis(100)) < 0 ? Duration.ofMillis(100) : every;
                timers.startTimerWithFixedDelay(SweepTick.INSTANCE, interval);
            }
            ctx.getSystem().receptionist().tell(Receptionist.register(KEY, ctx.getSelf()));
            return new ManagerStore(ctx, config, metrics);
        }));
    }

    private ManagerStore(ActorContext<Command> ctx, ManagerConfig config, PoolMetrics metrics) {
        super(ctx);
        this.config = config;
        this.layout = config.layout();
        int slots = (int) Math.max(1, Math.min(Integer.MAX_VALUE, config.storeBytes() / layout.slotBytes()));
        this.memory = HostMemory.allocate(layout, slots);
        for (int i = 0; i < slots; i++) {
            free.add(i);
        }
        this.clock = System::nanoTime;
        this.lastReportNanos = clock.getAsLong() - HELD_REPORT_DELAY.toNanos();
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
        } catch (RuntimeException e) {
            memory.close();
            throw e;
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
            case UploadEnded u -> onUploadEnded(u);
            case Requested r -> onRequested(r);
            case ServeEnded s -> onServeEnded(s);
            case Drop d -> d.keys().forEach(k -> drop(k, d.reason(), false));
            case Holdings h -> h.replyTo().tell(new HoldingsReply(getContext().getSelf(), holdings(h)));
            case CopyTo c -> onCopyTo(c);
            case CopyAddressed a -> onCopyAddressed(a);
            case CopyEnded c -> onCopyEnded(c);
            case GetStatus g -> g.replyTo().tell(status());
            case SweepTick t -> sweep();
            case ReportHeld r -> flushHeld();
        }
        metrics.held(held.size(), bytes);
        return this;
    }

    // ---- uploads ----

    private void onOffered(Offered o) {
        RecordSpec spec = o.spec();
        RecordKey key = spec.key();
        PoolEntry e = PoolEntry.of(spec, o.imageBytes());
        Held h = held.get(key);
        if (h != null && h.doomed) {
            refuse(o, "it is being dropped");
            return;
        }
        if (h != null) {
            touch(h);
            reportHeld(h.entry);
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
        if (!makeRoom(need)) {
            refuse(o, "no room: " + need + " slots needed, " + free.size() + " free and every other record is "
                    + "being served");
            return;
        }
        int[] slots = new int[need];
        for (int i = 0; i < need; i++) {
            slots[i] = free.poll();
        }
        long start = clock.getAsLong();
        long id = ++uploadIds;
        ActorRef<Command> self = getContext().getSelf();
        uploads.put(key, new Upload(e, slots, id));
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
            for (int s : up.slots()) {
                free.add(s);
            }
            refused++;
            metrics.refused();
            String reason = failure.getClass().getSimpleName() + ": " + failure.getMessage();
            getContext().getLog().info("upload of {} dropped: {}", u.key(), reason);
            return;
        }
        Held h = new Held(up.entry(), up.slots(), u.image().headerBlock(), u.image().footerBlock());
        held.put(u.key(), h);
        bytes += up.entry().imageBytes();
        touch(h);
        uploadCount++;
        uploadBytes += up.entry().imageBytes();
        metrics.transfer(PoolMetrics.Direction.IN, up.entry().imageBytes(), u.nanos());
        reportHeld(up.entry());
    }

    // ---- serving ----

    private void onRequested(Requested r) {
        Held h = held.get(r.key());
        if (h == null || h.doomed) {
            r.delivery().notHeld("this pool manager does not hold " + r.key());
            return;
        }
        touch(h);
        h.pins++;
        serving++;
        RecordKey key = r.key();
        ActorRef<Command> self = getContext().getSelf();
        r.delivery().send(image(h), (bytes, failure) -> self.tell(new ServeEnded(key, failure == null ? bytes : 0)));
    }

    /** The image of a held record, read straight from its slots. */
    private OutgoingImage image(Held h) {
        return new OutgoingImage(layout, h.entry.hasRow(), h.header, h.footer, shares(h.slots));
    }

    private PieceShares shares(int[] slots) {
        int page = layout.pageBytes();
        return (piece, rank) -> memory.share(slots[piece], rank, page);
    }

    private void onServeEnded(ServeEnded s) {
        serving--;
        Held h = held.get(s.key());
        if (h != null && --h.pins == 0 && h.doomed) {
            drop(s.key(), "dropped while served", false);
        }
        if (s.bytes() > 0) {
            serveCount++;
            serveBytes += s.bytes();
            metrics.transfer(PoolMetrics.Direction.OUT, s.bytes(), 0);
        }
    }

    // ---- replicas ----

    private void onCopyTo(CopyTo c) {
        Held h = held.get(c.key());
        if (h == null || h.doomed) {
            return;
        }
        h.pins++;
        getContext().ask(StoreStatus.class, c.target(), Duration.ofSeconds(10), GetStatus::new,
                (status, failure) -> new CopyAddressed(c.key(), status, failure));
    }

    private void onCopyAddressed(CopyAddressed a) {
        Held h = held.get(a.key());
        if (h == null) {
            return; // dropped meanwhile (a pinned record is only doomed, so this does not happen)
        }
        if (a.failure() != null) {
            onCopyEnded(new CopyEnded(a.key(), "the target store did not answer: " + a.failure().getMessage()));
            return;
        }
        ActorRef<Command> self = getContext().getSelf();
        data.push(DataAddress.parse(a.target().dataAddress()), h.entry.spec(), image(h)).done()
                .whenComplete((pushed, failure) -> self.tell(new CopyEnded(a.key(),
                        failure == null ? null : failure.getMessage())));
    }

    private void onCopyEnded(CopyEnded c) {
        if (c.failure() != null) {
            getContext().getLog().info("replica of {} not copied: {}", c.key(), c.failure());
        }
        Held h = held.get(c.key());
        if (h != null && --h.pins == 0 && h.doomed) {
            drop(c.key(), "dropped while copied", false);
        }
    }

    // ---- room, recency, expiry ----

    private void touch(Held h) {
        if (h.tick != 0) {
            byTick.remove(h.tick);
        }
        h.tick = ++ticks;
        h.lastUseNanos = clock.getAsLong();
        byTick.put(h.tick, h.entry.key());
    }

    /** Frees at least {@code need} slots by dropping the least recently used records not being served. */
    private boolean makeRoom(int need) {
        if (need > memory.slotCount()) {
            return false;
        }
        Iterator<Map.Entry<Long, RecordKey>> it = byTick.entrySet().iterator();
        List<RecordKey> victims = new ArrayList<>();
        int freeing = free.size();
        while (freeing < need && it.hasNext()) {
            Held h = held.get(it.next().getValue());
            if (h.pins == 0) {
                victims.add(h.entry.key());
                freeing += h.slots.length;
            }
        }
        if (freeing < need) {
            return false;
        }
        for (RecordKey k : victims) {
            evicted++;
            metrics.evicted();
            drop(k, "evicted", true);
        }
        return true;
    }

    private void sweep() {
        long cutoff = clock.getAsLong() - config.maxAge().toNanos();
        List<RecordKey> old = new ArrayList<>();
        for (RecordKey k : byTick.values()) {
            Held h = held.get(k);
            if (h.lastUseNanos > cutoff) {
                break; // ticks follow time: every later record is fresher
            }
            if (h.pins == 0) {
                old.add(k);
            }
        }
        for (RecordKey k : old) {
            expired.merge(k.namespace(), 1L, Long::sum);
            metrics.expired(k.namespace());
            drop(k, "expired", true);
        }
        if (!old.isEmpty()) {
            getContext().getLog().info("pool store: {} records unused for longer than {} expired", old.size(),
                    config.maxAge());
        }
    }

    /** Drops a held record; tells its directory when the store decided it (not when the directory asked). */
    private void drop(RecordKey key, String reason, boolean tell) {
        Held h = held.get(key);
        if (h == null) {
            return;
        }
        if (h.pins > 0) {
            h.doomed = true; // the streams reading its slots end first
            return;
        }
        held.remove(key);
        byTick.remove(h.tick);
        bytes -= h.entry.imageBytes();
        for (int s : h.slots) {
            free.add(s);
        }
        if (tell) {
            tellDirectory(key.namespace(), new PoolDirectory.Released(key, getContext().getSelf(), reason));
        }
    }

    /**
     * Reports a record this store took to its directory entity: at once when no report went out within
     * {@link #HELD_REPORT_DELAY}, otherwise together with the others taken until that much has passed, so that a
     * busy store sends one cluster message per entity per report rather than one per record (and the directory
     * learns of a record at most that much later; until then a lookup in another host misses it).
     */
    private void reportHeld(PoolEntry entry) {
        String shard = PoolDirectory.entityId(entry.key().namespace(), config.directoryShards());
        heldToReport.computeIfAbsent(shard, s -> new ArrayList<>()).add(entry);
        if (reportScheduled) {
            return;
        }
        long sinceLast = clock.getAsLong() - lastReportNanos;
        if (sinceLast >= HELD_REPORT_DELAY.toNanos()) {
            flushHeld();
        } else {
            reportScheduled = true;
            getContext().scheduleOnce(HELD_REPORT_DELAY.minusNanos(sinceLast), getContext().getSelf(),
                    ReportHeld.INSTANCE);
        }
    }

    private void flushHeld() {
        reportScheduled = false;
        lastReportNanos = clock.getAsLong();
        heldToReport.forEach((shard, entries) -> sharding.entityRefFor(PoolDirectory.TYPE, shard)
                .tell(new PoolDirectory.HeldAll(List.copyOf(entries), getContext().getSelf())));
        heldToReport.clear();
    }

    private void tellDirectory(String namespace, PoolDirectory.Command message) {
        sharding.entityRefFor(PoolDirectory.TYPE, PoolDirectory.entityId(namespace, config.directoryShards()))
                .tell(message);
    }

    private List<PoolEntry> holdings(Holdings q) {
        List<PoolEntry> out = new ArrayList<>();
        for (Held h : held.values()) {
            if (PoolDirectory.shardOf(h.entry.key().namespace(), q.shards()) == q.shard()) {
                out.add(h.entry);
            }
        }
        return out;
    }

    private StoreStatus status() {
        return new StoreStatus(getContext().getSystem().address().toString(), held.size(), bytes,
                (long) memory.slotCount() * layout.slotBytes(), free.size(), memory.slotCount(), uploads.size(),
                serving, uploadCount, uploadBytes, serveCount, serveBytes, refused, evicted, Map.copyOf(expired),
                data.address().toString(), config.replicas(), layout.name());
    }
}
