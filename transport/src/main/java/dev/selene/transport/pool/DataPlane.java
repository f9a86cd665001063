package dev.selene.transport.pool;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;


/**
 * Moves record images between nodes' slots, apart from the channel that decides what moves where. The deciding side
 * (a control plane) tells a node which peers hold or should hold a record and where their data planes listen; the
 * data plane then names a record by its key: a {@link #push} offers a record's image to a peer's store, which says
 * where it lands (or that it holds it already) before any byte of it is sent; a {@link #fetch} asks a peer's store
 * for a record, which sends it from where it lives. A serving data plane answers through its {@link RecordService}.
 *
 * <p>The contract every implementation keeps (and a contract test checks):
 * <ul>
 *   <li>bytes go from the sender's shares to the receiver's shares with nothing buffered beyond a bounded window:
 *       a slow receiver slows its sender;</li>
 *   <li>an image is verified (every checksum) before it counts as received; a connection closed or silent
 *       mid-image fails that transfer only, and a partial image never counts;</li>
 *   <li>every store decision that lands or sends an image ends exactly once (its callback runs), and after that
 *       the transport no longer touches its memory;</li>
 *   <li>connections to a peer are reused across transfers.</li>
 * </ul>
 */
public interface DataPlane extends AutoCloseable {

    /** Where peers reach this node's data plane; null for a node that only pushes and fetches. */
    DataAddress address();

    /**
     * Pushes the image of {@code spec} to the store of the peer at {@code to}: yields whether the store took the
     * bytes or held the record already.
     */
    Transfer<Pushed> push(DataAddress to, RecordSpec spec, OutgoingImage image);

    /** Fetches the image of {@code key} from the store of the peer at {@code from} into {@code target}, verified. */
    Transfer<ReceivedImage> fetch(DataAddress from, RecordKey key, Layout layout, PieceShares target);

    /**
     * The raw path under {@link #push}, for benchmarks: {@code bytes} bytes from off-heap memory, in chunks of
     * {@code chunkBytes}, copied by the peer into off-heap memory of its own; no slots, codec or checksums.
     */
    Transfer<Long> rawPush(DataAddress to, long bytes, int chunkBytes);

    /** The raw path under {@link #fetch}: {@code bytes} bytes from the peer's off-heap memory into this node's. */
    Transfer<Long> rawFetch(DataAddress from, long bytes, int chunkBytes);

    /** What this data plane has done so far. */
    DataPlaneStats stats();

    /** Closes every connection and stops its threads; transfers in flight end with a failure. */
    @Override
    void close();
}
