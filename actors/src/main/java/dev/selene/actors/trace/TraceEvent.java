package dev.selene.actors.trace;

import org.apache.pekko.actor.ActorPath;

/**
 * One step in a record's life: which actor, which message or state change, what came of it, and when.
 *
 * @param epochMicros wall-clock time of the step, in microseconds since the epoch
 * @param sinceMicros time since the record's previous step, in microseconds; -1 for the record's first step
 * @param actor       the actor's kind (e.g. {@code Catalog}, {@code RecordActor})
 * @param path        the path of the actor that recorded the step; null when it was recorded outside an actor
 * @param message     the message handled or state entered, with its essential arguments
 * @param outcome     what the step decided ({@code Stored}, {@code Retry(no_space)}, {@code Spilled}, ...); null
 *                    for a step on the way
 * @param correlation the id shared by one publication or restore and the actors working for it; 0 for none
 */
public record TraceEvent(long epochMicros, long sinceMicros, String actor, ActorPath path, String message,
                         String outcome, long correlation) {

    /** Wall-clock time of the step, in milliseconds since the epoch. */
    public long epochMillis() {
        return epochMicros / 1_000;
    }
}
