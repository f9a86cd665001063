package dev.selene.actors.pool;

import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.DataPlane;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The raw path under the pool's record transfers, for benchmarks: the same bytes in the same chunk size over the
 * same data plane between this JVM and a manager's, off-heap memory to off-heap memory, with no slots, codec,
 * checksums or directory in the way.
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

    /** Where each of {@code stores} takes record bytes (its data plane's address), in the same order. */
    public static List<DataAddress> dataAddresses(ActorSystem<?> system, List<ActorRef<ManagerStore.Command>> stores)
            throws Exception {
        List<DataAddress> out = new ArrayList<>();
        for (ManagerStore.StoreStatus status : statuses(system, stores)) {
            out.add(DataAddress.parse(status.dataAddress()));
        }
        return out;
    }

    /** What each of {@code stores} says of itself (data address, layout, replica count), in the same order. */
    public static List<ManagerStore.StoreStatus> statuses(ActorSystem<?> system,
                                                          List<ActorRef<ManagerStore.Command>> stores)
            throws Exception {
        List<ManagerStore.StoreStatus> out = new ArrayList<>();
        for (ActorRef<ManagerStore.Command> s : stores) {
            out.add(AskPattern.<ManagerStore.Command, ManagerStore.StoreStatus>ask(s, ManagerStore.GetStatus::new,
                    ASK_TIMEOUT, system.scheduler()).toCompletableFuture().get(ASK_TIMEOUT.toSeconds(),
                    TimeUnit.SECONDS));
        }
        return out;
    }

    /** Sends {@code bytes} in chunks of {@code chunkBytes} to the data plane at {@code to}; returns the nanoseconds. */
    public static long send(DataPlane plane, DataAddress to, long bytes, int chunkBytes) throws Exception {
        long start = System.nanoTime();
        plane.rawPush(to, bytes, chunkBytes).done().get(10, TimeUnit.MINUTES);
        return System.nanoTime() - start;
    }

    /** Receives {@code bytes} in chunks of {@code chunkBytes} from the data plane at {@code from}; the nanoseconds. */
    public static long receive(DataPlane plane, DataAddress from, long bytes, int chunkBytes) throws Exception {
        long start = System.nanoTime();
        plane.rawFetch(from, bytes, chunkBytes).done().get(10, TimeUnit.MINUTES);
        return System.nanoTime() - start;
    }
}
