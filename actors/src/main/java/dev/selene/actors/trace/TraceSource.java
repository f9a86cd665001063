package dev.selene.actors.trace;

import org.apache.pekko.actor.ActorPath;
import org.apache.pekko.actor.typed.javadsl.ActorContext;

/**
 * The actor that records trace events: its kind ({@code RecordActor}, {@code Catalog}, ...) and its path. Built once
 * per actor, so that an event costs no lookup or formatting.
 *
 * @param kind the actor's behaviour
 * @param path the actor's path; null only for events recorded outside an actor
 */
public record TraceSource(String kind, ActorPath path) {

    /** The source of events recorded by {@code ctx}'s actor, a {@code kind}. */
    public static TraceSource of(String kind, ActorContext<?> ctx) {
        return new TraceSource(kind, ctx.getSelf().path());
    }
}
