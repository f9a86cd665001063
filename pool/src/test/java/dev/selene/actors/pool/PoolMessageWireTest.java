package dev.selene.actors.pool;

import com.typesafe.config.ConfigFactory;
import dev.selene.engine.key.RecordKey;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The messages between a store and its directory entity survive the cluster's wire format (the pool's serialization
 * settings, on a system that forms no cluster).
 */
class PoolMessageWireTest {

    private final ActorTestKit kit = ActorTestKit.create("wire", ConfigFactory.parseString(
            "pekko.actor.provider = local").withFallback(ConfigFactory.parseResources("selene-cluster.conf"))
            .withFallback(ConfigFactory.load()));

    @AfterEach
    void stop() {
        kit.shutdownTestKit();
    }

    @Test
    void aCopyFailedWord_andTheReportsBesideIt_comeBackEqualFromTheWireFormat() {
        TestProbe<ManagerStore.Command> store = kit.createTestProbe();
        RecordKey key = new RecordKey("tenant-a", 42);
        for (Object message : List.of(new PoolDirectory.CopyFailed(key, store.ref()),
                new PoolDirectory.ReleasedAll(List.of(key), store.ref(), "evicted"),
                new PoolDirectory.ServedAll(List.of(key), store.ref()), new ManagerStore.Refresh(List.of(key)))) {
            assertEquals(message, roundTrip(message));
        }
    }

    @Test
    void aLeavingStoresQuestion_andTheRecordsToHandOver_comeBackEqualFromTheWireFormat() {
        TestProbe<ManagerStore.Command> store = kit.createTestProbe();
        TestProbe<ManagerStore.Command> other = kit.createTestProbe();
        TestProbe<PoolDirectory.LeavingReply> reply = kit.createTestProbe();
        RecordKey key = new RecordKey("tenant-a", 43);
        for (Object message : List.of(new PoolDirectory.Leaving(store.ref(), reply.ref()),
                new PoolDirectory.LeavingReply(List.of(key), List.of(other.ref(), store.ref()), true))) {
            assertEquals(message, roundTrip(message));
        }
    }

    private Object roundTrip(Object message) {
        Serialization serialization = SerializationExtension.get(Adapter.toClassic(kit.system()));
        var serializer = serialization.findSerializerFor(message);
        assertEquals("JacksonCborSerializer", serializer.getClass().getSimpleName(), "bound to CBOR");
        byte[] bytes = serialization.serialize(message).get();
        return serialization.deserialize(bytes, serializer.identifier(), Serializers.manifestFor(serializer, message))
                .get();
    }
}
