package dev.selene.transport.pool;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What every data plane must do, whatever carries its bytes: images land verified in the receiver's shares, a
 * connection cut or silent mid-image fails that transfer only and never counts a partial image, a slow receiver
 * slows its sender instead of piling bytes up, registrations end exactly once, connections are reused.
 * Each backend runs it through a subclass.
 */
abstract class DataPlaneContract {

    /** Silence allowed mid-transfer in these tests. */
    static final Duration SILENCE = Duration.ofMillis(600);
    private static final Layout LAYOUT = Layout.deepseekTp4();
    private static final RecordKey ROOT = new RecordKey("plane", 0x5EED);
    private static final RecordKey KEY = ROOT.child(3);

    private final List<AutoCloseable> closing = new ArrayList<>();
    private DataPlane server;
    private DataPlane client;

    /** A data plane of the backend under test that serves on loopback. */
    abstract DataPlane serving(Duration silence);

    /** A data plane of the backend under test that only sends and fetches. */
    abstract DataPlane sending(Duration silence);

    @BeforeEach
    void start() {
        server = serving(SILENCE);
        client = sending(SILENCE);
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        server.close();
        for (AutoCloseable c : closing.reversed()) {
            c.close();
        }
    }

    private ImageShares shares(boolean hasRow) {
        ImageShares s = new ImageShares(LAYOUT, hasRow);
        closing.add(s);
        return s;
    }

    private OutgoingImage image(ImageShares source, boolean hasRow) {
        RecordImage.Frame frame = RecordImage.frame(new RecordSpec(KEY, ROOT, hasRow), LAYOUT, source);
        return new OutgoingImage(LAYOUT, hasRow, frame.headerBlock(), frame.footerBlock(), source);
    }

    private static <T> T get(CompletableFuture<T> f) throws Exception {
        return f.get(20, TimeUnit.SECONDS);
    }

    private static Throwable failureOf(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
        return e.getCause();
    }

    /** What a registration's callback was told. */
    private static final class Ended<T> {
        final CompletableFuture<T> value = new CompletableFuture<>();

        void accept(T v, Throwable failure) {
            if (failure != null) {
                value.completeExceptionally(failure);
            } else {
                value.complete(v);
            }
        }
    }

    @Test
    void push_landsTheImageInTheReceiversShares_verified() throws Exception {
        for (boolean hasRow : new boolean[]{true, false}) {
            ImageShares source = shares(hasRow).fill(hasRow ? 11 : 12);
            ImageShares target = shares(hasRow);
            Ended<ReceivedImage> ended = new Ended<>();
            OutgoingImage image = image(source, hasRow);
            long handle = server.expect(LAYOUT, KEY, image.bytes(), target, ended::accept);

            assertEquals(image.bytes(), get(client.push(server.address(), handle, image).done()));
            ReceivedImage received = get(ended.value);
            target.assertSameUsedBytes(source);
            assertEquals(KEY, received.header().key());
            assertArrayEquals(image.footerBlock(), received.footerBlock());
        }
    }

    @Test
    void fetch_bringsAnOfferedImageIntoTheReadersShares_verified() throws Exception {
        ImageShares source = shares(true).fill(21);
        ImageShares target = shares(true);
        Ended<Long> served = new Ended<>();
        OutgoingImage image = image(source, true);
        long handle = server.offer(image, served::accept);

        ReceivedImage received = get(client.fetch(server.address(), handle, LAYOUT, KEY, target).done());
        target.assertSameUsedBytes(source);
        assertEquals(image.bytes(), received.bytes());
        assertEquals(image.bytes(), get(served.value));
        // The image was served once: its handle is spent.
        Throwable again = failureOf(client.fetch(server.address(), handle, LAYOUT, KEY, shares(true)).done());
        assertInstanceOf(TransferFailedException.class, again);
    }

    @Test
    void transfersOneAfterAnother_reuseOneConnection() throws Exception {
        ImageShares source = shares(true).fill(31);
        OutgoingImage image = image(source, true);
        for (int i = 0; i < 5; i++) {
            Ended<ReceivedImage> ended = new Ended<>();
            long handle = server.expect(LAYOUT, KEY, image.bytes(), shares(true), ended::accept);
            get(client.push(server.address(), handle, image).done());
            get(ended.value);
            long offered = server.offer(image, (b, f) -> { });
            get(client.fetch(server.address(), offered, LAYOUT, KEY, shares(true)).done());
        }
        assertEquals(1, client.stats().connections());
    }

    @Test
    void aPushUnderAHandleNobodyExpects_fails_andTheNextTransferStillWorks() throws Exception {
        ImageShares source = shares(true).fill(41);
        OutgoingImage image = image(source, true);
        Throwable failure = failureOf(client.push(server.address(), 987_654_321L, image).done());
        assertTrue(failure.getMessage().contains("no image is expected"), failure.getMessage());

        Ended<ReceivedImage> ended = new Ended<>();
        long handle = server.expect(LAYOUT, KEY, image.bytes(), shares(true), ended::accept);
        get(client.push(server.address(), handle, image).done());
        get(ended.value);
    }

    @Test
    void anImageChangedAfterItsChecksumsWereTaken_isRefused_andNeverCountsAsReceived() throws Exception {
        ImageShares source = shares(true).fill(51);
        OutgoingImage image = image(source, true);
        source.share(3, 1).set(java.lang.foreign.ValueLayout.JAVA_BYTE, 100, (byte) 0x5A); // after framing
        Ended<ReceivedImage> ended = new Ended<>();
        long handle = server.expect(LAYOUT, KEY, image.bytes(), shares(true), ended::accept);

        Throwable sent = failureOf(client.push(server.address(), handle, image).done());
        Throwable received = failureOf(ended.value);
        assertTrue(received.getMessage().contains("invalid"), received.getMessage());
        assertTrue(sent.getMessage().contains("refused"), sent.getMessage());
    }

    @Test
    void anImageOfAnotherRecord_isRefusedByTheFetcher() throws Exception {
        ImageShares source = shares(true).fill(52);
        long handle = server.offer(image(source, true), (b, f) -> { });
        Throwable failure = failureOf(client.fetch(server.address(), handle, LAYOUT, ROOT.child(99), shares(true))
                .done());
        assertTrue(failure.getMessage().contains("invalid"), failure.getMessage());
    }

    @Test
    void aConnectionCutMidImage_throughAProxyThatCutsIt_failsThatTransferOnly_andNothingPartialCounts()
            throws Exception {
        ImageShares source = shares(true).fill(61);
        OutgoingImage image = image(source, true);
        Ended<ReceivedImage> ended = new Ended<>();
        long handle = server.expect(LAYOUT, KEY, image.bytes(), shares(true), ended::accept);
        try (CuttingProxy proxy = new CuttingProxy(server.address(), image.bytes() / 2)) {
            Throwable sent = failureOf(client.push(proxy.address(), handle, image).done());
            Throwable received = failureOf(ended.value);
            assertTrue(received.getMessage().contains("closed mid-transfer"), received.getMessage());
            assertInstanceOf(TransferFailedException.class, sent);
            assertTrue(proxy.forwarded() < image.bytes());
        }
        // Another transfer on the same planes is untouched.
        Ended<ReceivedImage> next = new Ended<>();
        ImageShares target = shares(true);
        long again = server.expect(LAYOUT, KEY, image.bytes(), target, next::accept);
        get(client.push(server.address(), again, image).done());
        get(next.value);
        target.assertSameUsedBytes(source);
    }

    @Test
    void aSenderThatGoesSilentMidImage_failsThatTransferAfterTheSilence() throws Exception {
        ImageShares source = shares(true).fill(71);
        OutgoingImage image = image(source, true);
        Ended<ReceivedImage> ended = new Ended<>();
        long handle = server.expect(LAYOUT, KEY, image.bytes(), shares(true), ended::accept);
        try (Socket raw = new Socket(server.address().host(), server.address().port())) {
            DataOutputStream out = new DataOutputStream(raw.getOutputStream());
            out.writeInt(Frames.MAGIC);
            out.writeInt(Frames.PUT);
            out.writeLong(handle);
            out.writeLong(image.bytes());
            out.write(image.headerBlock());
            out.flush(); // ... and nothing more: a stalled sender
            Throwable received = failureOf(ended.value);
            assertTrue(received.getMessage().contains("no bytes for"), received.getMessage());
        }
    }

    @Test
    void aReceiverThatDoesNotRead_holdsItsSenderAtTheHighWaterMark_andAnAbortEndsTheTransfer() throws Exception {
        try (ServerSocket stalled = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Socket> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return stalled.accept();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            long bytes = 512L << 20;
            Transfer<Long> push = client.rawPush(new DataAddress("127.0.0.1", stalled.getLocalPort()), bytes, 256 << 10);
            try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                Thread.sleep(SILENCE.toMillis() / 3);
                assertFalse(push.done().isDone());
                // What the sender queued is bounded by its write buffer's high-water mark plus one chunk, however
                // much it was asked to send.
                long queued = client.stats().queuedBytes();
                assertTrue(queued <= NettyDataPlane.WATER_MARK.high() + (256 << 10), "queued " + queued);
                push.abort("the test is over");
                assertInstanceOf(TransferFailedException.class, failureOf(push.done()));
            }
        }
    }

    @Test
    void rawTransfers_moveTheirBytesBothWays() throws Exception {
        long bytes = 24L << 20;
        assertEquals(bytes, get(client.rawPush(server.address(), bytes, 256 << 10).done()));
        assertEquals(bytes, get(client.rawFetch(server.address(), bytes, 256 << 10).done()));
        assertTrue(server.stats().bytesReceived() >= bytes);
        assertTrue(server.stats().bytesSent() >= bytes);
    }

    @Test
    void aWithdrawnHandle_neverEnds_andAClaimedOneCannotBeWithdrawn() throws Exception {
        ImageShares source = shares(true).fill(81);
        OutgoingImage image = image(source, true);
        Ended<ReceivedImage> withdrawn = new Ended<>();
        long handle = server.expect(LAYOUT, KEY, image.bytes(), shares(true), withdrawn::accept);
        assertTrue(server.cancel(handle));
        assertInstanceOf(TransferFailedException.class, failureOf(client.push(server.address(), handle, image)
                .done()));
        assertFalse(withdrawn.value.isDone());

        Ended<Long> served = new Ended<>();
        long offered = server.offer(image, served::accept);
        get(client.fetch(server.address(), offered, LAYOUT, KEY, shares(true)).done());
        assertFalse(server.cancel(offered));
        get(served.value);
    }

    @Test
    void closing_endsRegistrationsStillWaiting_withAFailure() throws Exception {
        Ended<ReceivedImage> waiting = new Ended<>();
        server.expect(LAYOUT, KEY, 1, shares(true), waiting::accept);
        server.close();
        assertInstanceOf(TransferFailedException.class, failureOf(waiting.value));
    }
}
