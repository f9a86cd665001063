package dev.selene.actors.api;

import dev.selene.actors.value.PublishResult;


/**
 * How a publication driven by {@link Publisher} ended: with a final answer from the cache, or abandoned because
 * the snapshot was given up while the cache still said {@code Retry}.
 *
 * @param result         the last answer (a {@link PublishResult.Retry} when abandoned)
 * @param abandonReason  the abandon reason label, or null when not abandoned
 * @param attempts       publications sent
 * @param latencyNanos   from the first attempt to the outcome
 */
public record PublishOutcome(PublishResult result, String abandonReason, int attempts, long latencyNanos) {

    public boolean abandoned() {
        return abandonReason != null;
    }
}
