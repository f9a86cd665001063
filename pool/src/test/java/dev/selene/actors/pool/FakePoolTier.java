package dev.selene.actors.pool;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.selene.actors.store.RemoteTier;
import dev.selene.actors.store.Store;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A test double of the pool as a node's remote tier, to inject its faults: it answers each {@code Find} with the
 * list a test sets, fails the first writes of every record as a paused manager would, and takes the rest (it keeps no
 * bytes: nothing is read back from it).
 */
final class FakePoolTier implements RemoteTier {

    /** What every {@code Find} is answered with. */
    final AtomicReference<List<Store.Held>> found = new AtomicReference<>(List.of());
    /** How many writes of each record fail before one is taken. */
    final AtomicInteger failingWrites = new AtomicInteger();
    /** Writes asked for, by record. */
    final Map<RecordKey, AtomicInteger> writes = new ConcurrentHashMap<>();

    @Override
    public SystemSetup system(Config settings, String name, CacheConfig config) {
        // a cluster node of its own on loopback, never joined: the node asks its pool for nothing else
        return new SystemSetup(ConfigFactory.parseString("pekko.actor.provider = cluster\n"
                + "pekko.remote.artery.canonical.hostname = \"127.0.0.1\"\n"
                + "pekko.remote.artery.canonical.port = 0").withFallback(settings), name);
    }

    @Override
    public Behavior<Store.Command> store(Context context) {
        return Behaviors.setup(ctx -> {
            context.onReachable().run();
            return Behaviors.receiveMessage(m -> {
                switch (m) {
                    case Store.Find f -> f.replyTo().tell(new Store.Found(found.get()));
                    case Store.WatchCapacity w -> w.replyTo().tell(new Store.Capacity(1L << 30, 1));
                    case Store.Write w -> {
                        RecordKey key = w.spec().key();
                        int n = writes.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
                        w.replyTo().tell(n <= failingWrites.get()
                                ? new Store.WriteFailed(key, false, "sent and took no bytes mid-transfer (injected)")
                                : new Store.Written(key, 1, 1));
                    }
                    default -> { } // deletes, settles: nothing else is asked of it in these tests
                }
                return Behaviors.same();
            });
        });
    }

    @Override
    public String unreachableHint(Config settings) {
        return "";
    }
}
