package dev.selene.actors.pool;

import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.host.HostMemory;
import dev.selene.transport.pool.RecordImage;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
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
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.SinkRef;
import org.apache.pekko.stream.SourceRef;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.StreamRefs;
import org.apache.pekko.util.ByteString;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;

/**
 * A manager node's record store: record images held in off-heap slots of its own (the host's slot mapping and
 * record codec), least recently used first out when room is needed (one access counter for the whole store, so
 * namespaces compete fairly), records unused for longer than max age swept in every namespace. Uploads arrive as
 * stream refs of slot-sized chunks and are validated with the record codec's checksums before they count as held;
 * a partial upload (its sender died, or went quiet) is dropped. Serving streams the image back from the slots,
 * which stay pinned until the stream ends.
 *
 * <p>The store owns the bytes and the recency; the directory entity of each namespace shard learns what it holds
 * ({@link PoolDirectory.Held}, {@link PoolDirectory.Released}) and can always ask again ({@link Holdings}).
 */
public final class ManagerStore extends AbstractBehavior<ManagerStore.Command> {

    /** The protocol. */
    public sealed interface Command {
    }

    /** Every manager's store registers under this key with the receptionist. */
    public static final ServiceKey<Command> KEY = ServiceKey.create(Command.class, "selene-pool-store");

    /** Offers a record: the reply is a sink to stream its image into, then whether it was stored. */
    public record Offer(PoolEntry entry, ActorRef<OfferReply> replyTo) implements Command, PoolMessage {
    }

    /** Streams a held record's image back. */
    public record Fetch(RecordKey key, ActorRef<FetchReply> replyTo) implements Command, PoolMessage {
    }

    /** Drops records (the directory dropped them, or a host removed them). */
    public record Drop(List<RecordKey> keys, String reason) implements Command, PoolMessage {
    }

    /** Lists the records held of namespaces in directory shard {@code shard} of {@code shards}. */
    public record Holdings(int shard, int shards, ActorRef<HoldingsReply> replyTo) implements Command, PoolMessage {
    }

    /** Copies a held record to {@code target} (a replica rebuilt); the target reports to the directory. */
    public record CopyTo(RecordKey key, ActorRef<Command> target) implements Command, PoolMessage {
    }

    /** The store's figures. */
    public record GetStatus(ActorRef<StoreStatus> replyTo) implements Command, PoolMessage {
    }

    /**
     * A plain stream ref that discards what it receives: the raw baseline a benchmark measures record transfers
     * against (same bytes, same JVMs, no slots, no codec).
     */
    public record OpenRawSink(ActorRef<RawSink> replyTo) implements Command, PoolMessage {
    }

    /** A plain stream ref that emits {@code bytes} bytes in chunks of {@code chunkBytes}: the raw read baseline. */
    public record OpenRawSource(long bytes, int chunkBytes, ActorRef<RawSource> replyTo)
            implements Command, PoolMessage {
    }

    /** Reply to {@link OpenRawSink}. */
    public record RawSink(SinkRef<ByteString> sink) implements PoolMessage {
    }

    /** Reply to {@link OpenRawSource}. */
    public record RawSource(SourceRef<ByteString> source) implements PoolMessage {
    }

    /** Replies to {@link Offer}. */
    public sealed interface OfferReply extends PoolMessage {
    }

    /** Stream the image into {@code sink}; {@link Stored} or {@link Refused} follows when it has ended. */
    public record Accept(RecordKey key, SinkRef<ByteString> sink) implements OfferReply {
    }

    /** The record is held (validated); {@code store} holds it. */
    public record Stored(RecordKey key, ActorRef<Command> store) implements OfferReply {
    }

    /** Not stored: no room, a layout this store does not hold, or a failed or invalid upload. */
    public record Refused(RecordKey key, String reason) implements OfferReply {
    }

    /** Replies to {@link Fetch}. */
    public sealed interface FetchReply extends PoolMessage {
    }

    /** The image of {@code entry}, streamed from {@code source}. */
    public record Serve(PoolEntry entry, SourceRef<ByteString> source) implements FetchReply {
    }

    /** The store does not hold the record (never did, or dropped it). */
    public record NotHeld(RecordKey key) implements FetchReply {
    }

    /** Reply to {@link Holdings}. */
    public record HoldingsReply(ActorRef<Command> store, List<PoolEntry> entries) implements PoolMessage {
    }

    /**
     * A store's figures: records and bytes held, capacity, transfers, and expiry and eviction totals (expiry per
     * namespace).
     */
    public record StoreStatus(String address, long records, long bytes, long capacityBytes, int slotsFree,
                              int slotsTotal, int uploading, int serving, long uploads, long uploadBytes,
                              long serves, long serveBytes, long refused, long evicted,
                              Map<String, Long> expiredByNamespace) implements PoolMessage {
    }

    private record UploadEnded(RecordKey key, long nanos, Throwable failure) implements Command {
    }

    private record ServeEnded(RecordKey key, long bytes) implements Command {
    }

    private record CopyAnswered(RecordKey key, OfferReply reply, Throwable failure) implements Command {
    }

    private record CopySent(RecordKey key) implements Command {
    }

    private enum SweepTick implements Command {
        INSTANCE
    }

    /** An upload that sends nothing for this long is dropped (its sender died or stalled). */
    static final Duration UPLOAD_IDLE_TIMEOUT = Duration.ofSeconds(10);

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
    private record Upload(PoolEntry entry, int[] slots, RecordImage.Reader reader, ActorRef<OfferReply> replyTo) {
    }

    private final Layout layout;
    private final HostMemory memory;
    private final ManagerConfig config;
    private final LongSupplier clock;
    private final Materializer materializer;
    private final ClusterSharding sharding;
    private final PoolMetrics metrics;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private final Map<RecordKey, Held> held = new HashMap<>();
    private final TreeMap<Long, RecordKey> byTick = new TreeMap<>();
    private final Map<RecordKey, Upload> uploads = new HashMap<>();
    private final Map<String, Long> expired = new TreeMap<>();
    private long ticks;
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
        this.materializer = Materializer.createMaterializer(ctx);
        this.sharding = ClusterSharding.get(ctx.getSystem());
        this.metrics = metrics;
        metrics.capacity((long) slots * layout.slotBytes());
        ctx.getLog().info("pool store: {} slots of {} bytes ({} layout), max age {}", slots, layout.slotBytes(),
                layout.name(), config.maxAge() == null ? "off" : config.maxAge());
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Command.class, this::onCommand)
                .onSignal(PostStop.class, s -> {
                    memory.close();
                    return this;
                })
                .build();
    }

    private Behavior<Command> onCommand(Command command) {
        switch (command) {
            case Offer o -> onOffer(o);
            case UploadEnded u -> onUploadEnded(u);
            case Fetch f -> onFetch(f);
            case ServeEnded s -> onServeEnded(s);
            case Drop d -> d.keys().forEach(k -> drop(k, d.reason(), false));
            case Holdings h -> h.replyTo().tell(new HoldingsReply(getContext().getSelf(), holdings(h)));
            case CopyTo c -> onCopyTo(c);
            case CopyAnswered a -> onCopyAnswered(a);
            case CopySent s -> getContext().getLog().debug("replica of {} sent", s.key());
            case GetStatus g -> g.replyTo().tell(status());
            case OpenRawSink o -> o.replyTo().tell(new RawSink(StreamRefs.<ByteString>sinkRef()
                    .idleTimeout(UPLOAD_IDLE_TIMEOUT).to(Sink.ignore()).run(materializer)));
            case OpenRawSource o -> o.replyTo().tell(new RawSource(rawSource(o.bytes(), o.chunkBytes())));
            case SweepTick t -> sweep();
        }
        metrics.held(held.size(), bytes);
        return this;
    }

    // ---- uploads ----

    private void onOffer(Offer o) {
        PoolEntry e = o.entry();
        RecordKey key = e.key();
        if (held.containsKey(key) && held.get(key).doomed) {
            refuse(o, "it is being dropped");
            return;
        }
        if (held.containsKey(key)) {
            touch(held.get(key));
            tellDirectory(key.namespace(), new PoolDirectory.Held(e, getContext().getSelf()));
            o.replyTo().tell(new Stored(key, getContext().getSelf()));
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
        RecordImage.Reader reader = new RecordImage.Reader(layout, key,
                (piece, rank) -> memory.share(slots[piece], rank, layout.pageBytes()));
        long start = clock.getAsLong();
        // The stream runs on the materializer's threads; the reader writes only into the slots reserved above, and
        // this actor reads the reader only after the stream has ended.
        Pair<SinkRef<ByteString>, CompletionStage<Done>> run = StreamRefs.<ByteString>sinkRef()
                .idleTimeout(UPLOAD_IDLE_TIMEOUT)
                .toMat(Sink.foreach(chunk -> reader.accept(chunk.toArrayUnsafe())), Keep.both())
                .run(materializer);
        uploads.put(key, new Upload(e, slots, reader, o.replyTo()));
        o.replyTo().tell(new Accept(key, run.first()));
        getContext().pipeToSelf(run.second(), (done, failure) -> new UploadEnded(key, clock.getAsLong() - start,
                failure));
    }

    private void refuse(Offer o, String reason) {
        refused++;
        metrics.refused();
        o.replyTo().tell(new Refused(o.entry().key(), reason));
    }

    private void onUploadEnded(UploadEnded u) {
        Upload up = uploads.remove(u.key());
        if (up == null) {
            return;
        }
        Throwable failure = u.failure();
        if (failure == null) {
            try {
                up.reader().finish();
            } catch (RecordFormatException ex) {
                failure = ex;
            }
        }
        if (failure != null) {
            for (int s : up.slots()) {
                free.add(s);
            }
            refused++;
            metrics.refused();
            String reason = failure.getClass().getSimpleName() + ": " + failure.getMessage();
            getContext().getLog().info("upload of {} dropped: {}", u.key(), reason);
            up.replyTo().tell(new Refused(u.key(), "the upload failed: " + reason));
            return;
        }
        Held h = new Held(up.entry(), up.slots(), up.reader().headerBlock(), up.reader().footerBlock());
        held.put(u.key(), h);
        bytes += up.entry().imageBytes();
        touch(h);
        uploadCount++;
        uploadBytes += up.entry().imageBytes();
        metrics.transfer(PoolMetrics.Direction.IN, up.entry().imageBytes(), u.nanos());
        tellDirectory(u.key().namespace(), new PoolDirectory.Held(up.entry(), getContext().getSelf()));
        up.replyTo().tell(new Stored(u.key(), getContext().getSelf()));
    }

    // ---- serving ----

    private void onFetch(Fetch f) {
        Held h = held.get(f.key());
        if (h == null || h.doomed) {
            f.replyTo().tell(new NotHeld(f.key()));
            return;
        }
        touch(h);
        h.pins++;
        serving++;
        RecordKey key = f.key();
        ActorRef<Command> self = getContext().getSelf();
        SourceRef<ByteString> ref = chunks(h)
                .watchTermination((mat, done) -> {
                    done.whenComplete((d, e) -> self.tell(new ServeEnded(key,
                            e == null ? h.entry.imageBytes() : 0)));
                    return mat;
                })
                .runWith(StreamRefs.sourceRef(), materializer);
        f.replyTo().tell(new Serve(h.entry, ref));
    }

    /** The image of a held record, chunk by chunk, copied out of its slots as the receiver asks for them. */
    private Source<ByteString, NotUsed> chunks(Held h) {
        boolean hasRow = h.entry.hasRow();
        int count = RecordImage.chunkCount(layout, hasRow);
        return Source.range(0, count - 1).map(i -> ByteString.fromArrayUnsafe(RecordImage.chunk(layout, hasRow,
                h.header, h.footer, (piece, rank) -> memory.share(h.slots[piece], rank, layout.pageBytes()), i)));
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

    private SourceRef<ByteString> rawSource(long total, int chunkBytes) {
        if (chunkBytes < 1 || total < 0) {
            throw new IllegalArgumentException("raw source of " + total + " bytes in chunks of " + chunkBytes);
        }
        byte[] chunk = new byte[chunkBytes];
        long chunks = (total + chunkBytes - 1) / chunkBytes;
        // A fresh array per element, as a record chunk copied out of its slot is.
        return Source.range(1, (int) chunks).map(i -> ByteString.fromArrayUnsafe(chunk.clone()))
                .runWith(StreamRefs.sourceRef(), materializer);
    }

    // ---- replicas ----

    private void onCopyTo(CopyTo c) {
        Held h = held.get(c.key());
        if (h == null) {
            return;
        }
        h.pins++;
        getContext().ask(OfferReply.class, c.target(), Duration.ofSeconds(10), r -> new Offer(h.entry, r),
                (reply, failure) -> new CopyAnswered(c.key(), reply, failure));
    }

    private void onCopyAnswered(CopyAnswered a) {
        Held h = held.get(a.key());
        if (a.reply() instanceof Accept accept && h != null) {
            ActorRef<Command> self = getContext().getSelf();
            chunks(h).watchTermination((mat, done) -> {
                done.whenComplete((d, e) -> self.tell(new ServeEnded(a.key(), 0)));
                return mat;
            }).runWith(accept.sink().getSink(), materializer);
            serving++;
            return;
        }
        if (h != null && --h.pins == 0 && h.doomed) {
            drop(a.key(), "dropped while copied", false);
        }
        if (a.failure() != null || a.reply() instanceof Refused) {
            getContext().getLog().info("replica of {} not copied: {}", a.key(), a.failure() != null
                    ? a.failure().getMessage() : ((Refused) a.reply()).reason());
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
                serving, uploadCount, uploadBytes, serveCount, serveBytes, refused, evicted, Map.copyOf(expired));
    }
}
