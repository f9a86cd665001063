package dev.selene.transport.tls;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * A pool node's certificates, for both of the pool's planes: the cluster (Pekko Artery over TLS) and the data plane
 * (Netty). Three PEM files: the node's certificate chain, its private key (PKCS#8) and the pool's CA. Every peer must
 * present a certificate the CA signed and that is valid today (mutual authentication, both ways); a peer's identity
 * is its certificate's CN. The files are read again when they change (checked at most once a second, when a
 * connection starts), so certificates rotate without a restart: new connections use the new files, open ones keep
 * theirs. Files that do not load (half written, a key that does not match) leave the last good ones in use, with
 * one warning. Refused peers are counted by plane and reason and logged once per plane, reason and peer.
 */
public final class PoolTls {

    private static final Logger LOG = LoggerFactory.getLogger(PoolTls.class);
    /** TLS 1.3 only: every node of a pool runs this library. */
    static final String[] PROTOCOLS = {"TLSv1.3"};
    private static final long CHECK_EVERY_NANOS = 1_000_000_000L;
    private static final int LOGGED_PEERS_KEPT = 10_000;
    private static final Map<Files, PoolTls> SHARED = new ConcurrentHashMap<>();

    /** The three files (paths as given). */
    public record Files(Path certificate, Path privateKey, Path ca) {
        public Files {
            Objects.requireNonNull(certificate, "certificate");
            Objects.requireNonNull(privateKey, "privateKey");
            Objects.requireNonNull(ca, "ca");
        }
    }

    /** Which TLS implementation the data plane runs. */
    public enum Engine {
        /** The JDK's own SSLEngine. */
        JDK,
        /** BoringSSL through netty-tcnative (when its native library loads). */
        OPENSSL;

        /** The setting's spelling. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Which of the pool's planes refused a peer. */
    public enum Plane {
        CLUSTER, DATA;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Why a peer was refused. */
    public enum Reason {
        /** It presented no certificate. */
        NO_CERTIFICATE("presented no certificate"),
        /** Its certificate is not signed by the pool's CA. */
        UNTRUSTED("presented a certificate the pool's CA did not sign"),
        /** Its certificate expired (or is not valid yet). */
        EXPIRED("presented an expired certificate"),
        /** It spoke plain text to a TLS port. */
        NOT_TLS("spoke plain text, not TLS"),
        /** The handshake failed otherwise (protocol, cipher, a connection closed mid-handshake). */
        HANDSHAKE("failed the TLS handshake");

        private final String words;

        Reason(String words) {
            this.words = words;
        }

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        public String words() {
            return words;
        }
    }

    /** A peer's certificate that the trust check refused, with why. */
    public static final class RefusedCertificate extends java.security.cert.CertificateException {
        private final Reason reason;
        private final String subject;

        RefusedCertificate(Reason reason, String subject, String message) {
            super(message);
            this.reason = reason;
            this.subject = subject;
        }

        public Reason reason() {
            return reason;
        }
    }

    /** One refusal, for listeners. */
    public record Refusal(Plane plane, Reason reason, String peer, String detail) {
    }

    private final Files files;
    private final Map<Plane, Map<Reason, LongAdder>> refusals = new EnumMap<>(Plane.class);
    private final Set<String> logged = ConcurrentHashMap.newKeySet();
    private final List<Consumer<Refusal>> listeners = new CopyOnWriteArrayList<>();
    private volatile Loaded loaded;
    private volatile long checkedNanos;

    private PoolTls(Files files) {
        this.files = files;
        for (Plane p : Plane.values()) {
            Map<Reason, LongAdder> m = new EnumMap<>(Reason.class);
            for (Reason r : Reason.values()) {
                m.put(r, new LongAdder());
            }
            refusals.put(p, m);
        }
        this.loaded = load(files, null);
        this.checkedNanos = System.nanoTime();
    }

    /**
     * The node's certificates from {@code files}, one instance per set of files in this process (the cluster and the
     * data plane of a node share it, and so its counts).
     *
     * @throws IllegalArgumentException one line naming the file that does not load and why
     */
    public static PoolTls of(Files files) {
        Objects.requireNonNull(files, "files");
        PoolTls existing = SHARED.get(files);
        if (existing != null) {
            return existing;
        }
        PoolTls made = new PoolTls(files);
        PoolTls raced = SHARED.putIfAbsent(files, made);
        return raced != null ? raced : made;
    }

    public Files files() {
        return files;
    }

    /** The identity (CN) of this node's own certificate. */
    public String identity() {
        return current().identity;
    }

    /** Whether the OpenSSL engine's native library loads here. */
    public static boolean openSslAvailable() {
        return OpenSsl.isAvailable();
    }

    /** The data plane's server context (peers must present a certificate), in {@code engine}. */
    public SslContext serverContext(Engine engine) {
        return current().server(engine);
    }

    /** The data plane's client context (it presents this node's certificate and checks the server's). */
    public SslContext clientContext(Engine engine) {
        return current().client(engine);
    }

    /** The cluster's context (a JDK {@link SSLContext}); {@link #clusterEngine} makes the engines that count. */
    public SSLContext clusterContext() {
        return current().cluster;
    }

    /**
     * A cluster engine: TLS 1.3, a server one requiring the peer's certificate; its handshake's failures are
     * counted and logged as refusals on the cluster plane.
     */
    public javax.net.ssl.SSLEngine clusterEngine(boolean server, String host, int port) {
        javax.net.ssl.SSLEngine e = current().cluster.createSSLEngine(host, port);
        e.setUseClientMode(!server);
        if (server) {
            e.setNeedClientAuth(true);
        }
        e.setEnabledProtocols(PROTOCOLS);
        return new CountingEngine(e, this);
    }

    /** Whether {@code t}'s causes hold this node's own trust check refusing the peer's certificate. */
    public static boolean hasRefusedCertificate(Throwable t) {
        for (; t != null; t = t.getCause()) {
            if (t instanceof RefusedCertificate) {
                return true;
            }
        }
        return false;
    }

    /** The peer a failure names: the subject of the certificate this node refused, or "a peer". */
    static String peerOf(Throwable t) {
        for (; t != null; t = t.getCause()) {
            if (t instanceof RefusedCertificate rc && rc.subject != null) {
                return "a peer with " + rc.subject;
            }
        }
        return "a peer";
    }

    /** The first line of the root cause's message. */
    static String rootLine(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return firstLine(root);
    }

    /** Adds a listener told of every refusal (a metrics counter). */
    public void onRefusal(Consumer<Refusal> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** Refusals counted on {@code plane} for {@code reason} in this process. */
    public long refusals(Plane plane, Reason reason) {
        return refusals.get(plane).get(reason).sum();
    }

    /** Refusals counted on {@code plane}, every reason. */
    public long refusals(Plane plane) {
        long n = 0;
        for (LongAdder a : refusals.get(plane).values()) {
            n += a.sum();
        }
        return n;
    }

    /**
     * Counts a refused peer and logs it, once per plane, reason and peer (the first time; later ones are counted
     * only): {@code peer} names it as the log says it ("from 10.0.0.7", "to 10.0.0.9:7357", "from CN=x"),
     * {@code detail} says what was wrong.
     */
    public void refused(Plane plane, Reason reason, String peer, String detail) {
        refusals.get(plane).get(reason).increment();
        String key = plane + "|" + reason + "|" + peer;
        if (logged.size() < LOGGED_PEERS_KEPT && logged.add(key)) {
            LOG.warn("refused a {} connection {}: the peer {}{} (counted in selene_pool_tls_refused_total; "
                    + "further refusals of this peer for this reason are counted, not logged)", plane.label(), peer,
                    reason.words(), detail == null || detail.isBlank() ? "" : " (" + detail + ")");
        }
        Refusal r = new Refusal(plane, reason, peer, detail);
        for (Consumer<Refusal> l : listeners) {
            try {
                l.accept(r);
            } catch (RuntimeException e) {
                LOG.debug("a refusal listener failed", e);
            }
        }
    }

    /** The CN of the certificate {@code session}'s peer presented; null when it presented none. */
    public static String peerIdentity(SSLSession session) {
        try {
            Certificate[] chain = session.getPeerCertificates();
            if (chain.length == 0 || !(chain[0] instanceof X509Certificate leaf)) {
                return null;
            }
            return commonName(leaf);
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }

    /** The CN of {@code cert}'s subject (the whole subject when it has none). */
    public static String commonName(X509Certificate cert) {
        String dn = cert.getSubjectX500Principal().getName();
        try {
            for (var rdn : new javax.naming.ldap.LdapName(dn).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    return String.valueOf(rdn.getValue());
                }
            }
        } catch (javax.naming.InvalidNameException e) {
            return dn;
        }
        return dn;
    }

    /**
     * Why a failed handshake failed, from its exception: the trust check's own reason where it ran, otherwise told
     * from the exception (plain text, no certificate), {@link Reason#HANDSHAKE} for the rest; null when the peer
     * refused this node (an alert received), which is the peer's refusal to count, not this node's.
     */
    public static Reason reasonOf(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof RefusedCertificate rc) {
                return rc.reason();
            }
        }
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof io.netty.handler.ssl.NotSslRecordException) {
                return Reason.NOT_TLS;
            }
            String m = String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT);
            if (m.contains("received fatal alert") || m.contains("sslv3_alert") || m.contains("tlsv1_alert")
                    || m.contains("tlsv13_alert")) {
                return null;
            }
            if (m.contains("unrecognized ssl message") || m.contains("plaintext connection")) {
                return Reason.NOT_TLS;
            }
            if (m.contains("empty client certificate") || m.contains("null cert chain")
                    || m.contains("peer_did_not_return_a_certificate")) {
                return Reason.NO_CERTIFICATE;
            }
        }
        return Reason.HANDSHAKE;
    }

    private Loaded current() {
        long now = System.nanoTime();
        if (now - checkedNanos < CHECK_EVERY_NANOS) {
            return loaded;
        }
        synchronized (this) {
            if (now - checkedNanos < CHECK_EVERY_NANOS) {
                return loaded;
            }
            checkedNanos = now;
            Loaded was = loaded;
            Stamp stamp = Stamp.of(files);
            if (stamp.equals(was.stamp)) {
                return was;
            }
            try {
                loaded = load(files, stamp);
                LOG.info("pool TLS: read the node's certificate files again ({}, CN={}); new connections use them",
                        files.certificate(), loaded.identity);
            } catch (IllegalArgumentException e) {
                // Keep the last good files; the new ones are looked at again when they change again.
                loaded = was.withStamp(stamp);
                LOG.warn("pool TLS: the certificate files changed but do not load, the ones read before stay in use: "
                        + "{}", e.getMessage());
            }
            return loaded;
        }
    }

    /** What the files were when read: their modification times and sizes. */
    private record Stamp(List<Long> parts) {
        static Stamp of(Files f) {
            List<Long> p = new ArrayList<>(6);
            for (Path path : List.of(f.certificate(), f.privateKey(), f.ca())) {
                try {
                    p.add(java.nio.file.Files.getLastModifiedTime(path).toMillis());
                    p.add(java.nio.file.Files.size(path));
                } catch (IOException e) {
                    p.add(-1L);
                    p.add(-1L);
                }
            }
            return new Stamp(p);
        }
    }

    private Loaded load(Files f, Stamp stamp) {
        Stamp s = stamp != null ? stamp : Stamp.of(f);
        List<X509Certificate> chain = certificates(f.certificate(), "certificate");
        List<X509Certificate> cas = certificates(f.ca(), "ca");
        java.security.PrivateKey key = privateKey(f.privateKey());
        requirePair(chain.get(0), key, f);
        X509ExtendedTrustManager trust = trustManager(cas);
        try {
            return new Loaded(this, s, commonName(chain.get(0)), new Presenting(chain.toArray(X509Certificate[]::new),
                    key), trust);
        } catch (javax.net.ssl.SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("selene.pool.tls: " + f.certificate() + " and " + f.privateKey()
                    + " do not make a usable key pair: " + firstLine(e), e);
        }
    }

    /** A PKCS#8 PEM private key (unencrypted; EC, RSA or Ed25519). */
    private static java.security.PrivateKey privateKey(Path path) {
        requireReadable(path, "private-key");
        String pem;
        try {
            pem = java.nio.file.Files.readString(path);
        } catch (IOException e) {
            throw new IllegalArgumentException("selene.pool.tls.private-key = '" + path + "' cannot be read: "
                    + e.getMessage(), e);
        }
        int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
        int end = pem.indexOf("-----END PRIVATE KEY-----");
        if (begin < 0 || end < begin) {
            throw new IllegalArgumentException("selene.pool.tls.private-key = '" + path + "' is not an unencrypted "
                    + "PKCS#8 PEM key (-----BEGIN PRIVATE KEY-----); openssl pkcs8 -topk8 -nocrypt converts one");
        }
        byte[] der;
        try {
            der = java.util.Base64.getMimeDecoder().decode(pem.substring(begin + 27, end));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("selene.pool.tls.private-key = '" + path + "' is not valid PEM", e);
        }
        for (String alg : List.of("EC", "RSA", "Ed25519", "RSASSA-PSS")) {
            try {
                return java.security.KeyFactory.getInstance(alg).generatePrivate(
                        new java.security.spec.PKCS8EncodedKeySpec(der));
            } catch (java.security.GeneralSecurityException e) {
                // the next algorithm
            }
        }
        throw new IllegalArgumentException("selene.pool.tls.private-key = '" + path + "' holds a key of no known "
                + "algorithm; allowed: EC, RSA, Ed25519");
    }

    /** Checks that {@code key} signs what {@code cert}'s public key verifies. */
    private static void requirePair(X509Certificate cert, java.security.PrivateKey key, Files f) {
        String alg = switch (key.getAlgorithm()) {
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            case "RSASSA-PSS" -> null;
            default -> "SHA256withRSA";
        };
        if (alg == null) {
            return;
        }
        try {
            byte[] probe = "selene".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            java.security.Signature sign = java.security.Signature.getInstance(alg);
            sign.initSign(key);
            sign.update(probe);
            byte[] sig = sign.sign();
            java.security.Signature verify = java.security.Signature.getInstance(alg);
            verify.initVerify(cert.getPublicKey());
            verify.update(probe);
            if (verify.verify(sig)) {
                return;
            }
        } catch (java.security.GeneralSecurityException e) {
            // not a pair
        }
        throw new IllegalArgumentException("selene.pool.tls: the private key " + f.privateKey()
                + " is not the key of the certificate " + f.certificate() + " (CN=" + commonName(cert) + ")");
    }

    /**
     * The node's key and certificate, presented whatever CAs the peer names: a node of another pool is then
     * refused for its certificate (and says so), not for presenting none.
     */
    static final class Presenting extends javax.net.ssl.X509ExtendedKeyManager {
        private static final String ALIAS = "node";
        private final X509Certificate[] chain;
        private final java.security.PrivateKey key;

        Presenting(X509Certificate[] chain, java.security.PrivateKey key) {
            this.chain = chain;
            this.key = key;
        }

        @Override
        public String[] getClientAliases(String keyType, java.security.Principal[] issuers) {
            return new String[]{ALIAS};
        }

        @Override
        public String chooseClientAlias(String[] keyType, java.security.Principal[] issuers, java.net.Socket s) {
            return ALIAS;
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, java.security.Principal[] issuers,
                                              javax.net.ssl.SSLEngine e) {
            return ALIAS;
        }

        @Override
        public String[] getServerAliases(String keyType, java.security.Principal[] issuers) {
            return new String[]{ALIAS};
        }

        @Override
        public String chooseServerAlias(String keyType, java.security.Principal[] issuers, java.net.Socket s) {
            return ALIAS;
        }

        @Override
        public String chooseEngineServerAlias(String keyType, java.security.Principal[] issuers,
                                              javax.net.ssl.SSLEngine e) {
            return ALIAS;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return chain.clone();
        }

        @Override
        public java.security.PrivateKey getPrivateKey(String alias) {
            return key;
        }
    }

    private static List<X509Certificate> certificates(Path path, String setting) {
        requireReadable(path, setting);
        try (InputStream in = java.nio.file.Files.newInputStream(path)) {
            List<X509Certificate> out = new ArrayList<>();
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException("selene.pool.tls." + setting + " = '" + path
                        + "' holds no PEM certificate");
            }
            return out;
        } catch (IOException | java.security.cert.CertificateException e) {
            throw new IllegalArgumentException("selene.pool.tls." + setting + " = '" + path
                    + "' is not a PEM certificate file: " + firstLine(e), e);
        }
    }

    private static void requireReadable(Path path, String setting) {
        if (!java.nio.file.Files.isReadable(path)) {
            throw new IllegalArgumentException("selene.pool.tls." + setting + " = '" + path
                    + "' cannot be read (no such file, or no permission)");
        }
    }

    private static String firstLine(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    private static X509ExtendedTrustManager trustManager(List<X509Certificate> cas) {
        try {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            int i = 0;
            for (X509Certificate ca : cas) {
                ks.setCertificateEntry("ca-" + i++, ca);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            for (var tm : tmf.getTrustManagers()) {
                if (tm instanceof X509ExtendedTrustManager x) {
                    return x;
                }
            }
            throw new IllegalStateException("the JDK offers no X.509 trust manager");
        } catch (java.security.GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("selene.pool.tls.ca: " + firstLine(e), e);
        }
    }

    /**
     * The trust check of every context: the peer's leaf must be valid today (expired is its own reason), then the
     * JDK's PKIX check against the pool's CA. No host name check: the pool's CA signs only the pool's nodes.
     */
    static final class PoolTrust extends X509ExtendedTrustManager {
        private final X509ExtendedTrustManager delegate;

        PoolTrust(X509ExtendedTrustManager delegate) {
            this.delegate = delegate;
        }

        private void check(X509Certificate[] chain, String authType) throws RefusedCertificate {
            if (chain == null || chain.length == 0) {
                throw new RefusedCertificate(Reason.NO_CERTIFICATE, null, "no certificate");
            }
            X509Certificate leaf = chain[0];
            String subject = "CN=" + commonName(leaf);
            try {
                leaf.checkValidity();
            } catch (java.security.cert.CertificateExpiredException e) {
                throw new RefusedCertificate(Reason.EXPIRED, subject, subject + " expired on "
                        + leaf.getNotAfter().toInstant());
            } catch (java.security.cert.CertificateNotYetValidException e) {
                throw new RefusedCertificate(Reason.EXPIRED, subject, subject + " is not valid before "
                        + leaf.getNotBefore().toInstant());
            }
            try {
                // Both directions are checked alike: a node's certificate serves as client and as server.
                delegate.checkClientTrusted(chain, authType);
            } catch (java.security.cert.CertificateException e) {
                throw new RefusedCertificate(Reason.UNTRUSTED, subject, subject + " issued by "
                        + leaf.getIssuerX500Principal().getName() + " is not signed by the pool's CA");
            }
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, java.net.Socket socket)
                throws RefusedCertificate {
            check(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, java.net.Socket socket)
                throws RefusedCertificate {
            check(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, javax.net.ssl.SSLEngine engine)
                throws RefusedCertificate {
            check(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, javax.net.ssl.SSLEngine engine)
                throws RefusedCertificate {
            check(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws RefusedCertificate {
            check(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws RefusedCertificate {
            check(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return delegate.getAcceptedIssuers();
        }
    }

    /** The contexts made from one reading of the files. */
    private static final class Loaded {
        final Stamp stamp;
        final String identity;
        final SSLContext cluster;
        private final Map<Engine, SslContext> servers = new EnumMap<>(Engine.class);
        private final Map<Engine, SslContext> clients = new EnumMap<>(Engine.class);
        private final Presenting keys;
        private final X509TrustManager dataTrust;

        Loaded(PoolTls owner, Stamp stamp, String identity, Presenting keys, X509ExtendedTrustManager trust)
                throws javax.net.ssl.SSLException {
            this.stamp = stamp;
            this.keys = keys;
            this.identity = identity;
            this.dataTrust = new PoolTrust(trust);
            // The cluster's context: a JDK one, so that Pekko's TLS stage can use its engines.
            SslContext jdk = SslContextBuilder.forClient()
                    .keyManager(keys)
                    .trustManager(new PoolTrust(trust))
                    .protocols(PROTOCOLS)
                    .sslProvider(SslProvider.JDK).build();
            this.cluster = ((JdkSslContext) jdk).context();
            // Builds the JDK data-plane contexts now so that a bad key pair fails here, at start or reload.
            server(Engine.JDK);
            client(Engine.JDK);
        }

        private Loaded(Loaded was, Stamp stamp) {
            this.stamp = stamp;
            this.keys = was.keys;
            this.identity = was.identity;
            this.cluster = was.cluster;
            this.dataTrust = was.dataTrust;
            this.servers.putAll(was.servers);
            this.clients.putAll(was.clients);
        }

        Loaded withStamp(Stamp s) {
            return new Loaded(this, s);
        }

        synchronized SslContext server(Engine engine) {
            return servers.computeIfAbsent(engine, e -> build(SslContextBuilder.forServer(keys)
                    .clientAuth(ClientAuth.REQUIRE), e));
        }

        synchronized SslContext client(Engine engine) {
            return clients.computeIfAbsent(engine, e -> build(SslContextBuilder.forClient().keyManager(keys), e));
        }

        private SslContext build(SslContextBuilder b, Engine engine) {
            if (engine == Engine.OPENSSL && !OpenSsl.isAvailable()) {
                throw new IllegalStateException("selene.pool.tls.engine = openssl, but netty-tcnative's BoringSSL "
                        + "does not load here: " + OpenSsl.unavailabilityCause());
            }
            try {
                return b.trustManager(dataTrust).protocols(PROTOCOLS)
                        .sslProvider(engine == Engine.OPENSSL ? SslProvider.OPENSSL : SslProvider.JDK).build();
            } catch (javax.net.ssl.SSLException e) {
                throw new IllegalArgumentException(firstLine(e), e);
            }
        }
    }
}
