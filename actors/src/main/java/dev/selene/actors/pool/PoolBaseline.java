package dev.selene.actors.pool;

import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The raw path under the pool's record transfers, for benchmarks: the same bytes in the same chunk size over a
 * plain stream ref between this JVM and a manager's, with no slots, codec or directory in the way.
 */
public final class PoolBaseline {

    private static final Duration ASK_TIMEOUT = Duration.ofSeconds(10);

    private PoolBaseline() {
    }

    /** The managers' stores now up in the cluster of {@code system}, ordered by address. */
    public static List<ActorRef<ManagerStore.Command>> stores(ActorSystem<?> system) throws Exception {
        Receptionist.Listing listing = AskPattern.<Receptionist.Command, Receptionist.Listing>ask(
                system.receptionist(), r -> Receptionist.find(ManagerStore.KEY, r), ASK_TIMEOUT,
                system.scheduler()).toCompletableFuture().get(ASK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        return listing.getServiceInstances(ManagerStore.KEY).stream()
                .sorted(Comparator.comparing(s -> s.path().address().toString())).toList();
    }

    /** Sends {@code bytes} in chunks of {@code chunkBytes} to {@code store}; returns the nanoseconds it took. */
    public static long send(ActorSystem<?> system, ActorRef<ManagerStore.Command> store, long bytes, int chunkBytes)
            throws Exception {
        ManagerStore.RawSink sink = AskPattern.<ManagerStore.Command, ManagerStore.RawSink>ask(store,
                ManagerStore.OpenRawSink::new, ASK_TIMEOUT, system.scheduler()).toCompletableFuture()
                .get(ASK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        byte[] chunk = new byte[chunkBytes];
        long chunks = (bytes + chunkBytes - 1) / chunkBytes;
        long start = System.nanoTime();
        CompletionStage<Done> done = Source.range(1, (int) chunks)
                .map(i -> ByteString.fromArrayUnsafe(chunk.clone()))
                .watchTermination((mat, d) -> d)
                .to(sink.sink().getSink())
                .run(system);
        done.toCompletableFuture().get(10, TimeUnit.MINUTES);
        return System.nanoTime() - start;
    }

    /** Receives {@code bytes} in chunks of {@code chunkBytes} from {@code store}; returns the nanoseconds it took. */
    public static long receive(ActorSystem<?> system, ActorRef<ManagerStore.Command> store, long bytes,
                               int chunkBytes) throws Exception {
        ManagerStore.RawSource source = AskPattern.<ManagerStore.Command, ManagerStore.RawSource>ask(store,
                r -> new ManagerStore.OpenRawSource(bytes, chunkBytes, r), ASK_TIMEOUT, system.scheduler())
                .toCompletableFuture().get(ASK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        long start = System.nanoTime(); // as in send: the stream's time, not the ask's
        source.source().getSource().runWith(Sink.foreach(b -> b.toArrayUnsafe()), system).toCompletableFuture()
                .get(10, TimeUnit.MINUTES);
        return System.nanoTime() - start;
    }
}
