package dev.selene.transport.pool;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;

import java.util.function.BiConsumer;

/**
 * Moves record images between nodes' slots, apart from the channel that decides what moves where. The deciding side
 * (a control plane) hands out <em>handles</em>: a node that will receive a record registers where its bytes go
 * ({@link #expect}) and sends the handle to the sender, which {@link #push pushes} the image under it; a node that
 * holds a record registers it ({@link #offer}) and sends the handle to the reader, which {@link #fetch fetches} it.
 *
 * <p>The contract every implementation keeps (and a contract test checks):
 * <ul>
 *   <li>bytes go from the sender's shares to the receiver's shares with nothing buffered beyond a bounded window:
 *       a slow receiver slows its sender;</li>
 *   <li>an image is verified (every checksum) before it counts as received; a connection closed or silent
 *       mid-image fails that transfer only, and a partial image never counts;</li>
 *   <li>each registration ends exactly once: its callback runs (on a transport thread) or it is cancelled, and
 *       after either the transport no longer touches its memory;</li>
 *   <li>connections to a peer are reused across transfers.</li>
 * </ul>
 */
public interface DataPlane extends AutoCloseable {

    /** Where peers reach this node's data plane; null for a node that only sends and fetches. */
    DataAddress address();

    /**
     * Expects one image of {@code key} ({@code imageBytes} bytes, {@code layout}) to be pushed under the returned
     * handle; its pieces land in {@code target}. {@code ended} runs once: with the verified image, or with why it
     * failed (a wrong or invalid image, a connection lost or silent mid-image). Not at all if {@link #cancel}
     * comes first.
     */
    long expect(Layout layout, RecordKey key, long imageBytes, PieceShares target,
                BiConsumer<ReceivedImage, Throwable> ended);

    /**
     * Offers {@code image} for one fetch under the returned handle. {@code ended} runs once the image has been sent
     * (the bytes sent) or could not be (with why); after that its shares are no longer read. Not at all if
     * {@link #cancel} comes first.
     */
    long offer(OutgoingImage image, BiConsumer<Long, Throwable> ended);

    /**
     * Withdraws an expected or offered handle that no peer has used yet: true when it was withdrawn (its callback
     * will never run), false when a transfer already took it (its callback runs when that transfer ends).
     */
    boolean cancel(long handle);

    /** Pushes {@code image} to the peer at {@code to}, which expects it under {@code handle}; yields the bytes sent. */
    Transfer<Long> push(DataAddress to, long handle, OutgoingImage image);

    /**
     * Fetches the image the peer at {@code from} offers under {@code handle} into {@code target}, verified as an
     * image of {@code key} under {@code layout}.
     */
    Transfer<ReceivedImage> fetch(DataAddress from, long handle, Layout layout, RecordKey key, PieceShares target);

    /**
     * The raw path under {@link #push}, for benchmarks: {@code bytes} bytes from off-heap memory, in chunks of
     * {@code chunkBytes}, copied by the peer into off-heap memory of its own; no slots, codec or checksums.
     */
    Transfer<Long> rawPush(DataAddress to, long bytes, int chunkBytes);

    /** The raw path under {@link #fetch}: {@code bytes} bytes from the peer's off-heap memory into this node's. */
    Transfer<Long> rawFetch(DataAddress from, long bytes, int chunkBytes);

    /** What this data plane has done so far. */
    DataPlaneStats stats();

    /** Closes every connection and stops its threads; registrations still waiting end with a failure. */
    @Override
    void close();
}
