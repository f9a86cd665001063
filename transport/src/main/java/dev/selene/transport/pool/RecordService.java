package dev.selene.transport.pool;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.util.function.BiConsumer;

/**
 * The store behind a serving data plane: it decides where a pushed record lands and what a fetch is sent. The data
 * plane calls it on a transport thread and waits (reading nothing more from that connection) until it answers, from
 * any thread: exactly one answer per call.
 */
public interface RecordService {

    /** A peer offers the image of {@code spec} ({@code imageBytes} bytes); answer through {@code admission}. */
    void offered(RecordSpec spec, long imageBytes, Admission admission);

    /** A peer asks for the image of {@code key}; answer through {@code delivery}. */
    void requested(RecordKey key, Delivery delivery);

    /** The answer to an offer. */
    interface Admission {

        /**
         * Take the image into {@code target} (pieces of {@code layout}); {@code ended} runs once: with the image once it
         * arrived whole and verified, or with why it did not. After that nothing writes into {@code target}.
         */
        void land(Layout layout, PieceShares target, BiConsumer<ReceivedImage, Throwable> ended);

        /** The record is held already: the peer sends nothing and counts it stored. */
        void alreadyHeld();

        /** The record is not taken, for {@code reason}. */
        void refuse(String reason);
    }

    /** The answer to a request. */
    interface Delivery {

        /**
         * Send {@code image}; {@code ended} runs once it has been sent (the bytes) or could not be (why). After that
         * its shares are no longer read.
         */
        void send(OutgoingImage image, BiConsumer<Long, Throwable> ended);

        /** The record is not held here, for {@code reason}. */
        void notHeld(String reason);
    }
}
