package dev.selene.actors.trace;

/**
 * One step in a record's life: which actor, which message or state change, and when.
 *
 * @param epochMillis wall-clock time of the step
 * @param actor       the actor's name (e.g. {@code SlotPool}, {@code RecordActor})
 * @param message     the message handled or state entered, with its essential arguments
 */
public record TraceEvent(long epochMillis, String actor, String message) {
}
