package dev.selene.transport.pool;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.selene.engine.key.RecordKey;
import dev.selene.transport.tls.PoolTls;
import dev.selene.transport.tls.TestCertificates;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.security.KeyFactory;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The data plane contract with TLS on every connection (the whole contract, with a valid certificate on both
 * ends), and what TLS adds: a peer without a valid certificate (none, another CA's, an expired one) or one that
 * speaks plain text is refused at the handshake, carries no bytes to the store, and is counted, and logged once;
 * namespace rules refuse a peer's reads and writes of namespaces not its own. Each TLS engine runs it through a
 * subclass.
 */
abstract class TlsDataPlaneContract extends DataPlaneContract {

    static final String SERVER = "pool-manager-1";
    static final String CLIENT = "host-a";

    /** Every line PoolTls logged in this JVM (a refusal is logged once per process, whichever test met it first). */
    private static final ListAppender<ILoggingEvent> LOG = new ListAppender<>();

    static {
        LOG.start();
        ((Logger) LoggerFactory.getLogger(PoolTls.class)).addAppender(LOG);
    }

    /** The TLS engine under test. */
    abstract PoolTls.Engine engine();

    /** The Netty transport the engine runs on. */
    abstract NettyDataPlane.Backend backend();

    DataPlaneTls tls(String node, NamespaceAccess access) {
        return new DataPlaneTls(PoolTls.of(TestCertificates.of(node)), engine(), access);
    }

    /**
     * The silence allowed: at least 3 s under TLS, whose handshakes (the engine's first ones in this JVM above all)
     * can keep a busy 2-core machine's event loop from the bytes for longer than the plain contract's 600 ms. The
     * tests of silence wait for it, however long.
     */
    private static Duration tlsSilence(Duration silence) {
        return silence.compareTo(Duration.ofSeconds(3)) < 0 ? Duration.ofSeconds(3) : silence;
    }

    @Override
    DataPlane serving(Duration silence, RecordService store) {
        return NettyDataPlane.serve("127.0.0.1", 0, null, backend(), tlsSilence(silence), 1, store,
                tls(SERVER, NamespaceAccess.OPEN));
    }

    @Override
    DataPlane sending(Duration silence) {
        return NettyDataPlane.client(backend(), tlsSilence(silence), 1, tls(CLIENT, NamespaceAccess.OPEN));
    }

    private static SSLContext jdk(String node) {
        return PoolTls.of(TestCertificates.of(node)).clusterContext();
    }

    @Override
    Socket connectRaw(DataAddress a) throws IOException {
        SSLSocket s = (SSLSocket) jdk(CLIENT).getSocketFactory().createSocket(a.host(), a.port());
        s.startHandshake();
        return s;
    }

    @Override
    ServerSocket listenRaw() throws IOException {
        SSLServerSocket s = (SSLServerSocket) jdk(SERVER).getServerSocketFactory().createServerSocket(0, 1,
                InetAddress.getLoopbackAddress());
        s.setNeedClientAuth(true);
        return s;
    }

    @Override
    void acceptedRaw(Socket s) throws IOException {
        ((SSLSocket) s).startHandshake();
    }

    private PoolTls serverTls() {
        return PoolTls.of(TestCertificates.of(SERVER));
    }

    private static long logged(PoolTls.Reason reason) {
        return LOG.list.stream().filter(e -> e.getFormattedMessage().contains("data connection from 127.0.0.1")
                && e.getFormattedMessage().contains(reason.words())).count();
    }

    /**
     * A client with {@code node}'s certificate that presents it whatever CAs the server asks for (as a stranger
     * would), writes a request and reads: nothing comes back.
     */
    private void refusedRequestFrom(String node) throws Exception {
        SSLContext c = SSLContext.getInstance("TLSv1.3");
        c.init(new KeyManager[]{new PresentingAlways(TestCertificates.of(node))},
                new TrustManager[]{new TrustingEveryone()}, null);
        requestGetsNothingBack(c);
    }

    /** Over a connection made with {@code c}: writes a raw put and reads; nothing comes back. */
    private void requestGetsNothingBack(SSLContext c) throws Exception {
        try (SSLSocket s = (SSLSocket) c.getSocketFactory().createSocket(server.address().host(),
                server.address().port())) {
            s.setSoTimeout(10_000);
            // Taken before the write: a refused handshake closes the socket, after which it has no stream to give.
            InputStream in = s.getInputStream();
            try {
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeInt(Frames.MAGIC);
                out.writeInt(Frames.RAW_PUT);
                out.writeLong(0);
                out.writeLong(1024);
                out.write(new byte[1024]);
                out.flush();
            } catch (IOException e) {
                // The server's refusal may arrive before the request is written: the write fails, nothing crossed.
            }
            assertNothingComesBack(in);
        }
    }

    private void assertRefusedTwice_countedTwice_loggedOnce(PoolTls.Reason reason, String node) throws Exception {
        long before = serverTls().refusals(PoolTls.Plane.DATA, reason);
        for (int i = 0; i < 2; i++) {
            refusedRequestFrom(node);
        }
        assertEquals(0, server.stats().bytesReceived(), "the refused connections carried no bytes");
        TestWait.until(() -> serverTls().refusals(PoolTls.Plane.DATA, reason) == before + 2,
                () -> reason + " refusals " + serverTls().refusals(PoolTls.Plane.DATA, reason));
        assertEquals(1, logged(reason), "logged once, naming the peer");
    }

    /**
     * A handshake whose answer comes back through a trickling proxy takes longer in all than the client's silence
     * allowed (the old rule gave up a handshake at that silence, or at a second), yet its peer is never silent that
     * long: it succeeds, and the push lands.
     */
    @Test
    void aHandshakeSlowerInAllThanTheSilence_throughATricklingProxy_completesWhileThePeerKeepsAnswering()
            throws Exception {
        get(client.push(server.address(), spec(ROOT, true), image(ROOT, shares(true).fill(3), true)).done()); // warm
        Duration silence = Duration.ofSeconds(1);
        try (TricklingProxy slow = new TricklingProxy(server.address(), 300, Duration.ofMillis(250));
             DataPlane patient = NettyDataPlane.client(backend(), silence, 1, tls(CLIENT, NamespaceAccess.OPEN))) {
            long started = System.nanoTime();
            OutgoingImage image = image(KEY, shares(true).fill(9), true);
            get(patient.push(slow.address(), spec(KEY, true), image).done());
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            store.kept.get(KEY).shares().assertSameUsedBytes(shares(true).fill(9));
            assertTrue(took > silence.toMillis(), "the trickle made the transfer outlast the silence allowed (" + took
                    + " ms): else this test shows nothing");
        }
    }

    /**
     * A peer that takes the connection and then says nothing (a stopped process whose kernel still accepts) is given
     * up after a few times the silence allowed, named as silent, long before the handshake's limit in all.
     */
    @Test
    void aPeerSilentDuringTheHandshake_failsTheTransferAfterTheSilence_notTheHandshakeLimit() throws Exception {
        Duration silence = Duration.ofMillis(500);
        try (ServerSocket mute = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
             DataPlane impatient = NettyDataPlane.client(backend(), silence, 1, tls(CLIENT, NamespaceAccess.OPEN))) {
            long started = System.nanoTime();
            Throwable f = failureOf(impatient.push(new DataAddress("127.0.0.1", mute.getLocalPort()), spec(KEY, true),
                    image(KEY, shares(true).fill(5), true)).done());
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertInstanceOf(TransferFailedException.class, f);
            assertTrue(f.getMessage().contains("sent nothing for " + silence.toMillis() * TlsGate.HANDSHAKE_SILENCES
                    + " ms"), f.getMessage());
            assertTrue(took < NettyDataPlane.HANDSHAKE_LIMIT.toMillis(), "given up after " + took + " ms");
        }
    }

    @Test
    void aPlaneWithAnExpiredCertificate_cannotPush_andTheStoreSeesNothing() throws Exception {
        try (DataPlane other = NettyDataPlane.client(backend(), SILENCE, 1, tls("expired", NamespaceAccess.OPEN))) {
            Throwable f = failureOf(other.push(server.address(), spec(KEY, true),
                    image(KEY, shares(true).fill(7), true)).done());
            assertInstanceOf(TransferFailedException.class, f);
        }
        assertEquals(0, server.stats().bytesReceived());
        assertTrue(store.kept.isEmpty() && store.landed.isEmpty(), "the store was asked nothing");
    }

    @Test
    void aClientWhoseCertificateAnotherCaSigned_isRefused_carriesNoBytes_countedAndLoggedOnce() throws Exception {
        assertRefusedTwice_countedTwice_loggedOnce(PoolTls.Reason.UNTRUSTED, "rogue");
    }

    @Test
    void aClientWithAnExpiredCertificate_isRefused_carriesNoBytes_countedAndLoggedOnce() throws Exception {
        assertRefusedTwice_countedTwice_loggedOnce(PoolTls.Reason.EXPIRED, "expired");
    }

    @Test
    void aClientWithoutACertificate_isRefused_carriesNoBytes_andIsCounted() throws Exception {
        long before = serverTls().refusals(PoolTls.Plane.DATA, PoolTls.Reason.NO_CERTIFICATE);
        SSLContext anonymous = SSLContext.getInstance("TLSv1.3");
        anonymous.init(null, new TrustManager[]{new TrustingEveryone()}, null);
        requestGetsNothingBack(anonymous);
        assertEquals(0, server.stats().bytesReceived(), "the refused connection carried no bytes");
        TestWait.until(() -> serverTls().refusals(PoolTls.Plane.DATA, PoolTls.Reason.NO_CERTIFICATE) == before + 1,
                () -> "no-certificate refusals " + serverTls().refusals(PoolTls.Plane.DATA,
                        PoolTls.Reason.NO_CERTIFICATE));
    }

    @Test
    void aPlainTextClient_connectingToTheTlsPort_getsNothing_andIsCounted() throws Exception {
        long before = serverTls().refusals(PoolTls.Plane.DATA, PoolTls.Reason.NOT_TLS);
        try (Socket raw = new Socket(server.address().host(), server.address().port())) {
            raw.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(raw.getOutputStream());
            try {
                out.writeInt(Frames.MAGIC);
                out.writeInt(Frames.RAW_GET);
                out.writeLong(1024);
                out.writeLong(1024);
                out.flush();
            } catch (IOException e) {
                // The server may have cut the connection off before the whole request was written.
            }
            assertNothingComesBack(raw.getInputStream());
        }
        assertEquals(0, server.stats().bytesReceived());
        assertEquals(0, server.stats().bytesSent());
        TestWait.until(() -> serverTls().refusals(PoolTls.Plane.DATA, PoolTls.Reason.NOT_TLS) == before + 1,
                () -> "plain-text refusals " + serverTls().refusals(PoolTls.Plane.DATA, PoolTls.Reason.NOT_TLS));
    }

    @Test
    void aServerWhoseCertificateAnotherCaSigned_isRefusedByTheClient() throws Exception {
        TestStore other = new TestStore(LAYOUT);
        try (DataPlane rogue = NettyDataPlane.serve("127.0.0.1", 0, null, backend(), SILENCE, 1, other,
                new DataPlaneTls(PoolTls.of(new PoolTls.Files(TestCertificates.of("rogue").certificate(),
                        TestCertificates.of("rogue").privateKey(), TestCertificates.dir().resolve("other/ca.crt"))),
                        engine()))) {
            Throwable f = failureOf(client.push(rogue.address(), spec(KEY, true),
                    image(KEY, shares(true).fill(8), true)).done());
            assertTrue(f.getMessage().contains("TLS handshake"), f.getMessage());
            assertEquals(0, rogue.stats().bytesReceived());
        } finally {
            other.close();
        }
    }

    @Test
    void aHostOfOneNamespace_cannotReadOrWriteAnothersRecords_butItsOwn() throws Exception {
        TestStore guarded = new TestStore(LAYOUT);
        NamespaceAccess rules = NamespaceAccess.of(Map.of(CLIENT, List.of("plane"), "host-b", List.of("other"),
                "pool-manager-*", List.of("*")));
        try (DataPlane manager = NettyDataPlane.serve("127.0.0.1", 0, null, backend(), SILENCE, 1, guarded,
                tls(SERVER, rules));
             DataPlane hostB = NettyDataPlane.client(backend(), SILENCE, 1, tls("host-b", NamespaceAccess.OPEN))) {
            // host-a stores a record of its namespace.
            get(client.push(manager.address(), spec(KEY, true), image(KEY, shares(true).fill(9), true)).done());
            assertTrue(guarded.kept.containsKey(KEY));
            // host-b may not read it, nor write into that namespace.
            Throwable read = failureOf(hostB.fetch(manager.address(), KEY, LAYOUT, shares(true)).done());
            assertTrue(read.getMessage().contains("may not read namespace plane"), read.getMessage());
            RecordKey theirs = ROOT.child(77);
            Throwable write = failureOf(hostB.push(manager.address(), spec(theirs, true),
                    image(theirs, shares(true).fill(10), true)).done());
            assertTrue(write.getMessage().contains("may not write namespace plane"), write.getMessage());
            assertFalse(guarded.kept.containsKey(theirs));
            // host-a reads its own.
            get(client.fetch(manager.address(), KEY, LAYOUT, shares(true)).done());
            assertEquals(2, ((NettyDataPlane) manager).accessDenied());
        } finally {
            guarded.close();
        }
    }

    private static void assertNothingComesBack(InputStream in) {
        try {
            assertEquals(-1, in.read(), "not one byte comes back");
        } catch (IOException e) {
            // The handshake's alert ends the stream: nothing came back either.
            assertTrue(e instanceof javax.net.ssl.SSLException || e instanceof java.net.SocketException,
                    e.toString());
        }
    }

    /** A client's key manager that presents one certificate whatever the server asks for. */
    private static final class PresentingAlways extends X509ExtendedKeyManager {
        private final X509Certificate[] chain;
        private final PrivateKey key;

        PresentingAlways(PoolTls.Files files) throws Exception {
            try (var in = Files.newInputStream(files.certificate())) {
                chain = CertificateFactory.getInstance("X.509").generateCertificates(in).stream()
                        .map(c -> (X509Certificate) c).toArray(X509Certificate[]::new);
            }
            String pem = Files.readString(files.privateKey()).replaceAll("-----[A-Z ]+-----", "")
                    .replaceAll("\\s", "");
            key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder()
                    .decode(pem)));
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return new String[]{"node"};
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return "node";
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, javax.net.ssl.SSLEngine e) {
            return "node";
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return chain;
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return key;
        }
    }

    /** A trust manager that trusts every server: a client without certificate that wants to get that far. */
    private static final class TrustingEveryone implements X509TrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
