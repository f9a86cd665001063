package dev.selene.actors.census;

import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ActorCensusTest {

    private static final ActorTestKit KIT = ActorTestKit.create();

    @AfterAll
    static void stop() {
        KIT.shutdownTestKit();
    }

    /** Handles each message by waiting for {@code gate}, then tells {@code handled}. */
    private static Behavior<String> gated(CountDownLatch gate, ActorRef<String> handled) {
        return Behaviors.receiveMessage(m -> {
            gate.await(10, TimeUnit.SECONDS);
            handled.tell(m);
            return Behaviors.same();
        });
    }

    private static ActorCensus.Kind kind(String kind) {
        return ActorCensus.of(KIT.system()).snapshot(100).kinds().stream().filter(k -> k.kind().equals(kind))
                .findFirst().orElseThrow(() -> new AssertionError("no kind " + kind));
    }

    @Test
    void snapshot_whileTheActorIsBusy_countsItsQueuedMessagesWithoutAskingIt() {
        CountDownLatch gate = new CountDownLatch(1);
        TestProbe<String> handled = KIT.createTestProbe();
        ActorRef<String> busy = KIT.spawn(gated(gate, handled.ref()), "busy-one", ActorCensus.MAILBOX);
        busy.tell("a");
        busy.tell("b");
        busy.tell("c");

        // "a" is being handled (blocked on the gate): two wait in the mailbox, and the census says so at once.
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
                .until(() -> kind("busy-one").mailbox() == 2);
        ActorCensus.Kind k = kind("busy-one");
        assertEquals(1, k.actors());
        assertEquals(1, k.handled());
        assertTrue(ActorCensus.of(KIT.system()).snapshot(100).actors().stream()
                .anyMatch(a -> a.path().equals("/user/busy-one") && a.mailbox() == 2));

        gate.countDown();
        handled.receiveSeveralMessages(3);
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
                .until(() -> kind("busy-one").handled() == 3 && kind("busy-one").mailbox() == 0);
    }

    @Test
    void snapshot_forgetsStoppedActors_butKeepsWhatTheirKindHandled() {
        TestProbe<String> handled = KIT.createTestProbe();
        ActorRef<String> brief = KIT.spawn(gated(new CountDownLatch(0), handled.ref()), "brief-one",
                ActorCensus.MAILBOX);
        brief.tell("x");
        handled.receiveMessage();
        KIT.stop(brief);

        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
                .until(() -> kind("brief-one").actors() == 0);
        assertEquals(1, kind("brief-one").handled());
    }

    @Test
    void snapshot_isBoundedInActorsListed_butCountsThemAll() {
        TestProbe<String> handled = KIT.createTestProbe();
        for (int i = 0; i < 5; i++) {
            KIT.spawn(gated(new CountDownLatch(0), handled.ref()), "many-" + i, ActorCensus.MAILBOX);
        }
        ActorCensus.Snapshot s = ActorCensus.of(KIT.system()).snapshot(2);
        assertEquals(2, s.actors().size());
        assertTrue(s.total() >= 5, "total " + s.total());
    }
}
