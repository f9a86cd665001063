package dev.selene.actors.cache;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.BehaviorInterceptor;
import org.apache.pekko.actor.typed.TypedActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * A seam through which this package's tests inject failures into the node's actors: every actor shows it each
 * message before handling it, and an implementation may throw to make that actor fail there, as a bug would. The
 * node's own is {@link #NONE}; nothing outside this package can set another.
 */
@FunctionalInterface
interface FaultInjection {

    /** Injects nothing. */
    FaultInjection NONE = (actor, message) -> { };

    /** Called by {@code actor} (its kind, e.g. {@code "Catalog"}) before it handles {@code message}. */
    void beforeHandling(String actor, Object message);

    /** {@code behavior} with every message it receives shown to this first, as {@code actor}. */
    default <T> Behavior<T> around(String actor, Class<T> messages, Behavior<T> behavior) {
        if (this == NONE) {
            return behavior;
        }
        FaultInjection self = this;
        return Behaviors.intercept(() -> new BehaviorInterceptor<T, T>(messages) {
            @Override
            public Behavior<T> aroundReceive(TypedActorContext<T> ctx, T msg, ReceiveTarget<T> target) {
                self.beforeHandling(actor, msg);
                return target.apply(ctx, msg);
            }
        }, behavior);
    }
}
