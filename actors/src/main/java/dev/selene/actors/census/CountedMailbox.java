package dev.selene.actors.census;

import com.typesafe.config.Config;
import org.apache.pekko.actor.ActorPath;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.dispatch.Envelope;
import org.apache.pekko.dispatch.MailboxType;
import org.apache.pekko.dispatch.MessageQueue;
import org.apache.pekko.dispatch.UnboundedMailbox;
import scala.Option;

import java.util.concurrent.atomic.LongAdder;

/**
 * Pekko's unbounded mailbox, counted by the system's {@link ActorCensus}: configured at {@value #CONFIG_PATH} and
 * selected with {@link ActorCensus#MAILBOX}.
 */
public final class CountedMailbox implements MailboxType {

    /** Where the mailbox is configured (the actors module's {@code reference.conf}). */
    public static final String CONFIG_PATH = "selene-counted-mailbox";

    /** Called by Pekko with the system's settings and the mailbox's configuration. */
    public CountedMailbox(ActorSystem.Settings settings, Config config) {
    }

    @Override
    public MessageQueue create(Option<ActorRef> owner, Option<ActorSystem> system) {
        if (owner.isEmpty() || system.isEmpty()) {
            return new UnboundedMailbox.MessageQueue();
        }
        ActorCensus census = ActorCensus.ID.get(system.get());
        ActorPath path = owner.get().path();
        String kind = ActorCensus.kindOf(path);
        Queue queue = new Queue(census, path, kind, census.handledOf(kind));
        census.register(queue);
        return queue;
    }

    /** The queue of one counted actor. */
    static final class Queue extends UnboundedMailbox.MessageQueue {
        private final ActorCensus census;
        private final ActorPath path;
        private final String kind;
        private final LongAdder handled;

        Queue(ActorCensus census, ActorPath path, String kind, LongAdder handled) {
            this.census = census;
            this.path = path;
            this.kind = kind;
            this.handled = handled;
        }

        ActorPath path() {
            return path;
        }

        String kind() {
            return kind;
        }

        @Override
        public Envelope dequeue() {
            Envelope e = super.dequeue();
            if (e != null) {
                handled.increment();
            }
            return e;
        }

        @Override
        public void cleanUp(ActorRef owner, MessageQueue deadLetters) {
            census.unregister(this);
            super.cleanUp(owner, deadLetters);
        }
    }
}
