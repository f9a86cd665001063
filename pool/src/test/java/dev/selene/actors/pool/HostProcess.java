package dev.selene.actors.pool;

import dev.selene.actors.api.PublishOutcome;
import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.PublishResult;
import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.transport.gpu.SimulatedDevice;
import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.RecordImage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;

import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A pool host in a JVM of its own, for the kill tests: it prints {@code ready address=host:port} once started, then
 * publishes chains of records one after the other and drains each to the pool, printing {@code retired hash=h} for
 * every record it then counts as retired (or {@code unretired}, {@code unpublished}), until it is killed. On stdin:
 * <ul>
 *   <li>{@code stall <n> <hash>}: offers a record of that hash (a root) to every manager's store and sends all of
 *   its image but the footer to each store's data plane, a chunk every {@link #STALL_CHUNK_INTERVAL}, then nothing
 *   (the connection stays open): an upload that a kill leaves partial. Answers {@code stores=} {@code accepted=}.
 *   </li>
 * </ul>
 * Arguments: every manager's {@code host:port} (comma-separated), namespace, first hash, chain length.
 */
final class HostProcess {

    /** The pace of a stalled upload: slow enough that the test kills the host while it is partial. */
    static final Duration STALL_CHUNK_INTERVAL = Duration.ofSeconds(3);
    private static final Duration ASK_TIMEOUT = Duration.ofSeconds(10);

    private HostProcess() {
    }

    public static void main(String[] args) throws Exception {
        List<String> managers = List.of(args[0].split(","));
        String namespace = args[1];
        long base = Long.parseLong(args[2]);
        int length = Integer.parseInt(args[3]);
        SimulatedDevice device = SimulatedDevice.create();
        SeleneCache cache = SeleneCache.start(KeyedChains.hostConfig(managers), device);
        ChildJvm.say("ready address=" + cache.system().address().hostPort());
        Thread commands = new Thread(() -> ChildJvm.serve(Map.of(
                "stall", a -> stall(cache.system(), new RecordKey(namespace, Long.parseLong(a.getFirst()))))),
                "commands");
        commands.start();
        for (int c = 0; ; c++) {
            List<RecordSpec> chain = KeyedChains.chain(namespace, base, c, length);
            for (RecordSpec s : chain) {
                PublishOutcome o = KeyedChains.publish(cache, device, s);
                if (!(o.result() instanceof PublishResult.Stored)) {
                    ChildJvm.say("unpublished hash=" + s.key().hash() + " result=" + o.result().getClass()
                            .getSimpleName());
                }
            }
            DrainReport drained = KeyedChains.await(cache.drain(Duration.ofSeconds(30)), Duration.ofSeconds(40));
            for (RecordSpec s : chain) {
                ChildJvm.say((KeyedChains.retired(cache, s.key()) ? "retired" : "unretired") + " hash="
                        + s.key().hash() + " drain=" + drained.written() + "/" + drained.skipped());
            }
        }
    }

    /** Opens an upload of {@code key} on every store that never completes: its last chunk is never sent. */
    private static String stall(ActorSystem<?> system, RecordKey key) throws Exception {
        Receptionist.Listing listing = AskPattern.<Receptionist.Command, Receptionist.Listing>ask(
                system.receptionist(), r -> Receptionist.find(ManagerStore.KEY, r), ASK_TIMEOUT,
                system.scheduler()).toCompletableFuture().get(ASK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        List<ActorRef<ManagerStore.Command>> stores = List.copyOf(listing.getServiceInstances(ManagerStore.KEY));
        RecordSpec spec = new RecordSpec(key, null, true);
        PieceShares shares = KeyedChains.keyedShares(spec);
        RecordImage.Frame frame = RecordImage.frame(spec, KeyedChains.LAYOUT, shares);
        long imageBytes = RecordImage.imageBytes(KeyedChains.LAYOUT, true);
        int chunks = RecordImage.chunkCount(KeyedChains.LAYOUT, true);
        int accepted = 0;
        for (DataAddress to : PoolBaseline.dataAddresses(system, stores)) {
            Socket socket = new Socket(to.host(), to.port());
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            byte[] ns = key.namespace().getBytes(StandardCharsets.UTF_8);
            // The data plane's push: frame header (magic, PUT, 0, name length), the record's name, then READY.
            out.writeInt(0x534C4450);
            out.writeInt(1);
            out.writeLong(0);
            out.writeLong(2 + ns.length + 8 + 1 + 1 + 8);
            out.writeShort(ns.length);
            out.write(ns);
            out.writeLong(key.hash());
            out.writeByte(0); // a root
            out.writeByte(1); // with a row
            out.writeLong(imageBytes);
            out.flush();
            byte[] answer = socket.getInputStream().readNBytes(24);
            if (answer.length < 24 || ByteBuffer.wrap(answer).getInt(4) != 3) {
                socket.close();
                continue;
            }
            accepted++;
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    for (int i = 0; i < chunks - 1; i++) {
                        out.write(RecordImage.chunk(KeyedChains.LAYOUT, true, frame.headerBlock(),
                                frame.footerBlock(), shares, i));
                        out.flush();
                        Thread.sleep(STALL_CHUNK_INTERVAL);
                    }
                    Thread.sleep(Long.MAX_VALUE); // the connection stays open, the footer never comes
                } catch (IOException | InterruptedException e) {
                    // the manager closed the connection, or the process is ending
                }
            });
        }
        return "stores=" + stores.size() + " accepted=" + accepted;
    }
}
