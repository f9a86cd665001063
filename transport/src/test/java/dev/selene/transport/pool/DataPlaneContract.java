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
 * What every data plane must do, whatever carries its bytes: images land verified in the receiving store's memory,
 * a connection cut or silent mid-image fails that transfer only and never counts a partial image, a slow receiver
 * slows its sender instead of piling bytes up, the store's decisions each end exactly once, connections are reused.
 * Each backend runs it through a subclass.
 */
abstract class DataPlaneContract {

    /** Silence allowed mid-transfer in these tests. */
    static final Duration SILENCE = Duration.ofMillis(600);
    static final Layout LAYOUT = Layout.deepseekTp4();
    static final RecordKey ROOT = new RecordKey("plane", 0x5EED);
    static final RecordKey KEY = ROOT.child(3);

    private final List<AutoCloseable> closing = new ArrayList<>();
    TestStore store;
    DataPlane server;
    DataPlane client;

    /** A data plane of the backend under test that serves {@code store} on loopback. */
    abstract DataPlane serving(Duration silence, RecordService store);

    /** A data plane of the backend under test that only pushes and fetches. */
    abstract DataPlane sending(Duration silence);

    /**
     * A socket to {@code a} that speaks what the plane's connections speak beneath the frames (plain TCP; under TLS,
     * TLS with a valid certificate), for tests that write frames by hand.
     */
    Socket connectRaw(DataAddress a) throws IOException {
        return new Socket(a.host(), a.port());
    }

    /** A listening socket a sending plane can connect to (under TLS, a TLS server socket of a valid node). */
    ServerSocket listenRaw() throws IOException {
        return new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    }

    /** Readies a socket {@link #listenRaw()} accepted to carry frames (under TLS: its handshake). */
    void acceptedRaw(Socket s) throws IOException {
    }

    @BeforeEach
    void start() {
        store = new TestStore(LAYOUT);
        server = serving(SILENCE, store);
        client = sending(SILENCE);
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        server.close();
        store.close();
        for (AutoCloseable c : closing.reversed()) {
            c.close();
        }
    }

    ImageShares shares(boolean hasRow) {
        ImageShares s = new ImageShares(LAYOUT, hasRow);
        closing.add(s);
        return s;
    }

    static RecordSpec spec(RecordKey key, boolean hasRow) {
        return new RecordSpec(key, ROOT, hasRow);
    }

    OutgoingImage image(RecordKey key, ImageShares source, boolean hasRow) {
        RecordImage.Frame frame = RecordImage.frame(spec(key, hasRow), LAYOUT, source);
        return new OutgoingImage(LAYOUT, hasRow, frame.headerBlock(), frame.footerBlock(), source);
    }

    static <T> T get(CompletableFuture<T> f) throws Exception {
        return f.get(20, TimeUnit.SECONDS);
    }

    static Throwable failureOf(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
        return e.getCause();
    }

    @Test
    void push_landsTheImageInTheStoresMemory_verified() throws Exception {
        for (boolean hasRow : new boolean[]{true, false}) {
            RecordKey key = ROOT.child(hasRow ? 1 : 2);
            ImageShares source = shares(hasRow).fill(hasRow ? 11 : 12);
            OutgoingImage image = image(key, source, hasRow);

            Pushed pushed = get(client.push(server.address(), spec(key, hasRow), image).done());
            assertEquals(new Pushed(false, image.bytes()), pushed);
            ReceivedImage received = get(store.landing(key));
            store.kept.get(key).shares().assertSameUsedBytes(source);
            assertEquals(key, received.header().key());
            assertArrayEquals(image.footerBlock(), received.footerBlock());
        }
    }

    @Test
    void pushOfARecordTheStoreHolds_sendsNoImage() throws Exception {
        ImageShares source = shares(true).fill(13);
        OutgoingImage image = image(KEY, source, true);
        get(client.push(server.address(), spec(KEY, true), image).done());
        long received = server.stats().bytesReceived();

        assertEquals(new Pushed(true, 0), get(client.push(server.address(), spec(KEY, true), image).done()));
        assertTrue(server.stats().bytesReceived() - received < 1024, "only the request crossed");
    }

    @Test
    void pushTheStoreRefuses_failsWithItsReason_andTheConnectionServesTheNextTransfer() throws Exception {
        ImageShares source = shares(true).fill(14);
        store.refusing = "no room here";
        Throwable failure = failureOf(client.push(server.address(), spec(KEY, true), image(KEY, source, true)).done());
        assertTrue(failure.getMessage().contains("no room here"), failure.getMessage());

        store.refusing = null;
        get(client.push(server.address(), spec(KEY, true), image(KEY, source, true)).done());
        assertEquals(1, client.stats().connections());
        assertEquals(1, client.stats().opened());
    }

    @Test
    void fetch_bringsAHeldImageIntoTheReadersShares_verified() throws Exception {
        ImageShares source = shares(true).fill(21);
        OutgoingImage image = image(KEY, source, true);
        get(client.push(server.address(), spec(KEY, true), image).done());
        ImageShares target = shares(true);

        ReceivedImage received = get(client.fetch(server.address(), KEY, LAYOUT, target).done());
        target.assertSameUsedBytes(source);
        assertEquals(image.bytes(), received.bytes());
        assertEquals(image.bytes(), get(store.sent.get(KEY)));
    }

    @Test
    void fetchOfARecordTheStoreDoesNotHold_failsWithItsReason() throws Exception {
        Throwable failure = failureOf(client.fetch(server.address(), KEY, LAYOUT, shares(true)).done());
        assertTrue(failure.getMessage().contains("does not hold"), failure.getMessage());
    }

    @Test
    void transfersOneAfterAnother_reuseOneConnection() throws Exception {
        for (int i = 0; i < 5; i++) {
            RecordKey key = ROOT.child(100 + i);
            OutgoingImage image = image(key, shares(true).fill(31 + i), true);
            get(client.push(server.address(), spec(key, true), image).done());
            get(client.fetch(server.address(), key, LAYOUT, shares(true)).done());
        }
        assertEquals(1, client.stats().connections());
        assertEquals(1, client.stats().opened());
    }

    @Test
    void anImageChangedAfterItsChecksumsWereTaken_isRefused_andNeverCountsAsReceived() throws Exception {
        ImageShares source = shares(true).fill(51);
        OutgoingImage image = image(KEY, source, true);
        source.share(3, 1).set(java.lang.foreign.ValueLayout.JAVA_BYTE, 100, (byte) 0x5A); // after framing

        Throwable sent = failureOf(client.push(server.address(), spec(KEY, true), image).done());
        Throwable received = failureOf(store.landing(KEY));
        assertTrue(received.getMessage().contains("invalid"), received.getMessage());
        assertTrue(sent.getMessage().contains("invalid"), sent.getMessage());
        assertFalse(store.kept.containsKey(KEY));
    }

    @Test
    void aFetchedImageOfAnotherRecord_isRefusedByTheReader() throws Exception {
        RecordKey other = ROOT.child(99);
        ImageShares source = shares(true).fill(52);
        // The store keeps other's image under KEY: what a corrupt store would send.
        get(client.push(server.address(), spec(other, true), image(other, source, true)).done());
        store.kept.put(KEY, store.kept.get(other));
        Throwable failure = failureOf(client.fetch(server.address(), KEY, LAYOUT, shares(true)).done());
        assertTrue(failure.getMessage().contains("invalid"), failure.getMessage());
    }

    @Test
    void aConnectionCutMidImage_throughAProxyThatCutsIt_failsThatTransferOnly_andNothingPartialCounts()
            throws Exception {
        ImageShares source = shares(true).fill(61);
        OutgoingImage image = image(KEY, source, true);
        try (CuttingProxy proxy = new CuttingProxy(server.address(), image.bytes() / 2)) {
            Throwable sent = failureOf(client.push(proxy.address(), spec(KEY, true), image).done());
            Throwable received = failureOf(store.landing(KEY));
            assertTrue(received.getMessage().contains("closed mid-transfer"), received.getMessage());
            assertInstanceOf(TransferFailedException.class, sent);
            assertTrue(proxy.forwarded() < image.bytes());
            assertFalse(store.kept.containsKey(KEY));
        }
        // Another transfer on the same planes is untouched.
        RecordKey next = ROOT.child(62);
        get(client.push(server.address(), spec(next, true), image(next, source, true)).done());
        store.kept.get(next).shares().assertSameUsedBytes(source);
    }

    @Test
    void aSenderThatGoesSilentMidImage_failsThatTransferAfterTheSilence() throws Exception {
        ImageShares source = shares(true).fill(71);
        OutgoingImage image = image(KEY, source, true);
        try (Socket raw = connectRaw(server.address())) {
            DataOutputStream out = new DataOutputStream(raw.getOutputStream());
            byte[] name = new byte[Frames.MAX_NAME_BYTES];
            var spec = RecordWire.spec(spec(KEY, true), image.bytes());
            int n = spec.readableBytes();
            spec.readBytes(name, 0, n);
            out.writeInt(Frames.MAGIC);
            out.writeInt(Frames.PUT);
            out.writeLong(0);
            out.writeLong(n);
            out.write(name, 0, n);
            out.flush();
            byte[] ready = raw.getInputStream().readNBytes(Frames.HEADER_BYTES);
            assertEquals(Frames.READY, java.nio.ByteBuffer.wrap(ready).getInt(4));
            out.write(image.headerBlock());
            out.flush(); // ... and nothing more: a stalled sender
            Throwable received = failureOf(store.landing(KEY));
            assertTrue(received.getMessage().contains("no bytes for"), received.getMessage());
        }
    }

    @Test
    void aReceiverThatDoesNotRead_holdsItsSenderAtTheHighWaterMark_andAnAbortEndsTheTransfer() throws Exception {
        try (ServerSocket stalled = listenRaw()) {
            CompletableFuture<Socket> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    Socket s = stalled.accept();
                    acceptedRaw(s);
                    return s;
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
        // The serving end counts a write once it completed, which may come just after the peer has read it.
        TestWait.until(() -> server.stats().bytesReceived() >= bytes && server.stats().bytesSent() >= bytes,
                () -> "the server's counts: " + server.stats());
    }

    @Test
    void aPeerThatDoesNotSpeakTheProtocol_isCutOff_andServingGoesOn() throws Exception {
        try (Socket raw = connectRaw(server.address())) {
            raw.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
            raw.getOutputStream().flush();
            assertEquals(-1, raw.getInputStream().read(), "the connection is closed without an answer");
        }
        ImageShares source = shares(true).fill(91);
        get(client.push(server.address(), spec(KEY, true), image(KEY, source, true)).done());
    }
}
